"""The entry point: the ops that restate earlier quantities a message changes relatively.

One change in a sentence is fitted to its holder with the sentence before it as
context; several changes in one sentence are applied only when each, in its own
clause, names the quantity it changes and no two change the same one. When nothing
fits, nothing happens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from policies.extract.relative.amounts import Change
from policies.extract.relative.clauses import (
    LEADING_LINK,
    change_quote,
    clause_span,
    own_text,
    unpunctuated,
)
from policies.extract.relative.holder import Pick, dormant, pick_holder, states_new_value
from policies.extract.relative.reading import read_changes
from policies.extract.relative.restate import (
    derived_clause,
    other_clauses,
    rest_around,
    restated_value,
)
from policies.language.segment import split_sentences
from policies.types import Add, MemoryItem, MemoryOp, Supersede

_LIVE = frozenset({"active", "pending"})
_RULES_OR_FACTS = frozenset({"constraint", "preference", "fact", "goal", "state", "entity"})


@dataclass(slots=True)
class Relative:
    """What the relative changes of one message do: ops, and the sentences they used."""

    ops: list[MemoryOp] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)

    def replace(self, old: MemoryItem, value: str, ordinal: int, new_id: Callable[[], str]) -> None:
        """Supersede `old` by the user's restatement `value` (same type, slot, weight)."""
        self.ops.append(Supersede(old.id, _restatement(old, value, ordinal, new_id)))
        self.targets.add(old.id)

    def absorb(self, other: Relative) -> None:
        """Add what another change reader did with the same message."""
        self.ops += other.ops
        self.sentences += other.sentences
        self.targets |= other.targets

    def untouched(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """`items` no change read so far has superseded."""
        return [it for it in items if it.id not in self.targets]

    def used(self, statement_text: str) -> bool:
        """Was a statement's sentence read as a relative change (so it is no item of its own)?"""
        text = unpunctuated(statement_text)
        return any(unpunctuated(s) in text or text in unpunctuated(s) for s in self.sentences)


def _restatement(
    old: MemoryItem, value: str, ordinal: int, new_id: Callable[[], str]
) -> MemoryItem:
    """A new user item said at `ordinal` in place of (part of) `old`: its type, slot, weight."""
    return MemoryItem(
        id=new_id(),
        type=old.type,
        slot=old.slot,
        value=value,
        source="user",
        source_ordinal=ordinal,
        importance=old.importance,
    )


@dataclass(frozen=True, slots=True)
class _Fit:
    pick: Pick
    new_text: str
    derivation: str
    change: Change


def _in_own_clause(change: Change) -> Change:
    """The change read within its own clause: "红的再加三个，白的减一个" holds two."""
    lo, hi = clause_span(change.sentence, change.start, change.end)
    return replace(change, sentence=change.sentence[lo:hi], start=change.start - lo,
                   end=change.end - lo)  # fmt: skip


def _several_fits(changes: Sequence[Change], pool: Sequence[MemoryItem]) -> list[_Fit]:
    """Several changes in one sentence ("红的再加三个，白的减一个", "two more vans and one
    fewer driver"): each, in its own clause, must name the quantity it changes (its
    noun, or the label a listed count carries) and no two may change the same one;
    otherwise none is applied."""
    spans = [clause_span(c.sentence, c.start, c.end) for c in changes]
    if len(set(spans)) != len(spans):
        return []
    fits: list[_Fit] = []
    for change in map(_in_own_clause, changes):
        pick = pick_holder(change, "", pool)
        if pick is None or pick.level < 3 or states_new_value(change, pick.held):
            return []
        restated = restated_value(change, pick.held)
        if restated is None:
            return []
        fits.append(_Fit(pick, restated[0], restated[1], change))
    held = {(f.pick.item.id, f.pick.held.start) for f in fits}
    return fits if len(held) == len(fits) else []


def _by_item(fits: Sequence[_Fit]) -> list[tuple[MemoryItem, list[_Fit]]]:
    out: dict[str, tuple[MemoryItem, list[_Fit]]] = {}
    for fit in fits:
        out.setdefault(fit.pick.item.id, (fit.pick.item, []))[1].append(fit)
    return list(out.values())


def _derived_together(item: MemoryItem, fits: Sequence[_Fit]) -> str:
    """The clauses holding the changed quantities, each at its new value, with the
    derivations and the sentence that made them: "冲10个、稳20个、保10个（8 + 2、12 − 2：…）"."""
    if len(fits) == 1:
        f = fits[0]
        return derived_clause(item, f.pick.held, f.new_text, f.derivation, f.change)
    own = own_text(item.value)
    spans = [clause_span(own, f.pick.held.start, f.pick.held.end) for f in fits]
    lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    text = own
    for f in sorted(fits, key=lambda f: f.pick.held.start, reverse=True):
        text = text[: f.pick.held.start] + f.new_text + text[f.pick.held.end :]
    grown = len(text) - len(own)
    clause = LEADING_LINK.sub("", text[lo : hi + grown].strip())
    zh = bool(re.search(r"[\u4e00-\u9fff]", fits[0].change.sentence))
    parts = [f.derivation or f"{'+' if f.change.sign > 0 else '−'}{f.change.amount_text}"
             for f in fits]  # fmt: skip
    quotes = [change_quote(f.change) for f in fits]
    if zh:
        return f"{clause}（{'、'.join(parts)}：“{'，'.join(quotes)}”）"
    return f'{clause} ({", ".join(parts)}: "{", ".join(quotes)}")'


def relative_changes(
    message: str,
    live: Sequence[MemoryItem],
    ordinal: int,
    new_id: Callable[[], str],
    history: Sequence[MemoryItem] = (),
) -> Relative:
    """Ops that restate earlier quantities the message changes relatively.

    `history`: every item of the session (all statuses), for quantities a
    supersession left standing (`dormant`).
    """
    out = Relative()
    candidates = [
        it for it in live
        if it.status in _LIVE and it.source == "user" and it.type in _RULES_OR_FACTS
    ]  # fmt: skip
    sentences = split_sentences(message)
    for i, sentence in enumerate(sentences):
        changes = read_changes(sentence)
        if not changes:
            continue
        if len(changes) > 1:
            pool = [it for it in candidates if it.id not in out.targets]
            fits = _several_fits(changes, pool)
            if not fits:
                continue  # which change goes where is unclear
            for old, mine in _by_item(fits):
                out.replace(old, _derived_together(old, mine), ordinal, new_id)
                own = own_text(old.value)
                spans = [clause_span(own, f.pick.held.start, f.pick.held.end) for f in mine]
                rest = rest_around(old, own, min(a for a, _ in spans), max(b for _, b in spans))
                if rest is not None:
                    out.ops.append(Add(_restatement(old, rest, ordinal, new_id)))
            out.sentences.append(sentence)
            continue
        change = changes[0]
        pool = [it for it in candidates if it.id not in out.targets]
        pool += [it for it in dormant(history, change) if it.type in _RULES_OR_FACTS]
        pick = pick_holder(change, sentences[i - 1] if i else "", pool)
        if pick is None or states_new_value(change, pick.held):
            continue
        restated = restated_value(change, pick.held)
        if restated is None:
            continue
        new_text, derivation = restated
        old = pick.item
        out.replace(
            old, derived_clause(old, pick.held, new_text, derivation, change), ordinal, new_id
        )
        rest = other_clauses(old, pick.held)
        if rest is not None:
            out.ops.append(Add(_restatement(old, rest, ordinal, new_id)))
        out.sentences.append(sentence)
    return out
