"""What an assembler is given (`AssemblyInput`), and what the layered assembly
reads off it: the current input's text, the turns the summary covers, the items
stated before the current input."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from policies.types import (
    Candidate,
    MemoryItem,
    MemoryLayout,
    PlacedNote,
    RecallHit,
    SummaryChunk,
    TokenCounter,
    Turn,
)


@dataclass(kw_only=True, slots=True)
class AssemblyInput:
    """Everything an assembler may look at; built by the proxy per request."""

    system: list[Turn]
    history: list[Turn]
    tail: list[Turn]
    items: Sequence[MemoryItem] = ()  # all statuses; assemblers use active + pending
    summary: str | None = None  # a plain-text summary (when no chunks are given)
    budget: int
    count: TokenCounter  # text -> tokens, cached by the caller
    current_ordinal: int
    conflict_notes: Sequence[str] = ()
    raw_tokens: int = 0  # the client's messages as sent (for the log only)
    # The rolling summary, chunk by chunk; it covers history before `summary_upto`.
    summary_chunks: Sequence[SummaryChunk] = ()
    summary_upto: int = 0
    # Older turns the recall index found for the current input, best first.
    recalled: Sequence[RecallHit] = ()
    # The current input names a side of the conversation by a name the other
    # side addressed it by ("Thanks, Dana!"): a question about that person is
    # about what they said, whatever its tense (`policies.assemble.recall.SpeakerNames`).
    names_speaker: bool = False
    # The working-memory layout of the previous request (None: lay it out now).
    memory_layout: MemoryLayout | None = None
    # Late sections of earlier requests, to forward again where they went
    # (`policies.assemble.placed`); the assembler checks they still hold.
    placed_notes: Sequence[PlacedNote] = ()
    # The backbone's rendering levels of its frozen exchanges on the previous
    # request (`policies.assemble.backbone`): they only go down, so the frozen part
    # changes only where something new had to give way.
    backbone_levels: Mapping[int, tuple[int, int, str]] = field(default_factory=dict)
    # What each frozen exchange showed on the previous request (first ordinal ->
    # its rendering's signature, the annotations in it): new annotations wait
    # until the prompt changes at their exchange anyway.
    backbone_shown: Mapping[int, tuple[int, tuple[str, ...]]] = field(default_factory=dict)


# A memory item's fields but its versions (a list, snapshotted as a tuple).
_ITEM_FIELDS = attrgetter(*(f.name for f in fields(MemoryItem) if f.name != "versions"))
_INPUT_NAMES = tuple(f.name for f in fields(AssemblyInput))
_INPUT_FIELDS = attrgetter(*_INPUT_NAMES)


def input_key(inp: AssemblyInput) -> tuple[Any, ...]:
    """Every field of `inp` as it is now: equal keys are equal inputs, which an
    assembler (a function of its input and its parameters) lays out alike.

    Sequences and mappings are taken as tuples (in order) and memory items as
    their fields, since the caller changes some of them in place between
    requests (an item's exposure and recency, its own lists and dicts): a key
    kept from an earlier request still says what that request's input was.
    Turns compare by value (their message dicts with `==`), the token counter
    as the same counter, the memory layout as the same object: whether a request
    rebuilt the block is told by the layout object it returns (`is` the one it
    was given, or not), which an equal copy would not keep.
    """
    key: list[Any] = []
    for name, value in zip(_INPUT_NAMES, _INPUT_FIELDS(inp), strict=True):
        if name == "memory_layout":
            key.append((id(value), value))  # the object held: its id stays its own
        elif name == "items":
            key.append(tuple((_ITEM_FIELDS(it), tuple(it.versions)) for it in value))
        elif isinstance(value, Mapping):
            key.append(tuple(value.items()))
        elif isinstance(value, list | tuple):
            key.append(tuple(value))
        else:
            key.append(value)
    return tuple(key)


def input_text(tail: Sequence[Turn]) -> str:
    """The current input: the user's words, or the tool round if none."""
    users = [t.text for t in tail if t.role == "user"]
    return "\n".join(users or [t.text for t in tail])


def older_turns(inp: AssemblyInput) -> Callable[[int], Turn | None]:
    """Lookup of the turns the summary covers (the others are on show already)."""
    upto = since_summary(inp)

    def turn_at(ordinal: int) -> Turn | None:
        i = bisect_left(inp.history, ordinal, 0, upto, key=lambda t: t.ordinal)
        return inp.history[i] if i < upto and inp.history[i].ordinal == ordinal else None

    return turn_at


def since_summary(inp: AssemblyInput) -> int:
    """Index in `history` of the first turn the summary does not cover."""
    if inp.summary_upto <= 0 or not inp.history:
        return 0
    return bisect_left(inp.history, inp.summary_upto, key=lambda t: t.ordinal)


def before_tail(inp: AssemblyInput) -> tuple[list[MemoryItem], list[Candidate]]:
    """Items to consider for memory and replay, and the account of those left out.

    What the current input itself says is forwarded verbatim right after
    (the tail is never cut): restating it in the memory block or in replay
    would only spend the history budget twice on the same words. Such items
    show up on the next request, as new items.
    """
    if not inp.tail:
        return list(inp.items), []
    start = min(t.ordinal for t in inp.tail)
    kept = [it for it in inp.items if it.source_ordinal < start]
    left = [
        Candidate("item", it.id, 0, 0.0, "dropped", "in the current input (forwarded verbatim)")
        for it in inp.items
        if it.source_ordinal >= start and it.status in ("active", "pending")
    ]
    return kept, left
