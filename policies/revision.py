"""Deciding what a new statement does to existing memory.

Order matters: revocations first (they say what goes away, and a sentence
right after often states the replacement), then explicit revisions, then
implicit ones (same kind of value, different number, same subject), then
conflicts (a rule that seems to contradict an older rule without saying it
replaces it), and only then plain additions.

Every decision needs a *target*: the single live item the statement is
about. Targets are chosen by IDF-weighted lexical similarity of the
statement (and, at half weight, of its whole message) to each item, plus a
bonus when both hold a value of the same kind and unit, larger when the
numbers are close. Thresholds keep a generic new rule from replacing
anything at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from policies.contradiction import contradicts, settles
from policies.cues import DECISION, PERMISSION, SELF_CORRECTION, STANDING, negated, read_cues
from policies.limits import limit_holder, limit_text
from policies.matching import (
    Idf,
    content_terms,
    covered,
    key_terms,
    merge_terms,
    opposed,
    same_side,
    similarity,
    weighted_terms,
)
from policies.names import person_names
from policies.recount import recounted_pair, sole_count
from policies.rivals import marks_adjustment, sole_rival_pair
from policies.segment import (
    SELF_FIX,
    clauses,
    replaced_text,
    shorten,
    unrelated_clauses,
    without_clause,
)
from policies.slots import (
    NAMED_SLOTS,
    REVISABLE_KINDS,
    changed_pair,
    comparable,
    derive_slot,
    different_subjects,
    local_context_match,
    named_slot,
    same_amount_verb,
    same_neighbours,
    same_slot,
    same_unit_change,
    value_change,
)
from policies.statements import Statement
from policies.types import (
    Add,
    Confirm,
    Conflict,
    ItemType,
    MemoryItem,
    MemoryOp,
    Revoke,
    Supersede,
)
from policies.value_roles import (
    attribute_clash,
    conditional,
    conditional_before,
    example_spans,
    offer_clash,
    share_clash,
)
from policies.values import (
    Value,
    bound_side,
    extract_values,
    is_split,
    measure,
    measures_compatible,
    numeric_closeness,
    value_signature,
)

_RULE_TYPES: frozenset[str] = frozenset({"directive", "constraint", "preference"})
# After a revocation cue is removed, these say the sentence still asks for
# something ("不用每天都发了，周末统一发一次就行").
_POSITIVE = re.compile(
    r"就行|就可以|就好|即可|直接|统一|改成|改为|换成|只要|也没关系|也行|\bfeel free\b"
    r"|\binstead\b|\bjust\b|\bonly\b|\brather\b"
    # "stop sending voice notes, a short text is easier": the alternative is named
    r"|\b(?:easier|better|simpler|clearer|nicer|prefer(?:red)?)\b|更(?:好|方便|清楚|简单|合适)",
    re.IGNORECASE,
)

EXPLICIT_MIN = 0.15
IMPLICIT_MIN = 0.25
CONFLICT_MIN = 0.2
DUPLICATE_MIN = 0.8
REVOKE_MIN = 0.12
LEXICAL_MIN = 0.06
SUBJECT_ONLY_MIN = 0.35
CHOICE_MIN = 0.2  # a value-less revision of an item that holds a value
VALUE_TARGET_MIN = 0.2  # a revision bringing a value, of an item holding none
NEAR_CHARS = 3  # shared CJK characters that name a directive near a revocation cue
_VALUE_ONLY_KINDS = REVISABLE_KINDS | {"time"}


@dataclass(slots=True)
class Resolver:
    """Turns a message's statements into memory ops against the live items."""

    live: Sequence[MemoryItem]
    message: str
    ordinal: int
    new_id: Callable[[], str]
    history: Sequence[MemoryItem] = ()  # every item, superseded ones too (for restores)
    ops: list[MemoryOp] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)
    # Lexical scores by (statement text, item id, with message context).
    memo: dict[tuple[str, str, bool], float] = field(default_factory=dict)
    idf: Idf = field(init=False)
    message_bag: Mapping[str, float] = field(init=False)
    # term -> ids of live items holding it: only items sharing a term with a
    # statement can be its target, which keeps long sessions cheap.
    index: dict[str, set[str]] = field(init=False)
    # New item id -> index of the statement it came from (this message only).
    sources: dict[str, int] = field(default_factory=dict)
    # "Scratch the trade-in" when no item holds it: (statement, what it names).
    denials: list[tuple[Statement, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.index = {}
        for it in self.live:
            for term in content_terms(it.value):
                self.index.setdefault(term, set()).add(it.id)
            for v in extract_values(it.value):
                if v.kind == "title":  # a rename shares the title's start, not a word
                    self.index.setdefault(_title_key(v), set()).add(it.id)
        self.idf = Idf.from_counts({t: len(ids) for t, ids in self.index.items()}, len(self.live))
        self.message_bag = weighted_terms(_own_words(self.message))

    def _slot_related(self, st: Statement) -> set[str]:
        slot = named_slot(st.text)
        if slot is None or not st.strong_values:
            return set()
        return {it.id for it in self.live if it.slot == slot}

    def _related(self, bag: Mapping[str, float]) -> set[str]:
        related: set[str] = set()
        for term in bag:
            ids = self.index.get(term)
            if ids:
                related |= ids
        return related

    # -- entry point ---------------------------------------------------------

    def resolve(self, statements: list[Statement]) -> list[MemoryOp]:
        for st in statements:
            if st.revoke and not st.consumed:
                self._revoke(st, statements)
        for st in statements:
            if not st.consumed:
                self._place(st)
        self._settle_denials()
        return self.ops

    def _settle_denials(self) -> None:
        """What a revocation named but no item held ("Scratch the trade-in. He's buying
        the Civic for $3,200") is remembered as replaced by the next statement, so that
        quotes of it elsewhere (a recalled question, the summary) read as outdated."""
        for st, token in self.denials:
            successor = next(
                (
                    op.item for op in self.ops
                    if isinstance(op, (Add, Supersede))
                    and self.sources.get(op.item.id) == st.index + 1
                    and op.item.status == "active"
                    # what replaces it is concrete: a value, or a switch ("we'll … instead")
                    and (comparable(extract_values(op.item.value)) or _SWITCH.search(op.item.value))
                ),
                None,
            )  # fmt: skip
            if successor is not None:
                self.ops.append(Add(self._denied(st, token, successor.id)))

    # -- targets -------------------------------------------------------------

    def _user_items(self, types: frozenset[str] | None = None) -> list[MemoryItem]:
        return [
            it
            for it in self.live
            if it.source == "user"
            and it.id not in self.claimed
            and (types is None or it.type in types)
        ]

    def _bag(self, st: Statement, with_message: bool) -> Mapping[str, float]:
        own = content_terms(_own_words(st.text))
        if not with_message:
            return own
        return merge_terms((own, 1.0), (self.message_bag, 0.5))

    def _best(
        self, st: Statement, pool: list[MemoryItem], with_message: bool
    ) -> tuple[MemoryItem | None, float]:
        """The live item `st` most likely talks about, and how sure that is.

        Mostly: how much of the item is mentioned by the statement (and its
        message): a revision restates the old item's subject, not its whole
        text. Partly: plain similarity of the statement to the item.
        """
        bag = self._bag(st, with_message)
        related = self._related(bag) | self._slot_related(st)
        for v in st.strong_values:
            if v.kind == "title":
                related |= self.index.get(_title_key(v), set())
        best: MemoryItem | None = None
        best_score = 0.0
        for rank, item in enumerate(pool):
            if item.id not in related and not _near_same_words(st, item):
                continue
            old_values = extract_values(item.value)
            score = self._lexical(st, item, bag)
            slot_match = _same_named_slot(st, item)
            # Sharing a kind of value is not enough to be about the same thing,
            # unless it is the same counted thing ("120人" → "150人") or the same
            # named slot ("stretch to 42k all in" after "budget is $38,000 all in").
            if (
                score < LEXICAL_MIN
                and not slot_match
                and not same_unit_change(st.strong_values, old_values)
                and not _renamed(st.strong_values, old_values)
                and not _near_same_words(st, item)
            ):
                continue
            if slot_match:
                score += 0.15
            changed, closeness = value_change(st.strong_values, old_values)
            if changed:
                # A revision adjusts a value; an order of magnitude apart ("$5" for
                # gas, "$150" for an inspection) they are most likely different things.
                score += 0.15 + 0.15 * closeness if closeness > 0 else 0.05
                if same_unit_change(st.strong_values, old_values):
                    score += 0.2  # the very same named thing ("Python 3.9" → "Python 3.11")
            if opposed(st.text, item.value):
                score += 0.15
            if item.type == st.type:
                score += 0.03
            score += 0.01 * rank / max(len(pool), 1)  # ties go to the newer item
            if score > best_score:
                best, best_score = item, score
        return best, best_score

    def _lexical(
        self, st: Statement, item: MemoryItem, bag: Mapping[str, float] | None = None
    ) -> float:
        """Word overlap of a statement (or its context `bag`) with an item, 0..1."""
        key = (st.text, item.id, bag is not None)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        own = content_terms(_own_words(st.text))
        item_bag = content_terms(item.value)
        mentioned = covered(bag if bag is not None else own, item_bag, self.idf)
        score = 0.6 * mentioned + 0.4 * similarity(own, item_bag, self.idf)
        self.memo[key] = score
        return score

    # -- revocation ----------------------------------------------------------

    def _revoke(self, st: Statement, statements: list[Statement]) -> None:
        # The revoked rule must be named near the cue ("stop *flagging* that",
        # "*SQL*以后就别贴了"), not just somewhere in the message: "scratch it:
        # no ferries on this trip" must not revoke "we'd rather do day trips".
        # "不用/no need to/stop …" mostly revoke things the assistant was told
        # to *do* (directives); a constraint or preference must be named more
        # clearly ("列预算" is not the budget cap).
        if _names_outdated(st):
            # "之前改掉的就别写了", "leave out anything that changed": what is withheld
            # is the outdated content, no rule of the user's.
            st.revoke = False
            return
        near = _near_cue(st)
        pool = [
            it for it in self._user_items(_RULE_TYPES)
            if _named_near(near, weighted_terms(it.value), strict=it.type != "directive")
            # "你不用那么简短了" withdraws "回我尽量短一点": the opposite of the revoked
            # word names the rule as well as the word itself.
            or (it.type == "directive" and same_side(_revoked_text(st), it.value))
        ]  # fmt: skip
        # "Drop the formal register", "别那么正式了": the cue names a side of an
        # antonym pair, and the one rule taking that side is what goes, however
        # little else of it the message repeats.
        sided = [it for it in pool if same_side(_revoked_text(st), it.value)]
        target: MemoryItem | None
        if len(sided) == 1:
            target, score = sided[0], REVOKE_MIN
        else:
            target, score = self._best(st, pool, with_message=True)
        named = target is not None and score >= REVOKE_MIN
        if not named:
            # "The 200-word limit is off": the rule capping words, however it was worded.
            target = limit_holder(st.text, self._user_items(_RULE_TYPES))
            target = target or self._only_rule_named(st, pool)
            named = target is not None
            target = target or self._recent_rule(st)
        if target is None and self._withdraw_quoted(st):
            st.consumed = True
            return
        if target is None:
            st.revoke = False  # "no more TestCase classes": a new rule, not a revocation
            if st.cues.requirement < 2 and not st.strong_values:
                st.consumed = True  # "算了，这些明天再弄": nothing revoked, nothing asked
                token = _named_after_cue(st)
                if token is not None:
                    self.denials.append((st, token))
            return
        # A rule stated next to the revocation replaces what was revoked, whether or
        # not the revoking sentence also says what to do ("英文版不用给了，…。以后只给中文版").
        replacement = _replacement(st, statements, target)
        new_rule = ""
        if replacement is not None:
            replacement.consumed = True
            first, second = sorted((st, replacement), key=lambda x: x.index)
            value = first.text + ("" if re.search(r"[\u3000-\u9fff]$", first.text) else " ")
            self._supersede(target, replacement, value + second.text, replacement.type, True)
            new_rule = replacement.text
        elif self._positive_remainder(st):
            self._supersede(target, st, st.text, target.type, True)
            span = st.cues.revoke_span
            new_rule = st.text[span[1] :] if span else st.text
        else:
            self.claimed.add(target.id)
            self.ops.append(Revoke(target.id, st.text[:120]))
            # "感叹号随便用吧" lifts a ban and says what holds now, as "stop doing X" does.
            if named and (target.type == "directive" or PERMISSION.search(st.text)):
                self.ops.append(Add(self._withdrawal(st, target)))
        self._keep_siblings(target, st, f"{new_rule} {limit_text(st.text, target)}".strip())
        st.consumed = True

    def _withdrawal(self, st: Statement, revoked: MemoryItem) -> MemoryItem:
        """ "You can stop adding the weather to each reply", "工时估算以后不用写了": the
        instruction is gone, but the recent turns still show the habit it set, so the
        withdrawal itself is what holds now. Task state of this conversation: it
        retires the rule, it is no rule to carry into the next conversation."""
        item = self._new_item(st, st.text, "state", slot=revoked.slot)
        item.importance = revoked.importance
        return item

    def _withdraw_quoted(self, st: Statement) -> bool:
        """ "I'm not sold on "Lights On" anymore", "「晨光」那个名字不要了": a quoted name
        the user withdraws leaves the fact that held it; the rest of that fact stays."""
        done = False
        for m in _QUOTED.finditer(st.text):
            token = m.group(1) or m.group(2) or m.group(3) or ""
            for it in self._user_items():
                start = it.value.find(token)
                if start < 0:
                    continue
                rest = without_clause(
                    it.value, Value("word", "", token, None, start, start + len(token))
                )
                self.claimed.add(it.id)
                if rest is None:
                    self.ops.append(Revoke(it.id, st.text[:120]))
                else:
                    item = self._new_item(st, rest, it.type, slot=it.slot)
                    item.importance = it.importance
                    self.ops.append(Supersede(it.id, item))
                done = True
        return done

    @staticmethod
    def _only_rule_named(st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
        """ "You can stop doing the grid now": the one standing instruction that holds
        the word right after the cue, however long that instruction is."""
        token = _named_after_cue(st)
        if token is None:
            return None
        words = {t for t, w in weighted_terms(token).items() if w >= 1}
        hits = [
            it for it in pool
            if it.type == "directive" and words & set(weighted_terms(it.value))
        ]  # fmt: skip
        return hits[0] if len(hits) == 1 else None

    def _recent_rule(self, st: Statement) -> MemoryItem | None:
        """ "Scratch that" / "算了" names nothing: it means the latest rule."""
        span = st.cues.revoke_span
        rest = st.text[: span[0]] + st.text[span[1] :] if span else st.text
        if any(w >= 1 for w in weighted_terms(rest).values()):
            return None
        # "Ditch the bullet points": the cue itself names what goes, and a rule that
        # does not hold it is not the latest one by default.
        if span is not None and _cue_names_object(st.text[span[0] : span[1]]):
            return None
        rules = self._user_items(_RULE_TYPES)
        recent = [it for it in rules if it.source_ordinal >= self.ordinal - 4]
        return max(recent, key=lambda it: it.source_ordinal, default=None)

    @staticmethod
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

    # -- placement -----------------------------------------------------------

    def _place(self, st: Statement) -> None:
        if st.restore:
            self._restore(st)
            return
        fix = _self_fix(st.text)
        if fix is not None and not st.reported:
            self._place_fixed(st, fix)
            return
        self._place_plain(st)

    def _place_fixed(self, st: Statement, denied: tuple[Value, ...]) -> None:
        """ "X — no wait, Y", "X——不对，Y": the speaker fixed a value within the message.

        It revises an earlier item only if one holds X; otherwise the statement is
        placed on its own merits (its other values, no change cue from the fix),
        and X is remembered as replaced, so that quotes of it read as outdated.
        """
        sigs = {value_signature(v) for v in denied}
        holders = [
            it for it in self._user_items()
            if any(value_signature(v) in sigs for v in extract_values(it.value))
        ]  # fmt: skip
        if holders:
            target = max(holders, key=lambda it: it.source_ordinal)
            self._supersede(target, st, st.text, st.type)
            return
        m = SELF_FIX.search(st.text)
        rest = st.text if m is None else st.text[: m.start()] + " " + st.text[m.end() :]
        # "$260 — no wait, $620, I read the receipt wrong": the admission is about the value
        # fixed here, it revises nothing said before.
        own = read_cues(SELF_CORRECTION.sub(" ", rest)).change
        plain = dataclasses.replace(
            st,
            values=tuple(v for v in st.values if value_signature(v) not in sigs),
            change=own if st.change <= st.cues.change else st.change,
            correction=False,
            contrast=(),
        )
        start = len(self.ops)
        self._place_plain(plain)
        st.consumed = plain.consumed
        successor = next(
            (
                op.item for op in self.ops[start:]
                if isinstance(op, (Add, Supersede)) and op.item.value == st.text
            ),
            None,
        )  # fmt: skip
        if successor is None:
            return
        for v in denied:
            if _memorable_denial(v.text):
                self.ops.append(Add(self._denied(st, v.text, successor.id)))

    def _place_plain(self, st: Statement) -> None:
        if st.reported and not st.cues.agreement:
            # Another party's position never replaces the user's; what they approved
            # or confirmed ("finance approved 95k for media") is news that does.
            self.ops.append(Add(self._new_item(st, st.text, st.type)))
            return
        if _past_account(st.text):
            # "Back then the workshops were on Monday evenings": how things were, which
            # sets nothing now and so replaces nothing.
            self.ops.append(Add(self._new_item(st, st.text, st.type)))
            return
        # A weak cue ("actually", "wait", ", not 16") counts when the sentence
        # also carries a value that differs from the one it revises.
        explicit = st.change >= 2 or (st.change >= 1 and bool(st.strong_values))
        if (st.correction or st.contrast) and self._try_contrast(st):
            return
        if (explicit or st.correction) and self._try_explicit(st):
            return
        if (explicit or st.correction) and self._try_value_only(st):
            return
        if explicit and self._complete_revision(st):
            return
        if self._add_correction(st):
            return
        if self._try_implicit(st):
            return
        if self._try_sole_rival(st):
            return
        if self._try_weekday(st):
            return
        if self._try_choice(st):
            return
        if st.type in ("directive", "constraint") and self._try_conflict(st):
            return
        self.ops.append(Add(self._new_item(st, st.text, st.type)))

    def _try_contrast(self, st: Statement) -> bool:
        """ "I meant Paulina, not Priyanka", "不是蓝卡，是ICT卡", "no more quartz":
        the item holding what is now denied is the one revised.

        When no item holds it (it was said in passing, as a one-off), the
        corrected statement is added and the denied value is remembered as a
        superseded item of its own, so that text quoting it elsewhere (the
        summary, recalled turns) is marked as changed.
        """
        return any(
            self._revise_holder(st, token)
            for token in (_denied_value(st.text, t) for t in st.contrast)
            if _names_something(token)
        )

    def _add_correction(self, st: Statement) -> bool:
        denied = [token for token in st.contrast if _memorable_denial(token)]
        if not (st.correction and denied):
            return False
        item = self._new_item(st, st.text, st.type)
        self.ops.append(Add(item))
        self.ops.extend(Add(self._denied(st, token, item.id)) for token in denied)
        return True

    def _denied(self, st: Statement, token: str, successor: str) -> MemoryItem:
        item = self._new_item(st, token, "fact")
        item.status = "superseded"
        item.superseded_by = successor
        item.importance = 0.1
        return item

    def _revise_holder(self, st: Statement, token: str) -> bool:
        """Revise the item that holds `token`, if one does.

        A token holding a value ("不要75公斤这个目标了") names the item holding that
        value, however it is written there ("目标是减到75公斤").
        """
        named = {
            value_signature(v) for v in extract_values(token)
            if v.kind in REVISABLE_KINDS or v.kind == "id"
        }  # fmt: skip
        # A bare number ("forget the 400 cap") names an amount however it is written
        # in the item ("$400", "400元").
        # So does an amount denied as a cap ("forget $2,300 as the max") an item
        # holding it as a plain amount ("Max rent is $2,300"), and the reverse.
        bare = {
            v.number for v in extract_values(token)
            if v.number is not None
            and (
                v.kind in ("money", "bound")
                or (v.kind == "number"
                    and re.fullmatch(r"[$€£]?\d{1,3}(?:,?\d{3})+|[$€£]?\d{3,}", token))
            )
        }  # fmt: skip
        hits: list[tuple[MemoryItem, Value]] = []
        for it in self._user_items():
            if named or bare:
                held = [
                    v for v in extract_values(it.value)
                    if value_signature(v) in named
                    or (v.kind in ("money", "bound") and v.number in bare)
                ]  # fmt: skip
                if held:
                    hits.append((it, held[0]))
                continue
            m = _token_pattern(token).search(it.value)
            if m is not None:
                hits.append((it, Value("word", "", m.group(0), None, m.start(), m.end())))
        if not named and not bare and not re.fullmatch(r"[\d.]+", token):
            # A plain word denied in a sentence about something else ("the work laptop
            # stays on ethernet, not wifi") is no correction of a fact using that word
            # ("sort out the wifi in the house").
            hits = [(it, v) for it, v in hits if not _other_subject(st.text, token, it.value)]
        if not hits:
            return False
        holders = [it for it, _ in hits]
        best, _ = self._best(st, holders, with_message=True)
        target = best or max(holders, key=lambda it: it.source_ordinal)
        if target.value == st.text:
            return False
        self._supersede(target, st, st.text, st.type)
        held_value = next(v for it, v in hits if it is target)
        if not changed_pair(st.text, target.value):
            self._keep_rest(target, held_value, st)
        return True

    def _try_value_only(self, st: Statement) -> bool:
        """A clear revision that names no subject ("换成10月27号的航班", "sorry, make
        that the 13th"): the latest item holding a value of the same kind, if close."""
        if st.change < 2 and not st.correction:
            return False
        # Only values precise enough to compare ("10月20号", "$38,000"), not "Tuesday".
        # A clock time counts here, under a clear change cue ("改到晚上9点吧", "move it
        # to 7am"): it names the one time said before, whatever words went with it.
        revisable = [
            v for v in st.strong_values
            if v.kind in _VALUE_ONLY_KINDS and (v.number is not None or v.kind == "title")
        ]  # fmt: skip
        if not revisable:
            return False
        if all(v.kind == "time" for v in revisable) and self._complete_revision(st):
            return True  # "6am is too early. Make it 7:15 instead.": one revision
        pool = []
        for it in self._user_items():
            if it.type == "directive":
                continue
            # With nothing but the value to go on, only the very same kind of value counts.
            kinds = {v.kind for v in revisable}
            precise = [
                v for v in extract_values(it.value)
                if v.kind in kinds and (v.number is not None or v.kind == "title")
            ]  # fmt: skip
            changed, closeness = value_change(revisable, precise)
            if (
                changed
                and closeness >= 0.5
                and not different_subjects(st.text, it.value)
                and not _quotes_another_old_value(st, it)
            ):
                pool.append(it)
        if not pool:
            return False
        target = max(pool, key=lambda it: it.source_ordinal)
        self._supersede(target, st, st.text, st.type)
        return True

    def _complete_revision(self, st: Statement) -> bool:
        """A revision split over two sentences the other way round: "On second thought,
        10pm is too late. Make it 9:30 instead.", "10点太晚了。改成9点半吧。": the
        sentence before already replaced the item quoting the old value; the new value
        joins that replacement instead of standing as a rule of its own."""
        for k, op in enumerate(self.ops):
            if not isinstance(op, (Add, Supersede)) or self.sources.get(op.item.id) != st.index - 1:
                continue
            if op.item.status != "active":
                continue
            quoted = extract_values(op.item.value)
            changed, closeness = value_change(st.strong_values, quoted)
            if not changed or closeness <= 0:
                continue
            sep = "" if re.search(r"[\u3000-\u9fff]$", op.item.value) else " "
            joined = op.item.value + sep + st.text
            if isinstance(op, Add):
                # The sentence before quoted the old value ("6am is too early"): the
                # item holding it is what the two sentences revise.
                sigs = {value_signature(v) for v in quoted}
                holders = [
                    it for it in self._user_items()
                    if any(value_signature(v) in sigs for v in extract_values(it.value))
                ]  # fmt: skip
                if holders:
                    del self.ops[k]
                    target = max(holders, key=lambda it: it.source_ordinal)
                    self._supersede(target, st, joined, st.type)
                    return True
            op.item.value = joined
            return True
        return False

    def _try_explicit(self, st: Statement) -> bool:
        target, score = self._best(st, self._user_items(), with_message=True)
        if target is None or score < EXPLICIT_MIN:
            return False
        if _quotes_another_old_value(st, target):
            return False
        if st.change < 2 and (
            not value_change(st.strong_values, extract_values(target.value))[0]
            or (self._lexical(st, target) < EXPLICIT_MIN and not _same_named_slot(st, target))
        ):
            return False  # a weak cue needs a changed value *and* the same subject
        if st.change < 2 and not st.correction and different_subjects(st.text, target.value):
            return False  # "actually, tennis practice is Wednesdays" beside guitar practice
        if (
            not value_change(st.strong_values, extract_values(target.value))[0]
            and not _shares_subject(st.text, target.value)
            and not opposed(st.text, target.value)
            and not (target.slot in NAMED_SLOTS and named_slot(st.text) == target.slot)
        ):
            # "帮我改一下这段…" shares a word or two with its message, not with the item.
            return False
        if (
            comparable(st.strong_values)
            and not st.correction  # "是我记错了" may fix a value written in a way not parsed
            and not any(
                v.kind in REVISABLE_KINDS or v.kind == "time" for v in extract_values(target.value)
            )
            and not _same_named_slot(st, target)
            and not opposed(st.text, target.value)
            and self._lexical(st, target) < VALUE_TARGET_MIN
        ):
            # The reverse: a new value ("签售控制在半小时", "the code is OOPS15 now, 15%
            # off") revises an item holding some value to replace, or one its words
            # clearly name; not one that only shares a name with it ("经纪人陶可的电话是…").
            return False
        if (
            not st.strong_values
            and comparable(extract_values(target.value))
            and self._lexical(st, target) < SUBJECT_ONLY_MIN
        ):
            # "这周开始吃希尔斯了" shares only the subject ("年糕") with "年糕现在4.2公斤":
            # a new value for something else, not a revision of the weight.
            return False
        if (
            comparable(st.strong_values)
            and not value_change(st.strong_values, extract_values(target.value))[0]
            and _shares_only_names(st.text, target.value)
        ):
            # "Dana wants to cut the break to ten minutes" beside "our director is Dana,
            # ten years now": a new value for something the person asked about, no
            # revision of what was said about the person.
            return False
        if self._duplicate(st, target):
            return True
        if self._holds_no_such_value(st, target) and self._try_value_only(st):
            # "Change of plan: make it June 8–9 instead" shares a word with "help me
            # firm up the plan", but revises the dates said before.
            return True
        self._supersede(target, st, st.text, st.type)
        return True

    @staticmethod
    def _holds_no_such_value(st: Statement, target: MemoryItem) -> bool:
        """The statement brings a date, a time or an amount; the item chosen by its words
        holds no such value at all to revise (a limit on an amount counts as one)."""
        if not any(v.kind in _VALUE_ONLY_KINDS for v in st.strong_values):
            return False
        return not any(
            v.kind in _VALUE_ONLY_KINDS or v.kind == "bound" for v in extract_values(target.value)
        )

    def _try_implicit(self, st: Statement) -> bool:
        if not st.strong_values:
            return self._try_duplicate(st)
        # A plain fact does not silently rewrite a rule that quotes a value
        # ("timestamps must be UTC, like 2024-05-01T13:05:00Z").
        pool = [
            it
            for it in self._user_items()
            if value_change(st.strong_values, extract_values(it.value), precise=True)[0]
            # A floor is often put as the case it is met in ("出到两百九我就签"): a
            # condition that is the rule itself, not another role of the amount.
            and (not _other_role(st, it) or _same_floor(st, it))
            and (
                st.type in _RULE_TYPES
                or it.type not in _RULE_TYPES
                or _same_threshold_rule(st, it)  # "we can go to $14,500 max" is a cap too
                or _same_rate(st, it)  # "get a gig symmetrical" revises "we need 500 Mbps"
                or _same_floor(st, it)  # "给到一百八我就租，再低不谈" after "底价185"
                or _estimate_settled(st, it)  # "最后确认14个队" after "大概16支队"
                # A plan stated as a wish ("opening night Friday March 13") is re-set by a
                # plain new value next to the same words ("with March 20 as opening night").
                or (it.type == "preference" and local_context_match(st.text, it.value))
            )
        ]
        # The only cap (or floor) on the same measure: "最多10万元吧" after "预算不超过8万元"
        # needs no shared word. With two such rules live, the words must decide.
        # So does the only other rate of the same sort ("一周更五条" after "每周发3篇").
        thresholds = [it for it in pool if _same_threshold_rule(st, it)]
        rates = [it for it in pool if _same_rate(st, it) or _same_floor(st, it)]
        splits = [it for it in pool if _shares_split(st, it)]
        sole = (
            thresholds if len(thresholds) == 1
            else rates if len(rates) == 1
            else splits if len(splits) == 1
            else []
        )  # fmt: skip
        recount = self._sole_recount(st)
        if recount is not None and not sole:
            # A head count told again as the whole group: no shared word needed.
            self._supersede(recount[0], st, st.text, st.type, pair=recount[1])
            return True
        target, _ = (sole[0], 1.0) if sole else self._best(st, pool, False)
        if target is None:
            return self._try_duplicate(st)
        # The value bonus got it chosen; the words alone must still say it is
        # the same subject, and the numbers must be of a comparable size.
        _, closeness = value_change(st.strong_values, extract_values(target.value))
        same_subject = (
            (
                self._lexical(st, target) >= IMPLICIT_MIN
                or local_context_match(st.text, target.value)
            )
            and (st.change > 0 or _value_clause_shared(st, target))
        ) or (
            _estimate_settled(st, target)
            or _same_named_slot(st, target)
            or _same_threshold_rule(st, target)
            or _same_rate(st, target)
            or _same_floor(st, target)
            or _shares_split(st, target)
            or _renamed(st.strong_values, extract_values(target.value))
        )
        if not same_subject or closeness <= 0 or different_subjects(st.text, target.value):
            return self._try_duplicate(st)
        self._supersede(target, st, st.text, st.type, pair=_settled_pair(st, target))
        return True

    def _sole_recount(self, st: Statement) -> tuple[MemoryItem, tuple[Value, Value]] | None:
        """The item a recount of people replaces (`policies.recount`)."""
        item = sole_count(self._user_items(), exclude=st.text)
        if item is None or _other_role(st, item) or different_subjects(st.text, item.value):
            return None
        pair = recounted_pair(st.text, st.strong_values, item.value)
        return (item, pair) if pair is not None else None

    def _try_sole_rival(self, st: Statement) -> bool:
        """ "Book the van for Saturday March 14 then" after "move day is Saturday March 7":
        a plan adjusted, and only one live value it can adjust (`policies.rivals`)."""
        if " → " in st.text or not marks_adjustment(st.text, st.change):
            return False  # a choice among options is settled by `policies.choices`
        pool = [
            it for it in self._user_items()
            if it.type != "directive" and not _other_role(st, it)
            and not different_subjects(st.text, it.value)
        ]  # fmt: skip
        found = sole_rival_pair(st.text, _asserted(st), pool)
        if found is None or found[0].value == st.text:
            return False
        self._supersede(found[0], st, st.text, st.type, pair=found[1])
        return True

    def _try_weekday(self, st: Statement) -> bool:
        """ "Hold the rehearsals on Wednesday nights then" after "…, with rehearsals on
        Sunday afternoons": a recurring day moved. A bare weekday is too vague to
        revise by its value alone ("piano on Tuesdays" beside "swimming on Thursdays"
        are two things), so it takes both a sentence that says it adjusts the plan
        and the same word right beside the old day, in exactly one item."""
        if " → " in st.text or not (
            marks_adjustment(st.text, st.change) or _CLAUSE_THEN.search(st.text)
        ):
            return False
        days = [v for v in st.strong_values if v.kind == "date" and v.number is None]
        found: list[tuple[MemoryItem, Value, Value]] = []
        for it in self._user_items():
            if it.value == st.text or different_subjects(st.text, it.value):
                continue
            pairs = [
                (nv, ov) for nv in days for ov in extract_values(it.value)
                if ov.kind == "date" and ov.number is None
                and value_signature(ov) != value_signature(nv)
                and same_neighbours(st.text, nv, it.value, ov)
            ]  # fmt: skip
            if pairs:
                found.append((it, *pairs[0]))
        if len(found) != 1:
            return False
        item, nv, ov = found[0]
        if any(value_signature(v) == value_signature(ov) for v in st.values):
            return False  # "Tuesday as well as Saturday": both days hold
        self._supersede(item, st, st.text, st.type, pair=(nv, ov))
        return True

    def _try_choice(self, st: Statement) -> bool:
        """A new choice on the same subject, without a value or a change cue:
        "The lowers are going navy." after "I'm thinking sage green lowers",
        "还是让她上公立小学" after "我们想让她上国际学校"."""
        if (
            st.strong_values
            or st.type not in ("preference", "fact")
            or not DECISION.search(st.text)
        ):
            return False
        pool = [
            it for it in self._user_items(frozenset({"preference", "fact", "goal"}))
            if not comparable(extract_values(it.value)) and DECISION.search(it.value)
        ]  # fmt: skip
        target, _ = self._best(st, pool, with_message=False)
        if target is None or self._lexical(st, target) < CHOICE_MIN:
            return False
        new, old = key_terms(st.text), key_terms(target.value)
        if not (new - old) or not (old - new) or negated(st.text) != negated(target.value):
            return False
        self._supersede(target, st, st.text, st.type)
        return True

    def _try_duplicate(self, st: Statement) -> bool:
        target, _ = self._best(st, self._user_items(), with_message=False)
        return target is not None and self._duplicate(st, target)

    def _duplicate(self, st: Statement, item: MemoryItem) -> bool:
        """A restatement of a live item: confirm it instead of adding a copy."""
        sim = similarity(weighted_terms(st.text), weighted_terms(item.value), self.idf)
        changed, _ = value_change(st.strong_values, extract_values(item.value))
        if sim < DUPLICATE_MIN or changed or negated(st.text) != negated(item.value):
            return False
        self.claimed.add(item.id)
        self.ops.append(Confirm(item.id))
        return True

    def _try_conflict(self, st: Statement) -> bool:
        """A rule that seems to contradict a live rule without saying it replaces it.

        Contradiction: opposite polarity ("never use emojis" / "use emojis"),
        opposite choices ("简短" / "详细"), or another value for the same thing.
        """
        negative = negated(st.text)
        pool = [
            it
            for it in self._user_items(frozenset({"directive", "constraint"}))
            if negated(it.value) != negative
            or opposed(st.text, it.value)
            or value_change(st.strong_values, extract_values(it.value))[0]
        ]
        target = self._same_slot_opposite(st, pool) or self._lexical_conflict(st, pool)
        if target is None or not contradicts(st.text, st.strong_values, target.value):
            return False
        if settles(st.text, target.value):
            # "口语化一点就行" after "用书面语", "from here on, friendly and chatty" after
            # "keep it strictly formal", "you can mention the council now" after "don't
            # mention the council": the opposite, said as what holds now, replaces the
            # rule. Said bare ("回答详细一点" after "回答要简短") it may be a slip or a
            # one-off: kept as a conflict to confirm.
            self._supersede(target, st, st.text, st.type)
            return True
        item = self._new_item(st, st.text, st.type)
        note = (
            f'The user said "{shorten(st.text, 60)}", which may contradict the earlier rule '
            f'"{shorten(target.value, 60)}"; confirm with the user which one applies.'
        )
        self.claimed.add(target.id)
        self.ops.append(Conflict(target.id, item, note))
        return True

    @staticmethod
    def _same_slot_opposite(st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
        """Opposite choices on a named slot, even across languages ("English only" / "用中文")."""
        slot = derive_slot(st.type, st.text, ())
        if slot not in NAMED_SLOTS:
            return None
        hits = [it for it in pool if it.slot == slot and opposed(st.text, it.value)]
        return hits[-1] if hits else None

    def _lexical_conflict(self, st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
        target, _ = self._best(st, pool, with_message=False)
        if target is None:
            return None
        own, old = content_terms(st.text), content_terms(target.value)
        shared = [t for t, w in own.items() if w >= 1 and old.get(t, 0) >= 1]
        # Opposite choices and permissions ("you can use requests now" after
        # "no external libraries") need less overlap than a plain contradiction.
        loose = opposed(st.text, target.value) or bool(PERMISSION.search(st.text))
        needed = (1, CONFLICT_MIN / 2) if loose else (2, CONFLICT_MIN)
        if len(shared) < needed[0] or self._lexical(st, target) < needed[1]:
            return None
        return target

    def _restore(self, st: Statement) -> None:
        """ "Back to the original": the latest revised item gets its old value back.

        The restored item is a new version whose value is the earlier
        verbatim text; the current one is superseded by it, as with any
        revision, so the history stays linear and rollback still works.
        """
        previous = {it.superseded_by: it for it in self.history if it.status == "superseded"}
        revised = [it for it in self._user_items() if it.id in previous]
        if not revised:
            return
        scored = [(self._lexical(st, it), it.source_ordinal, it) for it in revised]
        current = max(scored, key=lambda x: (x[0] >= LEXICAL_MIN, x[1]))[2]
        old = previous[current.id]
        item = self._new_item(st, old.value, old.type, slot=old.slot)
        item.importance = max(old.importance, current.importance)
        item.replaces = replaced_text(current.value, None, old.value)
        self.claimed.add(current.id)
        self.ops.append(Supersede(current.id, item))

    # -- building ops --------------------------------------------------------

    def _supersede(
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
        if kind in ("fact", "entity") and old.type in _RULE_TYPES:
            kind = old.type  # "压到450元" revises the budget constraint, stays one
        item = self._new_item(st, value, kind, slot=old.slot)
        item.importance = max(item.importance, old.importance)
        # A revocation's reasons ("too much admin for $200 a month") are no new value.
        if revoked:
            pair = None
        elif pair is None:
            pair = changed_pair(value, old.value)
        if not revoked:
            item.replaces = replaced_text(old.value, pair[1] if pair else None, value)
        self.claimed.add(old.id)
        self.ops.append(Supersede(old.id, item))
        if pair is not None:
            self._fold_previous(st, pair[1], item)
            self._keep_rest(old, pair[1], st)
            self._propagate(old, pair[1], item)
        elif not revoked:
            self._keep_unrelated(old, st)

    def _fold_previous(self, st: Statement, old_value: Value, item: MemoryItem) -> None:
        """A revision split over two sentences: "$18k is too tight. We can stretch it:
        $21,500 max", "35 minutes is too tight … let's cap them at 45 minutes". The
        sentence before, quoting the old value, joins the new item instead of
        standing as a current fact of its own."""
        for k, op in enumerate(self.ops):
            if not isinstance(op, Add) or self.sources.get(op.item.id) != st.index - 1:
                continue
            if op.item.status != "active" or op.item.type == "directive":
                continue
            if any(_same_amount(v, old_value) for v in extract_values(op.item.value)):
                del self.ops[k]
                sep = "" if re.search(r"[\u3000-\u9fff]$", op.item.value) else " "
                item.value = op.item.value + sep + item.value
                return

    def _keep_siblings(self, old: MemoryItem, st: Statement, new_rule: str = "") -> None:
        """A revocation withdraws the clause it names, not the rules stated beside it:
        "stop starting every invoice email with a greeting" leaves "signs it as 'Accounts
        at Brightside'" in force. A clause about what the new rule settles is no sibling:
        "always send the notes as slides, nobody here reads long documents" replaced by
        "just send a short document" leaves no rule about documents behind."""
        near = {t: w for t, w in _near_cue(st).items() if w >= 1}  # words, not characters
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
            or (old.type in _RULE_TYPES and read_cues(rest).requirement < 2)
            or _CONDITION.match(rest)  # "whenever you compare cars for me": no rule alone
        ):
            return
        item = self._new_item(st, rest, old.type)
        item.importance = old.importance
        self.ops.append(Add(item))

    def _keep_unrelated(self, old: MemoryItem, st: Statement) -> None:
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
        if old.type in _RULE_TYPES and read_cues(rest).requirement < 2:
            return
        item = self._new_item(st, rest, old.type)
        item.importance = old.importance
        self.ops.append(Add(item))

    def _keep_rest(self, old: MemoryItem, changed: Value, st: Statement) -> None:
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
            or _same_day_told_twice(old, changed, v, st)
            # A split restated whole ("报价三成、方案七成" after "报价占40%，方案占60%"):
            # every share of it changed, not just the first.
            or (v.kind == "percent" and _split_restated(st, old))
        ]  # fmt: skip
        if rest is not None and twice:
            rest = without_clause(rest, twice[0])
        if rest is None or (
            (_POINTS_BACK.match(rest) or _BOUNDED_BY_IT.search(rest))
            and not old.value.startswith(rest)
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
        item = self._new_item(st, rest, old.type)
        item.importance = old.importance
        self.ops.append(Add(item))

    def _propagate(self, old: MemoryItem, old_value: Value, item: MemoryItem) -> None:
        """A revised value is stale wherever else it is quoted as current.

        E.g. the term changes from 3-year to 2-year: an earlier note that the
        vendor "wants the 3-year commitment" is outdated too.
        """
        if old_value.kind not in REVISABLE_KINDS:
            return
        if old_value.kind == "date" and old_value.number is None:
            return  # a bare weekday recurs ("a Saturday school"): quoting it dates nothing
        sig = value_signature(old_value)
        for other in self.live:
            if other.id in self.claimed or other.id == old.id or other.type == "directive":
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
                self.claimed.add(other.id)
                self.ops.append(Supersede(other.id, item))

    def _new_item(
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


# "Hold the rehearsals on Wednesday nights then, 7 to 9": "then" closing the clause that
# decides, as a consequence of news just told (not "back then", "until then").
_CLAUSE_THEN = re.compile(
    r"(?<!\bback )(?<!\buntil )(?<!\bby )(?<!\bsince )(?<!\btill )(?<!\beven )(?<!\bjust )"
    r"\bthen\b(?=\s*[,;:—–.!]|\s*$)",
    re.IGNORECASE,
)


# How things were, told as a story: "Back then the workshops were on Mondays", "以前
# 我们都是周一开会". Not when it also says how things are now.
_PAST_FRAME = re.compile(
    r"^\W*(?:(?:oh|and|but|so|well)\W+)?(?:back then|back in the day|in those days|in the old days"
    r"|years ago|when (?:i|we) (?:was|were)|(?:we|i|it|they) used to)\b"
    r"|^\W*(?:以前|那时候|那会儿|当时|当年|过去|早些年)",
    re.IGNORECASE,
)
_NOW = re.compile(
    r"\b(?:now|these days|nowadays|from now|going forward|instead|anymore|no longer|any more)\b"
    r"|现在|如今|以后|今后|改成|改到|换成|不再|这次|今年",
    re.IGNORECASE,
)


def _same_day_told_twice(old: MemoryItem, changed: Value, v: Value, st: Statement) -> bool:
    """ "Saturday, June 7": one day told as a weekday and a date. A new day ("Sunday
    the 15th") replaces both; the date left behind would still say the old day."""
    if not (changed.kind == v.kind == "date" and (changed.number is None) != (v.number is None)):
        return False
    if any(value_signature(x) == value_signature(v) for x in st.values):
        return False  # the statement keeps that one
    near = old.value[max(0, changed.start - len(v.text) - 4) : changed.end + len(v.text) + 4]
    return v.text in near and any(x.kind == "date" for x in st.strong_values)


def _asserted(st: Statement) -> tuple[Value, ...]:
    """The values `st` puts forward, not those it denies ("forget $900 as the catering
    max" puts no $900 forward: it is no new value for another amount)."""
    denied = [t for t in st.contrast if any(ch.isdigit() for ch in t)]
    return tuple(v for v in st.strong_values if not any(v.text in t or t in v.text for t in denied))


def _split_restated(st: Statement, old: MemoryItem) -> bool:
    """Do both the statement and the item give two or more shares (a whole split)?"""
    new = [v for v in st.strong_values if v.kind == "percent"]
    held = [v for v in extract_values(old.value) if v.kind == "percent"]
    return len(new) >= 2 and len(held) >= 2


def _quotes_another_old_value(st: Statement, item: MemoryItem) -> bool:
    """The statement quotes the old value it corrects ("系统里记的850…850是去年的价钱",
    "not $950") and `item` does not hold it: the correction is of that value, wherever
    it was said (a one-off, the assistant's table), not of another number of the user's."""
    quoted = [
        v for token in st.contrast for v in extract_values(token) if v.number is not None
    ]  # fmt: skip
    if not quoted:
        return False
    # Held however it is written there: the same number, or the very words ("不用每天扎了"
    # quotes "每天" of "每天100ml", read there as part of a daily amount).
    numbers = {v.number for v in quoted}
    return not any(v.number in numbers for v in extract_values(item.value)) and not any(
        v.text in item.value for v in quoted
    )


def _past_account(text: str) -> bool:
    return bool(_PAST_FRAME.search(text)) and not _NOW.search(text)


def _other_role(st: Statement, item: MemoryItem) -> bool:
    """Every value `st` could revise in `item` plays another role there or here
    (`policies.value_roles`): an attribute of a noun the other never names ("the
    24-hour clock" / "covering 10 hours"), a price on something for sale beside the
    user's own amount ("was selling a bike for $600" / "budgeting $1,500"), or a case
    under a condition beside a plain value ("if they sign for a year, as low as $22" /
    "Pro at $29"). Only links resting on the value alone consult this; a change cue
    may still name the item."""
    old_values = extract_values(item.value)
    pairs = [
        (nv, ov) for nv in st.strong_values for ov in old_values
        if same_slot(nv, ov) and value_signature(nv) != value_signature(ov)
    ]  # fmt: skip
    if not pairs:
        return False
    case = conditional(st.text) and not conditional(item.value)
    return all(
        attribute_clash(st.text, nv, item.value, ov)
        or share_clash(st.text, nv, item.value, ov)
        or offer_clash(st.text, nv, item.value, ov)
        or (case and conditional_before(st.text, nv))
        for nv, ov in pairs
    )


def _same_named_slot(st: Statement, item: MemoryItem) -> bool:
    """Both name the same kind of setting ("budget", "deadline", ...) and the statement
    holds a value to replace it with."""
    if item.slot not in NAMED_SLOTS or not st.strong_values:
        return False
    return named_slot(st.text) == item.slot


def _near_same_words(st: Statement, item: MemoryItem) -> bool:
    """ "挂三百二十万" / "明天在App上挂308万": Chinese one-character words are no terms,
    so the shared verb before the amounts is what ties them."""
    return bool(st.strong_values) and same_amount_verb(st.text, item.value)


def _same_threshold_rule(st: Statement, item: MemoryItem) -> bool:
    """Two rules bounding the same side ("超过500块的都要留票" / "300以上的都得留票"):
    a conversation rarely keeps two such thresholds, so the newer one replaces."""
    if item.type not in _RULE_TYPES:
        return False
    new = [v for v in st.values if v.kind == "bound"]
    old = [v for v in extract_values(item.value) if v.kind == "bound"]
    return any(
        bound_side(a) == bound_side(b) and measures_compatible(a, b) for a in new for b in old
    )


# The least the user will take, however put: "底价185", "低于这个不租", "给到一百八我就租，
# 再低不谈", "my floor is $185k", "if they offer 180 I'll sign, anything lower and I walk".
_FLOOR = re.compile(
    r"底价|最低价|最低(?:能)?接受|低于[^，。；]{0,6}不(?:卖|租|签|接|谈)"
    r"|再低(?:的话|一点)?(?:就|我就)?(?:算了|不卖|不租|不签|免谈|不谈了?|拉倒|不行)"
    r"|\bfloor(?: price)?\b|\bbottom line\b|\blowest (?:i|we)(?:'ll| will| would) (?:go|accept)\b"
    r"|\b(?:anything|any) (?:lower|less|below(?: that)?)\b[^.;]{0,20}"
    r"\b(?:forget it|no deal|(?:i|we) walk|not selling|pass)\b",
    re.IGNORECASE,
)


def _same_floor(st: Statement, item: MemoryItem) -> bool:
    """Two rules on the least the user will take for the same thing, the newer
    re-set: a sale has one floor, however the user phrases it the second time."""
    if item.type not in _RULE_TYPES or not (_FLOOR.search(st.text) and _FLOOR.search(item.value)):
        return False
    new = [v for v in st.strong_values if v.kind == "money"]
    old = [v for v in extract_values(item.value) if v.kind == "money"]
    return any(a.number != b.number and numeric_closeness(a, b) >= 0.5 for a in new for b in old)


# A cadence of output ("每周发3篇", "一周更五条"): what a publishing plan is paced by.
_OUTPUT_CADENCE = re.compile(r"(?:篇|条|期|集)$")


def _own_words(text: str) -> str:
    """What a statement talks about: not its idioms, nor the examples it gives ("use
    short headed sections, like "Pay", "Health""): an example names no item it revises."""
    for a, b in reversed(example_spans(text)):
        text = text[:a] + " " + text[b:]
    return _IDIOMS.sub(" ", text)


def _rates(values: Sequence[Value]) -> list[Value]:
    """Interest rates ("6.9% APR"), connection speeds ("500 Mbps", "a gig") and
    cadences of output ("每周发3篇")."""
    return [
        v for v in values
        if (v.kind == "percent" and v.unit == "rate") or measure(v) == "mbps"
        or (v.kind == "freq" and _OUTPUT_CADENCE.search(v.text) is not None)
    ]  # fmt: skip


# An amount said per head: "人均800块", "每人就六百五", "$90 per head", "75 a head".
# Not "each": "$15 each" prices an item, and two items' prices are no one standard.
_PER_HEAD_BEFORE = re.compile(
    r"(?:人均|每人|每位|每个人|per (?:head|person))[^，。；,.;\d]{0,8}$", re.I
)
_PER_HEAD_AFTER = re.compile(r"^\s?(?:per (?:head|person)\b|a head\b|/人|一位|一人|每人)", re.I)


def _per_head(text: str) -> list[Value]:
    return [
        v for v in extract_values(text)
        if v.kind == "money"
        and (_PER_HEAD_BEFORE.search(text[max(0, v.start - 12) : v.start])
             or _PER_HEAD_AFTER.search(text[v.end : v.end + 12]))
    ]  # fmt: skip


def _same_rate(st: Statement, item: MemoryItem) -> bool:
    """A rate replaces the rate quoted before ("5.9%" after "6.9% APR", "a gig
    symmetrical" after "at least 500 Mbps", "一周更五条" after "每周发3篇", "人均就
    六百五" after "人均800块"): a conversation rarely tracks two interest rates,
    connection speeds, publishing cadences or spending standards per head at once."""
    new = _rates(st.strong_values) + _per_head(st.text)
    old = _rates(extract_values(item.value)) + _per_head(item.value)
    return any(
        a.number is not None and b.number is not None and a.number != b.number
        and numeric_closeness(a, b) >= 0.5
        for a in new for b in old
    )  # fmt: skip


def _splits(values: Sequence[Value]) -> list[Value]:
    """Shares of one whole between two parties: "60/40", "fifty-fifty", "六四分"."""
    return [v for v in values if v.kind == "percent" and is_split(v)]


def _shares_split(st: Statement, item: MemoryItem) -> bool:
    """A new split of the costs replaces the one said before ("let's do 60/40" after
    "split 50/50 between the families", "改成四六分" after "费用五五分"), in whatever
    words: a conversation rarely divides two different things between two parties."""
    new = _splits(st.strong_values)
    old = _splits(extract_values(item.value))
    return any(a.text != b.text for a in new for b in old)


# A number given as a guess: "大概16支队", "预计40人左右", "about 30 guests".
_ESTIMATE_BEFORE = re.compile(
    r"(?:大概|大约|约|预计|估计|差不多|about|around|roughly|approximately|an estimated"
    r"|maybe|probably)\W{0,2}[^，。,.;；]{0,4}$",
    re.IGNORECASE,
)
_ESTIMATE_AFTER = re.compile(r"^\s*(?:左右|上下|or so|-ish)", re.IGNORECASE)
# How it turned out: "最后确认", "实际来了", "we ended up with", "the final count".
_SETTLED_COUNT = re.compile(
    r"最后|最终|确认|确定|定了|实际|结果|\bconfirmed\b|\bfinal\b|\bin the end\b"
    r"|\bended up\b|\bturned out\b|\bactually\b",
    re.IGNORECASE,
)


def _estimated(text: str, v: Value) -> bool:
    return bool(
        _ESTIMATE_BEFORE.search(text[max(0, v.start - 12) : v.start])
        or _ESTIMATE_AFTER.match(text[v.end : v.end + 6])
    )


def _estimate_settled(st: Statement, item: MemoryItem) -> bool:
    """A count first given as a guess ("大概会有16支队", "about 30 guests") and now as
    it turned out ("最后确认是14个队", "we ended up with 26"): the same counted thing,
    a settled number, replaces the guess, whatever words go with either."""
    return _settled_pair(st, item) is not None


def _settled_pair(st: Statement, item: MemoryItem) -> tuple[Value, Value] | None:
    """The (settled, guessed) pair of `_estimate_settled`, if there is one."""
    if not _SETTLED_COUNT.search(st.text):
        return None
    new = [v for v in st.strong_values if v.kind == "qty" and not _estimated(st.text, v)]
    old = [v for v in extract_values(item.value) if v.kind == "qty" and _estimated(item.value, v)]
    return next(
        ((a, b) for a in new for b in old if same_unit_change([a], [b])),
        None,
    )


# What ends a clause: the words inside one clause are about the value in it.
# A colon is left out: "For the spring show: it's on May 3" heads its clause.
_CLAUSE_END = re.compile(r"[，,。;；!?！？—\n]|\.(?=\s|$)")


# A pronoun points back to the clause before: "My sitter is Tara, I pay her $18 an hour".
_PRONOUN = re.compile(r"\b(?:he|him|his|she|her|they|them|their|it|its)\b|他|她|它", re.IGNORECASE)


def _clause_terms(text: str, v: Value, back: bool = False) -> set[str]:
    """Content words of the clause holding `v` (its value text blanked out); with `back`,
    also of the clause before when this one refers to it by a pronoun."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, v.start)]
    lo = ends[-1] if ends else 0
    if back and len(ends) > 0 and _PRONOUN.search(text[lo : v.start]):
        lo = ends[-2] if len(ends) > 1 else 0
    m = _CLAUSE_END.search(text, v.end)
    hi = m.start() if m else len(text)
    clause = text[lo : v.start] + " " + text[v.end : hi]
    return {t for t, w in weighted_terms(clause).items() if w >= 1}


def _value_clause_shared(st: Statement, item: MemoryItem) -> bool:
    """Said with no change cue, a new value revises an old one only when a word of its
    own clause is also in the old value's clause ("the shop opens at 8am" / "the shop
    opens at 7am"). A word shared from another clause names who or where, not what is
    set: "write check-in from 3pm, Rosa can't clean six rooms in two hours" shares Rosa
    with "Rosa arrives at 7:30", yet a check-in time is no arrival time; "刚跟老陈打完电话，
    …两周内打完" changes none of the hours 老陈 offered."""
    if _near_same_words(st, item):
        return True  # the same one-character verb before both amounts ("挂…万")
    old_values = extract_values(item.value)
    return any(
        _clause_terms(st.text, nv) & _clause_terms(item.value, ov, back=True)
        for nv in st.strong_values for ov in old_values
        if same_slot(nv, ov) and value_signature(nv) != value_signature(ov)
    )  # fmt: skip


def _shares_only_names(a: str, b: str) -> bool:
    """Do two texts share words, all of them from the names of people in either?"""
    shared = key_terms(a) & key_terms(b)
    if not shared:
        return False
    names = key_terms(" ".join(person_names(a) + person_names(b)))
    return shared <= names


def _shares_subject(a: str, b: str) -> bool:
    """Do two texts share a word (or bigram), or at least two content characters?
    ("四口人的量" / "用量按一人份": 量, 人; "我觉得太平了" / "我也觉得": only 觉)."""
    if key_terms(a) & key_terms(b):
        return True
    chars_a = {t for t, w in weighted_terms(a).items() if w < 1 and t != "得"}
    chars_b = {t for t, w in weighted_terms(b).items() if w < 1}
    return len(chars_a & chars_b) >= 2


def _title_core(v: Value) -> str:
    return re.sub(r"[《》“”\"'「」\s]", "", v.text).casefold()


def _title_key(v: Value) -> str:
    return "\x00title:" + _title_core(v)[:2]


def _renamed(new: Sequence[Value], old: Sequence[Value]) -> bool:
    """A title that extends or shortens the old one ("《雾港谜案》" after "暂定《雾港》"):
    the same work, renamed."""
    for a in new:
        for b in old:
            if a.kind != "title" or b.kind != "title":
                continue
            x, y = _title_core(a), _title_core(b)
            if x != y and min(len(x), len(y)) >= 2 and (x in y or y in x):
                return True
    return False


def _same_amount(a: Value, b: Value) -> bool:
    """The same amount or count, however written ("$18k" / "over $18,000")."""
    if a.number is None or a.number != b.number:
        return value_signature(a) == value_signature(b)
    return a.kind in ("money", "bound", "qty", "percent", "date", "time") and same_slot(a, b)


def _self_fix(text: str) -> tuple[Value, ...] | None:
    """The value a speaker takes back mid-sentence: X in "X — no wait, Y", "X——不对，Y".

    X is the value right before the marker that a value after it replaces
    (same kind, preferably the same unit).
    """
    values = extract_values(text)
    for m in SELF_FIX.finditer(text):
        before = [
            v for v in values
            if v.end <= m.start() and (v.kind in REVISABLE_KINDS or v.kind in ("id", "time"))
        ]  # fmt: skip
        after = [v for v in values if v.start >= m.end()]
        if not before or m.start() - before[-1].end > 12:
            continue
        for exact in (True, False):
            for x in reversed(before):
                if x.end < m.start() - 12:
                    break
                if any(
                    value_signature(y) != value_signature(x)
                    and (y.key == x.key if exact else same_slot(y, x))
                    for y in after
                ):
                    return (x,)
    return None


# A clause that only says when a rule applies.
_POINTS_BACK = re.compile(
    r"(?:that|this|it|which)(?:'s| is| was)?\b|(?:那|这)(?:是|就是|样|个)", re.IGNORECASE
)
# A bound on the very amount that changed ("低于这个不卖", "I won't go under that"):
# the rest says nothing once its amount is gone.
_BOUNDED_BY_IT = re.compile(
    r"(?:低于|高于|超过|少于|多于|不到|不低于|不高于)(?:这个|那个|这|那)(?:数|价)?"
    r"|\b(?:under|below|over|above|more than|less than|lower than|higher than) (?:that|this|it)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"([^"]{2,40})"|“([^”]{2,40})”|「([^」]{2,40})」')
_CONDITION = re.compile(
    r"^(?:[\w' ]{0,12}:\s*)?(?:when|whenever|if|each time|every time|once|while|as long as)\b"
    r"|^(?:[^，,：:]{0,6}[：:])?(?:每当|如果|要是|只要|当)|^[^，,]{0,12}的时候$",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|your|that|this|those|these|its)\s+", re.IGNORECASE)


# Change cues whose words name nothing: "on second thought" is not about a second one.
_IDIOMS = re.compile(r"\bon second thoughts?\b|\bsecond thoughts\b|\bfirst of all\b", re.IGNORECASE)
# What only makes sense next to the clause before it: "先列待办，*再说别的*", "check
# the logs first, *then* ping me".
_THEN = re.compile(r"^(?:再|然后|接着|之后再|随后)|^(?:and )?then\b|^after that\b", re.IGNORECASE)
# A frame that says when a rule applies, with the rule itself gone: "你以后回复我", "when
# you answer me".
_FRAME = re.compile(
    r"^你?(?:以后|今后|之后|每次|都)*(?:给我)?(?:回复|回答|答复|回|写)(?:我)?(?:的时候|时)?$"
    r"|^(?:from now on,? |going forward,? )?(?:when(?:ever)? |each time |every time )?"
    r"you (?:reply|answer|respond|write back)(?: to me)?$",
    re.IGNORECASE,
)
# Why the withdrawn rule was set ("因为我要转给供应商", "because my printer is old"):
# no rule of its own once the rule is gone.
_REASON = re.compile(r"^(?:因为|由于|毕竟)|^(?:because|since|as)\b", re.IGNORECASE)
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


def _denied_value(text: str, token: str) -> str:
    """The whole value a contrast token begins ("instead of *two* weeks" denies "two
    weeks", not the word "two"), else the token."""
    at = text.find(token)
    for v in extract_values(text):
        if v.start == at and len(v.text) > len(token) and v.kind in REVISABLE_KINDS:
            return v.text
    return token


def _names_something(token: str) -> bool:
    """Does a denied token name anything? A number or a content word does; "not us",
    "not to whoever filed it", "not at the end" deny a function word."""
    if re.search(r"\d", token) or re.search(r"[\u3400-\u9fff]", token):
        return True
    return any(w >= 1 for w in weighted_terms(token).values())


# How many content words of its own make a sentence about a subject of its own.
_OWN_SUBJECT_TERMS = 4


def _other_subject(text: str, token: str, item: str) -> bool:
    """Is `text`, which denies `token`, about another subject than `item`, which holds
    it? It is when it has words of its own and shares none with the item but the token:
    "the studio printer should stay on a cable, not bluetooth, for the print queue" is
    not about "I want to fix the bluetooth in the car"; "soapstone it is, no more
    quartz" has no other words, so the item holding "quartz" is what it revises."""
    denied = key_terms(token)
    own = key_terms(text) - denied
    if len(own) < _OWN_SUBJECT_TERMS:
        return False
    return not (own & key_terms(item))


def _revoked_text(st: Statement) -> str:
    """The revocation cue and what follows it closely ("不用那么简短了", "no need to
    keep it so short")."""
    span = st.cues.revoke_span
    return st.text if span is None else st.text[span[0] : span[1] + 24]


# What was changed or dropped, as a kind of content: "之前改掉的", "旧的", "anything that
# changed", "the outdated bits". Leaving it out of an answer revokes no rule.
_OUTDATED = re.compile(
    r"(?:改掉|改过|换掉|取消掉?|作废|推翻|撤掉|过时|不算数?)了?的|旧的|老的那些"
    r"|\b(?:anything|everything|whatever|what|stuff|things|items|ones|bits)\b[^.;,!?]{0,20}"
    r"\b(?:changed|dropped|replaced|superseded|outdated|out of date|cancell?ed|scrapped)\b"
    r"|\b(?:outdated|superseded|out-of-date)\b|\bold (?:versions?|values|plans?|stuff|numbers)\b",
    re.IGNORECASE,
)


# The function words of a zh revoking cue; what is left of the cue is its object
# ("别用表格了" → 用表格).
_ZH_CUE_WORDS = re.compile(r"不用再?|不要再?|就别|别再?|不必再?|无需再?|不需要|不再|算了|了|吧")


def _cue_names_object(cue: str) -> bool:
    """Does the revoking cue itself name what goes ("ditch the bullet points", "别用
    表格了"), unlike "scratch that", "算了"?"""
    named = _DROPPED_OBJECT.match(cue)
    if named is not None:
        cue = named.group(1)
    elif re.search(r"[\u3400-\u9fff]", cue):
        cue = _ZH_CUE_WORDS.sub("", cue)
    else:
        return False
    return any(w >= 1 for w in weighted_terms(cue).values())


def _names_outdated(st: Statement) -> bool:
    span = st.cues.revoke_span
    if span is None:
        return False
    return bool(_OUTDATED.search(st.text[max(0, span[0] - 12) : span[1] + 24]))


# The object a revoking verb takes inside its cue ("drop the jokes", "forget the 400
# cap"); "scratch that", "forget it" take none.
_DROPPED_OBJECT = re.compile(
    r"(?:drop|ditch|lose|scrap|kill|cut|skip|forget(?: about)?|remove|lift|lay off"
    r"|(?:stop|quit) with)\s+(?:the |those |these |that |this |your |all (?:the |those )?)?(.+)",
    re.IGNORECASE,
)


def _named_after_cue(st: Statement) -> str | None:
    """What "scratch X" / "drop X" names, when it is a short, specific phrase."""
    span = st.cues.revoke_span
    if span is None:
        return None
    m = re.match(r"\s*([^,.;:!?，。；：！？]{2,40})", st.text[span[1] :])
    if m is None:
        return None
    token = _ARTICLE.sub("", m.group(1).strip())
    if re.search(r"[\u3400-\u9fff]", token) or len(token.split()) > 3:
        return None
    if sum(1 for w in weighted_terms(token).values() if w >= 1) == 0:
        return None
    return token if _memorable_denial(token) else None


def _memorable_denial(token: str) -> bool:
    """A denied value worth marking wherever it is quoted: a name or a word, not a
    bare number or a fragment that would match unrelated text."""
    if re.search(r"[\u3400-\u9fff]", token):
        return len(token) >= 2
    return len(token) >= 4 and not re.fullmatch(r"[\d.,$€£%]+", token)


def _token_pattern(token: str) -> re.Pattern[str]:
    """Where a denied value occurs in an item: a whole number, a whole word, or CJK text."""
    if re.fullmatch(r"[\d.]+", token):
        # "48" is not in "48,000 miles".
        return re.compile(rf"(?<![\d.,]){re.escape(token)}(?![\d]|[.,]\d)")
    if re.search(r"[\u3400-\u9fff]", token):
        return re.compile(re.escape(token))
    return re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w-])", re.IGNORECASE)


def _near_cue(st: Statement) -> Mapping[str, float]:
    """Terms around the revocation cue: where the revoked thing is named."""
    span = st.cues.revoke_span or (0, len(st.text))
    return weighted_terms(st.text[max(0, span[0] - 12) : span[1] + 30])


def _named_near(near: Mapping[str, float], item: Mapping[str, float], strict: bool) -> bool:
    """Is `item` named in the words around a revocation cue?

    One shared word/bigram (or three CJK characters) for a directive; two
    shared words/bigrams for anything else.
    """
    words = sum(1 for t, w in near.items() if w >= 1 and item.get(t, 0) >= 1)
    if strict:
        return words >= 2
    chars = sum(1 for t, w in near.items() if w < 1 and t in item)
    return words >= 1 or chars >= NEAR_CHARS


# Moving to another choice without a rule cue: "我们改去'蹦蹦乐'吧", "we're moving it to
# the Elks Lodge instead".
_SWITCH = re.compile(
    r"改去|改到|改在|改成|改为|换成|换到|换去|换个|挪到|\binstead\b|\bswitch(?:ing)? to\b"
    r"|\bmov(?:e|ing) (?:it |us |the \w+ )?to\b|\bgo(?:ing)? with\b",
    re.IGNORECASE,
)


def _replacement(
    st: Statement, statements: list[Statement], target: MemoryItem | None = None
) -> Statement | None:
    """The rule stated next to a revocation, which replaces what was revoked.

    Usually right after it ("stop flagging that. Instead, quote the IC
    fare"); before it only when it is itself a standing rule ("from now on
    write pytest tests. No more TestCase classes.").
    """

    def usable(other: Statement) -> bool:
        return not other.revoke and not other.consumed and other.type in _RULE_TYPES

    after = [o for o in statements if st.index < o.index <= st.index + 2 and usable(o)]
    if after:
        return after[0]
    # A choice withdrawn ("算了，小区会所太小了") is often replaced by a plain
    # statement of the new one in the very next sentence.
    if target is not None and target.type != "directive":
        switched = [
            o for o in statements
            if o.index == st.index + 1 and not o.revoke and not o.consumed
            and (o.cues.change >= 1 or _SWITCH.search(o.text))
        ]  # fmt: skip
        if switched:
            return switched[0]
    before = [
        o for o in statements
        if st.index - 2 <= o.index < st.index and usable(o)
        and (STANDING.search(o.text) or o.cues.change >= 2)
    ]  # fmt: skip
    return before[-1] if before else None
