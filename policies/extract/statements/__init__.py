"""Which sentences of a user message are worth remembering, and as what.

A sentence becomes a `Statement` when its phrasing binds the assistant
(directive/constraint/preference cues), when it carries a concrete value
that belongs to the conversation (dates, amounts, counts, IDs), or when it
sets the scene in the opening message. Questions, chit-chat, other
parties' positions and asides are left to the raw transcript: they are
answered, not remembered.

The package is split by concern: `statement` (the dataclass and shared helpers),
`others` (whose wish it is), `dropped` (what binds nobody), `classify` (type and
importance), `questions` (what a question keeps), `regroup` (sentences joined or
split before reading) and `reading` (the walk over a message). Its cue patterns are
data: `policies/rules/<lang>/statements.yaml`.
"""

from policies.extract.statements.reading import read_statements
from policies.extract.statements.statement import Statement, clean, cue_free_memo

__all__ = ["Statement", "clean", "cue_free_memo", "read_statements"]
