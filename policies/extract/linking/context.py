"""The state every linker reads and the ops it writes, for one message.

`LinkContext` is what the `Resolver` class used to be, minus its strategies:
the live items, the ops decided so far, the items already claimed by a
decision, and the scoring that picks a statement's target (`targets`, a
`policies.extract.linking.targets.TargetFinder`: `best`, `lexical`). Ops go
through `emit`, which stamps each decision with the linker that made it and a
reason generated from the data, so that the record can say which rule
replaced what and why.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from policies.extract.linking.effects import fold_previous, keep_rest, keep_unrelated, propagate
from policies.extract.linking.targets import TargetFinder
from policies.extract.statements import Statement
from policies.language.matching import key_terms
from policies.language.segment import replaced_text, shorten
from policies.language.values import Value
from policies.memory.slots import changed_pair, derive_slot
from policies.types import (
    RULE_TYPES,
    Confirm,
    Conflict,
    ItemType,
    MemoryItem,
    MemoryOp,
    Revoke,
    Supersede,
)


class Linker(Protocol):
    """One way a statement is linked to the live items it changes.

    `link` either decides (appends ops through `ctx.emit`, claims the items it
    changed) and returns True, or leaves everything as it was and returns False,
    so that the next linker of the chain gets its turn. `name` goes into every
    decision it makes; `phrase` starts the reason given with it."""

    name: str
    phrase: str

    def link(self, ctx: LinkContext, st: Statement) -> bool: ...


@dataclass(slots=True)
class LinkContext:
    """Turns a message's statements into memory ops against the live items."""

    live: Sequence[MemoryItem]
    message: str
    ordinal: int
    new_id: Callable[[], str]
    history: Sequence[MemoryItem] = ()  # every item, superseded ones too (for restores)
    ops: list[MemoryOp] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)
    # The live items by term, and the scoring that picks a statement's target.
    targets: TargetFinder = field(init=False)
    # New item id -> index of the statement it came from (this message only).
    sources: dict[str, int] = field(default_factory=dict)
    # "Scratch the trade-in" when no item holds it: (statement, what it names).
    denials: list[tuple[Statement, str]] = field(default_factory=list)
    # The message's statements (a revocation looks at its neighbours for the replacement).
    statements: Sequence[Statement] = ()
    # The linker deciding now, and the words its reasons start with.
    linker: str = ""
    phrase: str = ""

    def __post_init__(self) -> None:
        self.targets = TargetFinder(self.live, self.message)

    def user_items(self, types: frozenset[str] | None = None) -> list[MemoryItem]:
        return [
            it
            for it in self.live
            if it.source == "user"
            and it.id not in self.claimed
            and (types is None or it.type in types)
        ]

    def supersede(
        self,
        old: MemoryItem,
        st: Statement,
        value: str,
        kind: ItemType,
        revoked: bool = False,
        pair: tuple[Value, Value] | None = None,
    ) -> None:
        """Replace `old` by a new item holding `value`; `pair` is the (new, old) value
        pair revised, when the caller already knows it.

        The new item names what it replaced, so the model reads the old value
        as outdated rather than as a second current one. Not after a
        revocation ("stop flagging that; quote the IC fare instead"): a
        dropped instruction is not repeated, even as history.
        """
        if kind in ("fact", "entity") and old.type in RULE_TYPES:
            kind = old.type  # "压到450元" revises the budget constraint, stays one
        item = self.new_item(st, value, kind, slot=old.slot)
        item.importance = max(item.importance, old.importance)
        # A revocation's reasons ("too much admin for $200 a month") are no new value.
        if revoked:
            pair = None
        elif pair is None:
            pair = changed_pair(value, old.value)
        if not revoked:
            item.replaces = replaced_text(old.value, pair[1] if pair else None, value)
        self.claimed.add(old.id)
        self.emit(Supersede(old.id, item), why=self.because(old, st, pair))
        if pair is not None:
            fold_previous(self, st, pair[1], item)
            keep_rest(self, old, pair[1], st)
            propagate(self, old, pair[1], item)
        elif not revoked:
            keep_unrelated(self, old, st)

    def new_item(
        self, st: Statement, value: str, kind: ItemType, slot: str | None = None
    ) -> MemoryItem:
        item_id = self.new_id()
        self.sources.setdefault(item_id, st.index)
        return MemoryItem(
            id=item_id,
            type=kind,
            slot=slot or derive_slot(kind, value, st.values),
            value=value,
            source="user",
            source_ordinal=self.ordinal,
            importance=st.importance,
        )

    def denied(self, st: Statement, token: str, successor: str) -> MemoryItem:
        item = self.new_item(st, token, "fact")
        item.status = "superseded"
        item.superseded_by = successor
        item.importance = 0.1
        return item

    # -- decisions -----------------------------------------------------------

    def run(self, linker: Linker, st: Statement) -> bool:
        """Let `linker` decide on `st`; what it emits carries its name. A linker that
        hands a statement on to another one (an explicit revision naming no item that
        holds such a value goes to `value_only`) lends it the name for that call."""
        outer = self.linker, self.phrase
        self.linker, self.phrase = linker.name, linker.phrase
        try:
            return linker.link(self, st)
        finally:
            self.linker, self.phrase = outer

    def emit(self, op: MemoryOp, why: str = "", linker: str = "") -> None:
        """Append `op`, a decision named after the linker deciding now (unless given)."""
        if isinstance(op, (Supersede, Revoke, Confirm, Conflict)) and not op.linker:
            op = dataclasses.replace(op, linker=linker or self.linker, why=why or self.phrase)
        self.ops.append(op)

    def emit_all(self, ops: Iterable[MemoryOp]) -> None:
        for op in ops:
            self.emit(op)

    def because(self, old: MemoryItem, st: Statement, pair: tuple[Value, Value] | None) -> str:
        """A short reason for replacing `old`: the values that changed, else the words
        the statement shares with it."""
        return reason(self.phrase, old.value, st.text, pair)


