"""The backbone's parameters (`memory.policy_params.full`) and the words it writes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from policies.assemble.params import RecallParams
from policies.assemble.summary import SummaryParams

NOTE_PREFIX = "[memory] "
CONDENSED_PREFIX = "[condensed] "
NOTES_HEADER = "To confirm with the user:"
WITHDRAWN_NOTE = "(the user later withdrew a rule stated here)"
CHANGED_NOTE = "(the user later changed a value stated here)"
# An annotation says what the statement changed to in the clause that holds
# the new value, when that clause is at most this long: the rest of the later
# statement (why it changed) is paid on every request and is in the context
# anyway while its turn is shown.
NOTE_CHARS = 120
EVIDENCE_CUT = "evidence: room for turns recalled for a question about the past"
# Assistant rendering levels (see `Unit`).
FULL_DIGEST, TOOLS_ONLY = 2, 1


class BackboneParams(BaseModel):
    """Parameters of the backbone preset (`memory.policy_params.full`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Most of the history budget the frozen part may take: the rest is room
    # for the recent turns to grow between compactions. Fixed by the budget,
    # so the frozen part's text does not depend on how far the recent turns
    # have grown since the last compaction.
    frozen_share: float = Field(default=1.0, gt=0, le=1)
    # A compaction freezes the recent turns down to this share (the last
    # exchange always stays whole).
    live_keep: float = Field(default=0.15, ge=0, lt=1)
    # The frozen part is made smaller in steps of this share of the history
    # budget: the next compactions then only append to it.
    evict_step: float = Field(default=0.1, gt=0, le=1)
    # The first exchange (who and what the conversation is about) is the last
    # to go while it takes at most this share of the frozen part's room; a
    # longer one goes in its place, oldest first. At budgets of a few hundred
    # tokens a long opening otherwise holds a fifth of the room while the
    # later turns that revise it go. 1.0: always last. Measured on the
    # fresh* sets (`memproxy eval --policy full`): recall rose on seven sets
    # and fell on three at 0.15 (the same at 0.1); at 0.25 it rose on four
    # and fell on one.
    first_keep_share: float = Field(default=0.15, ge=0, le=1)
    # Leave out, as soon as an exchange is frozen, the assistant digests no
    # later turn builds on (what the frozen part gives up first once it is
    # over its room), instead of only then; the user's words stay until there
    # is no room for them. Kept: a digest holding a figure no user turn up to
    # the next one stated (what the assistant worked out or a tool returned),
    # and the newest reply until the user's next turn says whether it builds
    # on it. The frozen part is smaller and rewritten less often, so the bill
    # under prompt caching drops. Measured against it off (bench/cache_cost.py,
    # cached at 50 % / 10 % / Anthropic): development set 0.373/0.716/0.750
    # -> 0.361/0.680/0.686, bench/scenarios 0.373/0.726/0.740 ->
    # 0.370/0.709/0.722; recall (memproxy eval, 20 sets) 8 checks gained on
    # fresh4/14/17 and 4 lost on fresh13/14/17, stale unchanged; LoCoMo
    # (bench/locomo.py, 3 x 40 questions at 2,000 tokens), whose second
    # speaker's turns carry facts, evidence 0.563 -> 0.521 at the same cost.
    lean_digests: bool = True
    # `lean_digests` applies where the assistant explains: its replies, over
    # the history so far, at least this many times the user's turns in
    # characters. Between two people (a chat log replayed with one speaker as
    # "assistant") both sides state facts of the same length, and a reply no
    # later turn builds on is still what a later question asks about.
    lean_min_reply_ratio: float = Field(default=1.5, ge=0)
    assistant_sentences: int = Field(default=2, ge=0)
    assistant_max_chars: int = Field(default=240, ge=40)
    annotate: bool = True
    # Recalled turns (of exchanges that had to go) take at most this share,
    # out of what the rest leaves, when the current input asks to have what was
    # agreed read back (`policies.language.questions.recap_request`).
    recall_share: float = Field(default=0.15, ge=0, le=1)
    # Whether any other input that is no question about the past (a statement,
    # a work request, chat) gets `recall_share` too. Off: such recalled turns
    # change with every input and are billed again in full under prompt
    # caching. Measured (bench/cache_cost.py, cached at 10%): development set
    # 0.731 -> 0.716, LoCoMo 0.601 -> 0.537.
    recall_every_input: bool = False
    # When the current input asks about the past (`policies.assemble.question`), the
    # recalled turns may take this share, the frozen part giving way from its
    # end for that request only (`policies.assemble.evidence`).
    evidence_share: float = Field(default=0.9, ge=0, le=1)
    notes_share: float = Field(default=0.1, ge=0, le=1)
    # The assistant message left where a reply's digest is empty ("": none;
    # litellm merges consecutive user messages for providers that require
    # alternation, and each placeholder costs ~5 tokens).
    placeholder: str = ""
    # A user turn is condensed to its informative sentences only when that
    # saves at least this share of it (else it stays verbatim, or goes whole).
    # 1.0 (the default): never. A condensed turn is the proxy's text, and the
    # engine cannot tell every value in it that changed later; a turn in the
    # user's own words can hold an old value without presenting it as current.
    # Measured on the fresh* sets, whole-or-nothing recalls as much or more.
    condense_saving: float = Field(default=1.0, ge=0, le=1)
    # More hits than the recall share usually shows: a question about the past
    # gets the evidence share, and the hits are reordered by what it asks.
    recall: RecallParams = RecallParams(max_hits=40)
    # The rolling summary written at each compaction (kept for the
    # inspector, the LLM summariser and recall's dating), and the sentences
    # a condensed user turn keeps.
    summarizer: SummaryParams = SummaryParams()
