"""A revocation cue ("stop …", "不用…了") and the rule it names."""

from __future__ import annotations

import re

from policies.extract.limits import limit_holder, limit_text
from policies.extract.linking.context import LinkContext, reason
from policies.extract.linking.effects import keep_siblings
from policies.extract.linking.replacement import replacing_rule
from policies.extract.linking.revoking_cue import (
    cue_names_object,
    named_after_cue,
    named_near,
    names_outdated,
    near_cue,
    revoked_text,
)
from policies.extract.linking.thresholds import REVOKE_MIN
from policies.extract.statements import Statement
from policies.language.cues import PERMISSION, negated, read_cues
from policies.language.matching import same_side, weighted_terms
from policies.language.segment import without_clause
from policies.language.values import Value, extract_values
from policies.memory.slots import REVISABLE_KINDS
from policies.rulebook import Joined
from policies.types import RULE_TYPES, Add, MemoryItem, Revoke, Supersede

# After a revocation cue is removed, these say the sentence still asks for
# something ("不用每天都发了，周末统一发一次就行"), or name the alternative ("stop
# sending voice notes, a short text is easier").
_POSITIVE = Joined.of(
    "revision",
    ("zh", "still_asks"),
    ("en", "still_asks"),
    ("en", "better_named"),
    ("zh", "better_named"),
)
# A quoted name, which the user may withdraw by itself (`_withdraw_quoted`).
_QUOTED = re.compile(r'"([^"]{2,40})"|“([^”]{2,40})”|「([^」]{2,40})」')


class Revocation:
    """A revocation cue ("stop …", "不用…了") and the rule it names."""

    name = "revocation"
    phrase = "the revocation names it"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        # The revoked rule must be named near the cue ("stop *flagging* that",
        # "*SQL*以后就别贴了"), not just somewhere in the message: "scratch it:
        # no ferries on this trip" must not revoke "we'd rather do day trips".
        # "不用/no need to/stop …" mostly revoke things the assistant was told
        # to *do* (directives); a constraint or preference must be named more
        # clearly ("列预算" is not the budget cap).
        if names_outdated(st):
            # "之前改掉的就别写了", "leave out anything that changed": what is withheld
            # is the outdated content, no rule of the user's.
            st.revoke = False
            return True
        target, named = _revoked_rule(ctx, st)
        if target is None and _withdraw_quoted(ctx, st):
            st.consumed = True
            return True
        if target is None:
            st.revoke = False  # "no more TestCase classes": a new rule, not a revocation
            if st.cues.requirement < 2 and not st.strong_values:
                st.consumed = True  # "算了，这些明天再弄": nothing revoked, nothing asked
                token = named_after_cue(st)
                if token is not None:
                    ctx.denials.append((st, token))
            return True
        new_rule = _revoke(ctx, st, target, named)
        keep_siblings(ctx, target, st, f"{new_rule} {limit_text(st.text, target)}".strip())
        st.consumed = True
        return True


def _named_rules(ctx: LinkContext, st: Statement) -> list[MemoryItem]:
    """The user's rules the revocation names near its cue."""
    near = near_cue(st)
    return [
        it for it in ctx.user_items(RULE_TYPES)
        if named_near(near, weighted_terms(it.value), strict=it.type != "directive")
        # "你不用那么简短了" withdraws "回我尽量短一点": the opposite of the revoked
        # word names the rule as well as the word itself.
        or (it.type == "directive" and same_side(revoked_text(st), it.value))
    ]  # fmt: skip


def _revoked_rule(ctx: LinkContext, st: Statement) -> tuple[MemoryItem | None, bool]:
    """The rule the revocation takes back, and whether it names it; `ctx.phrase`
    says how it was found. Failing a named one: the rule on the limit it
    names, the one rule holding the word after the cue, else the latest rule
    (not named)."""
    pool = _named_rules(ctx, st)
    # "Drop the formal register", "别那么正式了": the cue names a side of an
    # antonym pair, and the one rule taking that side is what goes, however
    # little else of it the message repeats.
    sided = [it for it in pool if same_side(revoked_text(st), it.value)]
    target: MemoryItem | None
    if len(sided) == 1:
        target, score = sided[0], REVOKE_MIN
    else:
        target, score = ctx.targets.best(st, pool, with_message=True)
    named = target is not None and score >= REVOKE_MIN
    if not named:
        # "The 200-word limit is off": the rule capping words, however it was worded.
        target = limit_holder(st.text, ctx.user_items(RULE_TYPES))
        ctx.phrase = "the rule on that limit"
        if target is None:
            target = _only_rule_named(st, pool)
            ctx.phrase = "the one rule holding the word after the cue"
        named = target is not None
        if target is None:
            target = _recent_rule(ctx, st)
            ctx.phrase = "nothing named: the latest rule"
    elif len(sided) == 1:
        ctx.phrase = "the cue names its side"
    return target, named


