"""The backbone: the user's own words, in order, as the spine of the context.

DESIGN "The backbone". The user's turns are a small share of a conversation
and carry its requirements, revisions and revocations in order; the model
reads "120 guests" early and "we're 150 now" later and knows which stands.
So the managed context is

    system -> older turns (frozen) -> recent turns (whole) -> recalled -> notes -> tail

- *Frozen* turns (before the session's compaction mark, `summary_upto`):
  each user turn verbatim (byte-identical to the client's message), each
  assistant turn reduced to its digest (`policies.assemble.digest`: the list a later
  pick refers to, values it worked out that the user took up, what it
  committed to), each tool result to its key fields, an older result about
  the same object replaced by the newer one. A user statement the user
  later changed or withdrew is annotated where it stands, in the digest
  message that follows it, so the user's message itself stays verbatim.
- *Recent* turns (from the mark on) are forwarded whole.
- Between compactions each prompt is the previous one plus the new turns:
  the frozen part only changes at a compaction (new turns frozen at its
  end) or when an annotation appears. The frozen part has a fixed room
  (`1 - live_high` of the history budget); when it outgrows it, it is made
  smaller in steps of `evict_step` (so most compactions only append), and
  what goes first is what carries nothing current: chit-chat exchanges,
  then assistant digests, then statements whose every item was superseded,
  then user turns cut to their informative sentences, then the oldest
  exchanges (found again by recall). The first exchange (who and what the
  conversation is about) goes last, unless it is long beside the room.

Invariants (as every assembler): system prompt and tail never cut, tool
call/result pairs kept or dropped together, within the budget unless the
mandatory part alone exceeds it, the client's messages byte-identical when
everything fits.

The package, by step: `units` (the spine), `knowledge` (what the engine
knows of each user turn: the annotations), `render` and `tools` (the frozen
units at their levels: assistant digests, tool key fields), `overflow` (how
the frozen part gives way), `annotations` (new annotations held back),
`candidates` and `notes` (the record, the conflict notes), `assemble` (the
entry point) and `baseline` (the user-turns baseline).
"""

from policies.assemble.backbone.assemble import assemble_backbone
from policies.assemble.backbone.baseline import assemble_user_turns
from policies.assemble.backbone.params import (
    CONDENSED_PREFIX,
    EVIDENCE_CUT,
    NOTE_CHARS,
    NOTE_PREFIX,
    NOTES_HEADER,
    WITHDRAWN_NOTE,
    BackboneParams,
)

__all__ = [
    "CONDENSED_PREFIX",
    "EVIDENCE_CUT",
    "NOTES_HEADER",
    "NOTE_CHARS",
    "NOTE_PREFIX",
    "WITHDRAWN_NOTE",
    "BackboneParams",
    "assemble_backbone",
    "assemble_user_turns",
]
