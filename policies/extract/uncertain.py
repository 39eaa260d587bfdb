"""The rule extractor's uncertain links, as questions a model can answer.

The rules decide every link, but some of their decisions rest on little: a
new value of the same measure with no change cue (`implicit`: it may revise
the old value or be a second, separate one — a deposit beside a total, two
people's bookings), a revision naming no subject (`value_only`, `sole_rival`:
the latest or only value of that kind), a rule that seems to contradict an
older one (`conflict`: kept both, the old one pending), and a near miss (a new
value of the same kind and a shared word, added as new because no linker was
sure). `uncertain_links` lists them for one extraction without changing it;
`apply_verdicts` turns a model's answers into the ops it implies. The rules'
own output is untouched: what is asked and answered is a layer on top
(`policies.hybrid`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from policies.extract.extraction import operation_of
from policies.extract.linking.context import reason
from policies.language.matching import key_terms
from policies.language.segment import replaced_text
from policies.language.text import normalize
from policies.language.values import extract_values
from policies.memory.slots import changed_pair, derive_slot, same_unit_change, value_change
from policies.types import (
    RULE_TYPES,
    Add,
    Confirm,
    Conflict,
    Extraction,
    MemoryItem,
    MemoryOp,
    Revoke,
    Supersede,
)

QuestionKind = Literal["added", "linked", "conflict"]
Verdict = Literal["revised", "separate", "withdrawn", "unsure"]
VERDICTS: tuple[Verdict, ...] = ("revised", "separate", "withdrawn", "unsure")

# Linkers whose supersession rests on the kind of value alone, not on a cue
# or on words naming the item.
UNSURE_LINKERS = frozenset({"implicit", "value_only", "sole_rival"})
# The linker name the model's decisions carry (the record, `memproxy inspect`).
MODEL_LINKER = "hybrid_model"
_LIVE = frozenset({"active", "pending"})


@dataclass(frozen=True, slots=True)
class Question:
    """One uncertain link: `new` (this message's item) against `old` (a live item)."""

    ordinal: int  # the message asked about
    kind: QuestionKind  # what the rules did: added `new`, linked it to `old`, flagged a conflict
    op: int  # index of the rules' op in the extraction
    new: MemoryItem
    old: MemoryItem
    linker: str  # the rules' linker ("" for a near miss, which no linker took)

    @property
    def key(self) -> tuple[int, str, str, str, int]:
        """What identifies the question across runs of the rules (item ids differ)."""
        return (self.ordinal, self.kind, self.new.value, self.old.value, self.old.source_ordinal)


def uncertain_links(
    extraction: Extraction, items: Sequence[MemoryItem], ordinal: int
) -> list[Question]:
    """The links of `extraction` (a user message's) the rules were least sure of.

    `items`: the session's items before the message (all statuses)."""
    live = {it.id: it for it in items if it.status in _LIVE}
    targeted = {_target(op) for op in extraction.ops} - {None}
    out: list[Question] = []
    for k, op in enumerate(extraction.ops):
        if isinstance(op, Conflict) and op.old_id in live:
            out.append(Question(ordinal, "conflict", k, op.item, live[op.old_id], op.linker))
        elif isinstance(op, Supersede) and op.linker in UNSURE_LINKERS and op.old_id in live:
            out.append(Question(ordinal, "linked", k, op.item, live[op.old_id], op.linker))
        elif isinstance(op, Add):
            near = _near_miss(op.item, [it for it in live.values() if it.id not in targeted])
            if near is not None:
                out.append(Question(ordinal, "added", k, op.item, near, ""))
    return out


def _target(op: MemoryOp) -> str | None:
    if isinstance(op, Confirm):
        return op.item_id
    if isinstance(op, (Supersede, Revoke, Conflict)):
        return op.old_id
    return None


def _near_miss(new: MemoryItem, pool: Sequence[MemoryItem]) -> MemoryItem | None:
    """The live item a new one most likely revises though no linker linked them: the
    same kind of value, another number of a comparable size, and a shared word or
    the very same unit."""
    if new.source != "user" or new.status != "active" or new.type == "directive":
        return None
    values = extract_values(new.value)
    if not values:
        return None
    words = {t for t in key_terms(new.value) if not t.isdigit()}
    best: MemoryItem | None = None
    best_score = 0.0
    for it in pool:
        if it.source != "user" or it.type == "directive" or it.status != "active":
            continue
        old_values = extract_values(it.value)
        changed, closeness = value_change(values, old_values, precise=True)
        if not changed or closeness <= 0:
            continue
        shared = len(words & {t for t in key_terms(it.value) if not t.isdigit()})
        if not shared and not same_unit_change(values, old_values):
            continue
        score = closeness + shared + 0.01 * it.source_ordinal  # ties go to the newer item
        if score > best_score:
            best, best_score = it, score
    return best


@dataclass(frozen=True, slots=True)
class Decided:
    """A verdict applied: what the record says the model decided."""

    question: Question
    verdict: Verdict
    changed: bool  # the ops differ from the rules' (else the model agreed)

    def as_dict(self, new_id: str, old_id: str) -> dict[str, Any]:
        q = self.question
        ruled = {"added": "added as new", "linked": f"revised by {q.linker}",
                 "conflict": f"flagged by {q.linker}"}[q.kind]  # fmt: skip
        op = {"revised": "supersede", "withdrawn": "revoke", "separate": "separate"}.get(
            self.verdict, "keep"
        )
        return {
            "ordinal": q.ordinal,
            "op": op,
            "old": old_id,
            "new": new_id,
            "linker": MODEL_LINKER,
            "why": f"{self.verdict} (the rules: {ruled})",
        }


def apply_verdicts(
    extraction: Extraction, questions: Sequence[Question], verdicts: Mapping[Any, Verdict]
) -> tuple[Extraction, list[Decided]]:
    """`extraction` with the model's verdicts (by question key) applied.

    revised: the new item replaces the old one (a rule's addition becomes a
    supersession; a conflict is settled as a change); separate: both stand (a
    rule's supersession becomes an addition, its echoes — the rest of the old
    item kept, the old value's quotes marked stale — go with it; a conflict is
    dismissed); withdrawn: the old item is revoked and the new one added;
    unsure, or no verdict: the rules' op stands."""
    ops: list[list[MemoryOp]] = [[op] for op in extraction.ops]
    decided: list[Decided] = []
    taken: set[str] = set()
    for q in questions:
        verdict = verdicts.get(q.key)
        if verdict is None or verdict == "unsure" or q.old.id in taken:
            continue
        rules_op = extraction.ops[q.op]
        replacement = _replacement(q, verdict, rules_op)
        if replacement is None:
            continue
        taken.add(q.old.id)
        changed = not _same(replacement, [rules_op])
        ops[q.op] = replacement
        if changed and q.kind == "linked" and verdict in ("separate", "withdrawn"):
            _drop_echoes(ops, q)
        decided.append(Decided(q, verdict, changed))
    if not decided:
        return extraction, []
    flat = [op for group in ops for op in group]
    applied = Extraction(operation_of(flat), tuple(flat), _reason(extraction.reason, decided))
    return applied, decided


def _replacement(q: Question, verdict: Verdict, rules_op: MemoryOp) -> list[MemoryOp] | None:
    why = f"the model: {verdict}"
    if verdict == "revised":
        if isinstance(rules_op, Supersede):
            agreed = f"{why} ({q.linker}: {rules_op.why})" if rules_op.why else why
            return [dataclasses.replace(rules_op, linker=MODEL_LINKER, why=agreed)]
        pair = changed_pair(q.new.value, q.old.value)
        why = reason(why, q.old.value, q.new.value, pair)
        return [Supersede(q.old.id, _replacing(q.new, q.old), MODEL_LINKER, why)]
    # Both stand: the rules' addition as it was, else the new item on its own.
    kept = (
        rules_op
        if isinstance(rules_op, Add)
        else Add(_standalone(q.new) if q.kind == "linked" else q.new)
    )
    if verdict == "separate":
        return [kept]
    if verdict == "withdrawn":
        return [Revoke(q.old.id, "withdrawn by the user", MODEL_LINKER, why), kept]
    return None


def _replacing(new: MemoryItem, old: MemoryItem) -> MemoryItem:
    """`new` as the successor of `old`: its slot, its rank, and the old value named."""
    pair = changed_pair(new.value, old.value)
    kind = old.type if new.type in ("fact", "entity") and old.type in RULE_TYPES else new.type
    return dataclasses.replace(
        new,
        type=kind,
        slot=old.slot,
        importance=max(new.importance, old.importance),
        replaces=replaced_text(old.value, pair[1] if pair else None, new.value),
        versions=list(new.versions),
    )


def _standalone(new: MemoryItem) -> MemoryItem:
    """`new` as an item of its own: no replaced value, its own slot."""
    return dataclasses.replace(
        new,
        slot=derive_slot(new.type, new.value, extract_values(new.value)),
        replaces=None,
        versions=list(new.versions),
    )


def _drop_echoes(ops: list[list[MemoryOp]], q: Question) -> None:
    """What a supersession the model undid left behind: the old value's quotes marked
    stale by the new item, and the rest of the old item kept as an item of its own."""
    old_text = normalize(q.old.value)
    for k in range(q.op + 1, len(ops)):
        ops[k] = [
            op
            for op in ops[k]
            if not (
                isinstance(op, Supersede) and op.item.id == q.new.id and op.linker == "propagate"
            )
            and not (isinstance(op, Add) and normalize(op.item.value) in old_text)
        ]


def _same(a: Sequence[MemoryOp], b: Sequence[MemoryOp]) -> bool:
    """The same ops apart from who decided them (linker and why do not compare)."""
    return len(a) == len(b) and all(
        type(x) is type(y) and x == y and getattr(x, "item", None) == getattr(y, "item", None)
        for x, y in zip(a, b, strict=True)
    )


def _reason(rules: str, decided: Sequence[Decided]) -> str:
    verdicts = ", ".join(f"{d.verdict} {d.question.kind}" for d in decided)
    return f"{rules}; {MODEL_LINKER}: {verdicts}"
