"""Where this conversation overrides a long-term item (the seeds' rule 5.3).

When this conversation says something else on the same subject, this
conversation wins and the background line shows both, in order: "usually:
standard shipping; this conversation: express". Another alternative of the same
kind of choice counts ("平时都寄顺丰" / "这次发EMS就行"). A long-term rule the
current input revokes is not shown at all (`revoked_now`).
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.extract.linking import link_statements
from policies.extract.statements import read_statements
from policies.language.cues import negated, read_cues
from policies.language.matching import Idf, content_terms, covered, key_terms, opposed
from policies.language.questions import is_question
from policies.language.text import normalize
from policies.language.value_kinds import choices, other_choice, shared_kinds
from policies.language.values import extract_values
from policies.longterm.items import LongTermItem
from policies.longterm.matching import as_memory_item, same_family, semantic_slot
from policies.longterm.relevance import BackfillQuery
from policies.memory.slots import value_change
from policies.types import RULE_TYPES, Conflict, MemoryItem, Revoke, Supersede

_CURRENT_RULES = RULE_TYPES | {"goal"}
# The revision rules are the costly check: only this many latest items go through it.
_RESOLVER_ITEMS = 20


def revoked_now(rows: Sequence[LongTermItem], text: str) -> set[str]:
    """Long-term rules the current input revokes ("no need for non-smoking this time")."""
    statements = [s for s in read_statements(text, key_terms(text), False) if s.revoke]
    if not statements or not rows:
        return set()
    ops = link_statements(statements, [as_memory_item(r) for r in rows], text, 1, lambda: "new")
    return {op.old_id for op in ops if isinstance(op, Revoke)}


def _differs(old: str, new: str) -> bool:
    """Does `new` say something else than `old` on a shared subject? A change cue
    ("instead", "改用"), a negation on one side only ("never express" / "use express"),
    opposite choices, or another value of the same kind."""
    return (
        read_cues(new).change > 0
        or negated(old) != negated(new)
        or opposed(old, new)
        or value_change(extract_values(new), extract_values(old))[0]
    )


def _other_choice(old: str, new: str) -> bool:
    """Does `new` choose otherwise on a kind of choice `old` settles: another
    alternative ("顺丰" -> "EMS"), or the same one the other way round ("never
    by train" -> "let's take the train")? A rule against one alternative is not
    contradicted by choosing another."""
    if other_choice(old, new) is not None:
        return not negated(old)
    before, now = choices(old), choices(new)
    same = any(before[kind] == now[kind] for kind in shared_kinds(old, new))
    return same and negated(old) != negated(new)


def find_conflicts(
    rows: Sequence[LongTermItem], current: Sequence[MemoryItem], idf: Idf, conflict_min: float
) -> dict[str, MemoryItem]:
    """For each row, the latest item of this conversation that says something else on its
    subject: the same slot; a rule or request about the same subject that differs
    (`_differs`); or one the revision rules read as replacing it."""
    found: dict[str, MemoryItem] = {}
    latest_first = sorted(current, key=lambda i: -i.source_ordinal)
    for row in rows:
        bag = content_terms(row.value)
        for it in latest_first:
            # This conversation's request (its goal) overrides a standing rule as much
            # as a rule does.
            rules = it.type in _CURRENT_RULES and row.type in RULE_TYPES
            about = rules and covered(content_terms(it.value), bag, idf) >= conflict_min
            slot = semantic_slot(row.slot) and it.slot == row.slot
            if (
                # A question on the subject ("any allergies to flag?") asks, it does
                # not restate: it overrides nothing unless it says something else.
                (slot and same_family(it.type, row.type) and not is_question(it.value))
                or (about and _differs(row.value, it.value))
                or (rules and _other_choice(row.value, it.value))
            ):
                found[row.id] = it
                break
    rest = [r for r in rows if r.id not in found]
    if not rest:
        return found
    live = [as_memory_item(r) for r in rest]
    terms = frozenset().union(*(key_terms(r.value) for r in rest))
    # One pass of the revision rules per item, all rows at once, for the latest items.
    for it in latest_first[:_RESOLVER_ITEMS]:
        if not key_terms(it.value) & terms:
            continue
        statements = read_statements(it.value, key_terms(it.value), opening=True)
        ops = link_statements(statements, live, it.value, 1, lambda: "new") if statements else []
        for op in ops:
            if isinstance(op, Supersede | Conflict) and op.old_id not in found:
                found[op.old_id] = it
    return found


def said_now(q: BackfillQuery) -> list[MemoryItem]:
    """The current input as a request of this conversation, when no item holds it:
    the extractor keeps nothing of "这单用韵达寄吧" after another request, yet it is
    what the user says now, and it wins over any long-term rule."""
    text = q.text.strip()
    if not text or any(normalize(it.value) == normalize(text) for it in q.items):
        return []
    latest = max((it.source_ordinal for it in q.items), default=0)
    return [MemoryItem("input", "goal", "input", text, "user", latest + 1)]
