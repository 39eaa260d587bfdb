"""What a decision leaves behind: the rest of a replaced item, and its value quoted elsewhere."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from policies.extract.linking.revoking_cue import near_cue
from policies.extract.revision import same_amount, same_day_told_twice, split_restated
from policies.extract.statements import Statement
from policies.language.cues import read_cues
from policies.language.matching import content_terms, opposed, weighted_terms
from policies.language.segment import clauses, shorten, unrelated_clauses, without_clause
from policies.language.values import Value, extract_values, value_signature
from policies.memory.slots import REVISABLE_KINDS, comparable, same_slot, same_unit_change
from policies.rulebook import Joined
from policies.types import RULE_TYPES, Add, MemoryItem, Supersede

if TYPE_CHECKING:
    from policies.extract.linking.context import LinkContext


# Rules of policies/rules/<lang>/revision.yaml read as one pattern of both halves,
# the Chinese half first.
_ZH_FIRST = ("zh", "en")

# A clause pointing back to the one before ("that's for the weekends"): it says how
# the rule applies, no rule of its own.
_POINTS_BACK = Joined("revision", "points_back")

# A bound on the very amount that changed ("低于这个不卖", "I won't go under that"):
# the rest says nothing once its amount is gone.
_BOUNDED_BY_IT = Joined("revision", "bounded_by_it", _ZH_FIRST)

# A clause that only says when a rule applies ("whenever you compare cars for me").
_CONDITION = Joined("revision", "condition")

# What only makes sense next to the clause before it: "先列待办，*再说别的*", "check
# the logs first, *then* ping me".
_THEN = Joined("revision", "then_step", _ZH_FIRST)

# A frame that says when a rule applies, with the rule itself gone: "你以后回复我", "when
# you answer me".
_FRAME = Joined("revision", "reply_frame", _ZH_FIRST)

# Why the withdrawn rule was set ("因为我要转给供应商", "because my printer is old"):
# no rule of its own once the rule is gone.
_REASON = Joined("revision", "reason", _ZH_FIRST)

# Three or more short items in a row: "with title, author, shelf and due date".
_ENUMERATION = re.compile(
    r"(?:[\w'-]+(?: [\w'-]+){0,2}, ){2,}(?:[\w'-]+(?: [\w'-]+){0,2},? )?(?:and|or) [\w'-]+"
    r"(?: [\w'-]+){0,3}"
)


def _standalone_clauses(old: str, rest: str) -> str | None:
    """The clauses left of a withdrawn rule that still stand on their own.

    Not an item of a list the withdrawn clause began ("…as a table with title, author,
    shelf and due date"), not a step sequenced after it ("再说别的"), not the
    bare frame of the rule ("你以后回复我"), not its reason ("因为我要转给供应商").
    """
    sep = "，" if re.search(r"[\u3400-\u9fff]", old) else ", "
    lists = [m.span() for m in _ENUMERATION.finditer(old)]
    parts = [p for p in rest.split(sep) if p.strip()]
    kept: list[str] = []
    for part in parts:
        if _REASON.match(part.strip()):
            break  # what follows a reason explains it too ("因为…，他们那边习惯这样")
        at = old.find(part)
        in_list = len(part.split()) <= 3 and any(a <= at and at + len(part) <= b for a, b in lists)
        before = [c for c in clauses(old[:at]) if c.strip()] if at > 0 else []
        orphaned = bool(_THEN.match(part)) and bool(before) and before[-1] not in parts
        if in_list or orphaned or _FRAME.match(part.strip()):
            continue
        kept.append(part)
    return sep.join(kept) or None


def fold_previous(ctx: LinkContext, st: Statement, old_value: Value, item: MemoryItem) -> None:
    """A revision split over two sentences: "$18k is too tight. We can stretch it:
    $21,500 max", "35 minutes is too tight … let's cap them at 45 minutes". The
    sentence before, quoting the old value, joins the new item instead of
    standing as a current fact of its own."""
    for k, op in enumerate(ctx.ops):
        if not isinstance(op, Add) or ctx.sources.get(op.item.id) != st.index - 1:
            continue
        if op.item.status != "active" or op.item.type == "directive":
            continue
        if any(same_amount(v, old_value) for v in extract_values(op.item.value)):
            del ctx.ops[k]
            sep = "" if re.search(r"[\u3000-\u9fff]$", op.item.value) else " "
            item.value = op.item.value + sep + item.value
            return


def keep_siblings(ctx: LinkContext, old: MemoryItem, st: Statement, new_rule: str = "") -> None:
    """A revocation withdraws the clause it names, not the rules stated beside it:
    "stop starting every invoice email with a greeting" leaves "signs it as 'Accounts
    at Brightside'" in force. A clause about what the new rule settles is no sibling:
    "always send the notes as slides, nobody here reads long documents" replaced by
    "just send a short document" leaves no rule about documents behind."""
    near = {t: w for t, w in near_cue(st).items() if w >= 1}  # words, not characters
    near.update({t: w for t, w in weighted_terms(new_rule).items() if w >= 1})
    rest = unrelated_clauses(old.value, near, contiguous=False)
    if rest is None:
        return
    rest = _standalone_clauses(old.value, rest)
    if rest is None:
        return
    values = extract_values(rest)
    content = sum(1 for w in weighted_terms(rest).values() if w >= 1)
    valued = comparable(values) or any(v.kind == "id" for v in values)
    if not valued and (
        content < 3
        or (old.type in RULE_TYPES and read_cues(rest).requirement < 2)
        or _CONDITION.match(rest)  # "whenever you compare cars for me": no rule alone
    ):
        return
    item = ctx.new_item(st, rest, old.type)
    item.importance = old.importance
    ctx.emit(Add(item))


def keep_unrelated(ctx: LinkContext, old: MemoryItem, st: Statement) -> None:
    """Keep the clauses of a replaced item that the new statement does not touch.

    "the agency lead is Priya, and our campaign code is CMP-7719" replaced by
    "our new agency lead is Omar": the campaign code still holds.
    """
    rest = unrelated_clauses(old.value, content_terms(st.text))
    if rest is not None and opposed(st.text, rest):
        # "keep it strictly formal, full sentences" after "friendly and chatty from
        # here on": the opposite choice goes too, whatever words it shares.
        sep = "，" if re.search(r"[\u3400-\u9fff]", rest) else ", "
        rest = sep.join(c for c in clauses(rest) if not opposed(st.text, c)) or None
    if rest is None:
        return
    values = extract_values(rest)
    content = sum(1 for w in weighted_terms(rest).values() if w >= 1)
    if not (any(v.kind in REVISABLE_KINDS or v.kind == "id" for v in values) or content >= 3):
        return
    if old.type in RULE_TYPES and read_cues(rest).requirement < 2:
        return
    item = ctx.new_item(st, rest, old.type)
    item.importance = old.importance
    ctx.emit(Add(item))


def keep_rest(ctx: LinkContext, old: MemoryItem, changed: Value, st: Statement) -> None:
    """Keep the other facts of a multi-fact sentence whose one value changed.

    "一共12个展位，每个展位3米宽，入口在东门" revised to 14 stalls still
    holds where the entrance is: its other clauses stay, verbatim, as
    an item of their own; only the clause with the old value goes.
    """
    rest = without_clause(old.value, changed)
    # A revision that changes two values of the sentence at once ("make it 8 people
    # and 3 nights" after "6 people, 2 nights") takes both clauses.
    twice = [
        v for v in extract_values(rest or "")
        if (v.kind in REVISABLE_KINDS and same_unit_change(st.strong_values, [v]))
        or same_day_told_twice(old, changed, v, st)
        # A split restated whole ("报价三成、方案七成" after "报价占40%，方案占60%"):
        # every share of it changed, not just the first.
        or (v.kind == "percent" and split_restated(st, old))
    ]  # fmt: skip
    if rest is not None and twice:
        rest = without_clause(rest, twice[0])
    if rest is None or (
        (_POINTS_BACK.match(rest) or _BOUNDED_BY_IT.search(rest)) and not old.value.startswith(rest)
    ):
        # "Max rent is $2,300, that's what our spreadsheet says": the rest only
        # comments on the clause that changed.
        return
    content = sum(1 for w in weighted_terms(rest).values() if w >= 1)
    if content < (1 if comparable(extract_values(rest)) else 3):
        return
    if old.type not in ("fact", "entity", "goal", "state") and not (
        read_cues(rest).requirement >= 2 or comparable(extract_values(rest))
    ):
        return  # what is left of a rule must still say something on its own
    item = ctx.new_item(st, rest, old.type)
    item.importance = old.importance
    ctx.emit(Add(item))


def propagate(ctx: LinkContext, old: MemoryItem, old_value: Value, item: MemoryItem) -> None:
    """A revised value is stale wherever else it is quoted as current.

    E.g. the term changes from 3-year to 2-year: an earlier note that the
    vendor "wants the 3-year commitment" is outdated too.
    """
    if old_value.kind not in REVISABLE_KINDS:
        return
    if old_value.kind == "date" and old_value.number is None:
        return  # a bare weekday recurs ("a Saturday school"): quoting it dates nothing
    sig = value_signature(old_value)
    for other in ctx.live:
        if other.id in ctx.claimed or other.id == old.id or other.type == "directive":
            continue
        # The same value, however written ("$18k is too tight" after "not over $18,000").
        if any(
            (v.key == old_value.key and value_signature(v) == sig)
            or (
                v.kind in ("money", "bound", "qty")
                and v.number is not None
                and v.number == old_value.number
                and same_slot(v, old_value)
            )
            for v in extract_values(other.value)
        ):
            ctx.claimed.add(other.id)
            why = f"quotes the revised value {shorten(old_value.text, 30)}"
            ctx.emit(Supersede(other.id, item), why=why, linker="propagate")
