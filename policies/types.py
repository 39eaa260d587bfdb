"""Plain data shared by every policy.

Policies are pure functions over these dataclasses: they never see HTTP, the
database or litellm. The proxy converts its rows and requests into these types
and persists what the policies return.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "developer", "user", "assistant", "tool"]
ItemType = Literal[
    "directive", "constraint", "fact", "preference", "entity", "goal", "state", "inferred"
]
# The types that bind the assistant (what it is told to do, may not do, or should
# prefer), as against what is merely known: one definition for the extractor's
# linkers and for long-term memory.
RULE_TYPES: frozenset[ItemType] = frozenset({"directive", "constraint", "preference"})
ItemStatus = Literal["active", "pending", "superseded", "revoked", "expired", "archived"]
ItemSource = Literal["user", "assistant", "tool"]
Operation = Literal["add", "update", "revoke", "confirm", "irrelevant"]
Decision = Literal["kept", "compressed", "dropped", "recalled", "replayed", "mandatory"]

# Counts the tokens of one text; injected so policies stay tokenizer-agnostic.
TokenCounter = Callable[[str], int]

# Tokens a chat message costs beyond its content (role, separators): OpenAI's
# documented ~4, also what the evaluation uses.
MESSAGE_OVERHEAD_TOKENS = 4


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation, as the client sent it.

    `raw` is the client's message dict, untouched, so that a kept turn is
    forwarded byte-identical; `text` is its plain text (content parts joined,
    tool-call arguments included) for extraction, search and counting.
    """

    ordinal: int
    role: str
    text: str
    raw: dict[str, Any]
    tokens: int
    tool_call_ids: tuple[str, ...] = ()
    tool_call_id: str | None = None


@dataclass(slots=True)
class ItemVersion:
    """One past state of a memory item (kept for history and for rollback)."""

    ordinal: int  # message ordinal that caused this change
    status: ItemStatus
    value: str
    note: str = ""


@dataclass(slots=True)
class MemoryItem:
    """A unit of structured working memory.

    `value` is verbatim text from the source message (never paraphrased), so
    negations, numbers, dates and IDs survive. `slot` groups values that
    replace one another ("budget", "deadline", ...).
    """

    id: str
    type: ItemType
    slot: str
    value: str
    source: ItemSource
    source_ordinal: int
    importance: float = 0.5
    status: ItemStatus = "active"
    superseded_by: str | None = None
    replaces: str | None = None  # short text of the value it superseded, if any
    pinned: bool = False
    exposure: int = 0
    last_used_ordinal: int = -1
    versions: list[ItemVersion] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Add:
    item: MemoryItem


# Every decision names the linker that made it and why, in words generated from the
# data ("same measure, 120 → 150 guests"), so that the record can say why an item went.
# Left out of equality: two ops doing the same thing are the same op, whoever found it.


@dataclass(frozen=True, slots=True)
class Supersede:
    """`old_id` is replaced by `item` (user correction or newer fact)."""

    old_id: str
    item: MemoryItem
    linker: str = field(default="", compare=False)
    why: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Revoke:
    old_id: str
    reason: str
    linker: str = field(default="", compare=False)
    why: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Confirm:
    item_id: str
    linker: str = field(default="", compare=False)
    why: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Conflict:
    """The input seems to contradict `old_id` without clearly replacing it:
    both stay, `old_id` becomes pending confirmation, and `note` is replayed."""

    old_id: str
    item: MemoryItem
    note: str
    linker: str = field(default="", compare=False)
    why: str = field(default="", compare=False)