def _revoke(ctx: LinkContext, st: Statement, target: MemoryItem, named: bool) -> str:
    """Take `target` back: superseded by the rule stated next to the revocation,
    or by what the revoking sentence says holds now, else revoked. Returns the
    new rule's text ("" when there is none)."""
    # A rule stated next to the revocation replaces what was revoked, whether or
    # not the revoking sentence also says what to do ("英文版不用给了，…。以后只给中文版").
    replacement = replacing_rule(st, list(ctx.statements), target)
    if replacement is not None:
        replacement.consumed = True
        first, second = sorted((st, replacement), key=lambda x: x.index)
        value = first.text + ("" if re.search(r"[\u3000-\u9fff]$", first.text) else " ")
        ctx.supersede(target, replacement, value + second.text, replacement.type, True)
        return replacement.text
    if _positive_remainder(st):
        ctx.supersede(target, st, st.text, target.type, True)
        span = st.cues.revoke_span
        return st.text[span[1] :] if span else st.text
    ctx.claimed.add(target.id)
    ctx.emit(Revoke(target.id, st.text[:120]), why=reason(ctx.phrase, target.value, st.text))
    # "感叹号随便用吧" lifts a ban and says what holds now, as "stop doing X" does.
    if named and (target.type == "directive" or PERMISSION.search(st.text)):
        ctx.emit(Add(_withdrawal(ctx, st, target)))
    return ""


REVOCATION = Revocation()


def _withdrawal(ctx: LinkContext, st: Statement, revoked: MemoryItem) -> MemoryItem:
    """ "You can stop adding the weather to each reply", "工时估算以后不用写了": the
    instruction is gone, but the recent turns still show the habit it set, so the
    withdrawal itself is what holds now. Task state of this conversation: it
    retires the rule, it is no rule to carry into the next conversation."""
    item = ctx.new_item(st, st.text, "state", slot=revoked.slot)
    item.importance = revoked.importance
    return item


def _withdraw_quoted(ctx: LinkContext, st: Statement) -> bool:
    """ "I'm not sold on "Lights On" anymore", "「晨光」那个名字不要了": a quoted name
    the user withdraws leaves the fact that held it; the rest of that fact stays."""
    done = False
    for m in _QUOTED.finditer(st.text):
        token = m.group(1) or m.group(2) or m.group(3) or ""
        for it in ctx.user_items():
            start = it.value.find(token)
            if start < 0:
                continue
            rest = without_clause(
                it.value, Value("word", "", token, None, start, start + len(token))
            )
            ctx.claimed.add(it.id)
            if rest is None:
                ctx.emit(Revoke(it.id, st.text[:120]), why=f"a quoted name withdrawn: “{token}”")
            else:
                item = ctx.new_item(st, rest, it.type, slot=it.slot)
                item.importance = it.importance
                ctx.emit(Supersede(it.id, item), why=f"a quoted name withdrawn: “{token}”")
            done = True
    return done


def _only_rule_named(st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
    """ "You can stop doing the grid now": the one standing instruction that holds
    the word right after the cue, however long that instruction is."""
    token = named_after_cue(st)
    if token is None:
        return None
    words = {t for t, w in weighted_terms(token).items() if w >= 1}
    hits = [
        it for it in pool
        if it.type == "directive" and words & set(weighted_terms(it.value))
    ]  # fmt: skip
    return hits[0] if len(hits) == 1 else None


def _recent_rule(ctx: LinkContext, st: Statement) -> MemoryItem | None:
    """ "Scratch that" / "算了" names nothing: it means the latest rule."""
    span = st.cues.revoke_span
    rest = st.text[: span[0]] + st.text[span[1] :] if span else st.text
    if any(w >= 1 for w in weighted_terms(rest).values()):
        return None
    # "Ditch the bullet points": the cue itself names what goes, and a rule that
    # does not hold it is not the latest one by default.
    if span is not None and cue_names_object(st.text[span[0] : span[1]]):
        return None
    rules = ctx.user_items(RULE_TYPES)
    recent = [it for it in rules if it.source_ordinal >= ctx.ordinal - 4]
    return max(recent, key=lambda it: it.source_ordinal, default=None)


def _positive_remainder(st: Statement) -> bool:
    """Does the revoking sentence also say what to do instead? ("drop the jokes,
    keep it dry", "不用每题都出了，最后统一出5道就行")"""
    span = st.cues.revoke_span
    if span is None:
        return bool(_POSITIVE.search(st.text))
    rest = st.text[span[1] :].lstrip(" ,;，；、").removeprefix("and ").strip()
    whole = st.text[: span[0]] + st.text[span[1] :]
    return (
        bool(_POSITIVE.search(whole))
        or any(v.kind in REVISABLE_KINDS for v in extract_values(whole))
        or (bool(rest) and read_cues(rest).requirement >= 2 and not negated(rest))
    )