def reason(phrase: str, old: str, new: str, pair: tuple[Value, Value] | None = None) -> str:
    """ "same measure, 120 guests → 150 guests"; without a changed value, the words the
    two texts share ("change cue on the same subject: “venue, deposit”")."""
    if pair is not None:
        return f"{phrase}, {shorten(pair[1].text, 30)} → {shorten(pair[0].text, 30)}"
    shared = _shared_words(old, new)
    return f"{phrase}: “{', '.join(shared)}”" if shared else phrase


def _shared_words(old: str, new: str, most: int = 3) -> list[str]:
    """The longest runs of Chinese characters both texts hold, and the content words
    they share, longest first: what a reader recognises as the common subject."""
    runs: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for block in matcher.get_matching_blocks():
        run = old[block.a : block.a + block.size]
        for piece in _CJK_RUN.findall(run):
            if len(piece) >= 2 and piece not in runs:
                runs.append(piece)
    new_terms = key_terms(new)
    words = [t for t in key_terms(old) if t in new_terms and t.isascii() and not t.isdigit()]
    return sorted(runs + words, key=len, reverse=True)[:most]


_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def named(
    ops: Sequence[MemoryOp], linker: str, phrase: str, items: Sequence[MemoryItem]
) -> list[MemoryOp]:
    """`ops` decided outside the chain (a reader of relative changes, a pick from a
    list), each decision named after `linker`, its reason from the values it changed."""
    by_id = {it.id: it for it in items}
    out: list[MemoryOp] = []
    for op in ops:
        if isinstance(op, (Supersede, Revoke, Confirm, Conflict)) and not op.linker:
            old = by_id.get(op.item_id if isinstance(op, Confirm) else op.old_id)
            why = phrase
            if isinstance(op, Supersede | Conflict) and old is not None:
                why = reason(
                    phrase, old.value, op.item.value, changed_pair(op.item.value, old.value)
                )
            op = dataclasses.replace(op, linker=linker, why=why)
        out.append(op)
    return out