MemoryOp = Add | Supersede | Revoke | Confirm | Conflict


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one incoming message does to working memory."""

    operation: Operation
    ops: tuple[MemoryOp, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """What an extractor may know besides the message itself."""

    system_prompt: str
    items: tuple[MemoryItem, ...]  # the session's current items (all statuses)
    user_turn_index: int  # 0 for the first user message of the session
    new_id: Callable[[], str]  # id factory for new items
    # The assistant message this one answers ("" if none): what "the second
    # one" / "就第二个吧" points into.
    previous: str = ""


@dataclass(slots=True)
class Candidate:
    """One thing considered for the forwarded context, and what happened to it."""

    kind: str  # "turn" | "item" | "summary" | "replay" | "conflict"
    ref: str  # turn ordinal or item id
    tokens: int
    score: float
    decision: Decision
    reason: str
    section: str = ""


@dataclass(slots=True)
class Section:
    name: str
    tokens: int = 0
    count: int = 0


@dataclass(slots=True)
class AssembledContext:
    """The messages to forward and the account of how they were chosen."""

    messages: list[dict[str, Any]]
    tokens: int
    budget: int
    sections: list[Section] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    # True when the mandatory part alone exceeds the budget.
    over_budget: bool = False
    # True when the client's messages were forwarded unchanged.
    passthrough: bool = False
    used_item_ids: tuple[str, ...] = ()
    # Lifecycle requests for the proxy (see `policies.assemble.assembly`): summarise the
    # turns before this ordinal (they no longer fit the recent window) ...
    compact_upto: int | None = None
    # ... keeping the rolling summary within this many tokens at this budget
    # (`summary_trimmed` lines had to be left out to fit it this time);
    summary_cap: int = 0
    summary_trimmed: int = 0
    # the working-memory layout this request used, when it rebuilt it;
    memory_layout: MemoryLayout | None = None
    # archived (or forgotten) items the current input mentioned: active again.
    repromoted_ids: tuple[str, ...] = ()
    # Late sections to forward again in place on the next request (the ones
    # this request kept in place, then its own new ones).
    placed_notes: tuple[PlacedNote, ...] = ()
    # How many leading messages are the stable prefix (the same bytes as in
    # the previous request unless a compaction happened): where a provider's
    # cache breakpoint belongs. None: not known.
    stable_messages: int | None = None
    # The backbone's levels per frozen exchange (first ordinal -> user level,
    # assistant level, reason), for the next request (None: not the backbone).
    backbone_levels: dict[int, tuple[int, int, str]] | None = None
    # What each frozen exchange showed (first ordinal -> rendering signature,
    # annotation ids), for the next request (None: not the backbone).
    backbone_shown: dict[int, tuple[int, tuple[str, ...]]] | None = None


@dataclass(frozen=True, slots=True)
class PlacedNote:
    """A late section as it was forwarded, kept in its place for later requests.

    It went out right before turn `before` (the first turn of that request's
    tail). While that turn is in the recent window, later requests forward
    the note again, byte-identical, at the same place, and put only what is
    new in their own late sections: the prompt grows by appending instead of
    rewriting its end (DESIGN "Prompt caching"). It goes when its turn is
    compacted, when the conversation is rewound or edited at that turn, or
    when what it shows is no longer current.
    """

    section: str  # memory_delta | recalled | replay
    before: int  # ordinal of the turn it precedes
    anchor: int  # checksum of that turn's text: an edited turn is another turn
    content: str
    tokens: int
    # The item lines it shows (memory_delta, replay): each must still read so.
    item_lines: tuple[tuple[str, str], ...] = ()
    # The turns it quotes (recalled), and the stale filter it was quoted under.
    ordinals: tuple[int, ...] = ()
    stale_key: int = 0
    # The working-memory layout it extends (memory_delta): a rebuild folds it in.
    layout_ordinal: int = -1


# Graded forgetting (DESIGN "Memory items"): what an item may still occupy.
Tier = Literal["active", "compressible", "discardable", "archived"]


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """What the rolling summary keeps of one turn: its informative sentences, verbatim."""

    ordinal: int
    role: str
    date: str  # the turn's date label ("" when unknown)
    sentences: tuple[str, ...]
    score: float  # informativeness; the lowest goes first when the summary is over its cap
    protected: bool = False  # numbers, dates, IDs, names or a negation: never paraphrased


@dataclass(frozen=True, slots=True)
class SummaryChunk:
    """One compaction step: the summary of turns [start, upto), appended to the others."""

    start: int
    upto: int
    lines: tuple[SummaryLine, ...]
    method: str = "rules"  # which summariser wrote it (rules | llm)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """An older turn the recall index found relevant to the current input."""

    ordinal: int
    role: str
    date: str
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class MemoryLayout:
    """The working-memory block as laid out at the last rebuild (a "rebase").

    Kept between requests so that the block (near the top of the prompt) stays
    byte-identical and cacheable: items added since go to a late "delta"
    section instead; the block is rebuilt at a compaction, when one of its
    items is no longer current, or when the delta outgrows its share.
    """

    stable_ids: tuple[str, ...]  # shown in the block, in display order (anchors first)
    anchor_count: int
    known_ids: frozenset[str]  # live at the rebuild, shown or not: never a delta
    tiers: Mapping[str, Tier]  # forgetting grade of each item at the rebuild
    entity_line: str  # the "entity index" of discardable items ("" if none)
    ordinal: int  # current ordinal at the rebuild
    # Shown by their core clauses only: the block was short of room at the rebuild.
    short_ids: frozenset[str] = frozenset()
