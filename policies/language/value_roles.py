"""What a value does in its sentence, beyond its kind and unit.

Two values of the same kind and unit are not versions of one setting when
the sentence gives one of them another role:

- an *example* ("group them under time headings, like 10:00 / 13:00",
  "写个时间示例，比如9:30"): it shows a format, it sets nothing;
- an *attribute* of the noun after it ("the 24-hour clock", "a two-person
  team", "a 14-day trial", "24小时制"): it describes that thing, so it only
  revises a value said about the same thing ("a 30-day trial", "the trial
  runs 21 days"), not any other count of hours, people or days;
- a *case* under a condition ("if they sign for a year, as low as $22",
  "要是包年，最低22块"): an exception beside the plain value, not a new one;
- an *offer*: a price someone puts on a thing for sale ("a guy was selling his bike
  for $600", "那台二手烤箱卖1200", "the shop quoted $450"): what the thing costs, a
  fact of its own, not a revision of what the user means to spend;
- a *share* of a count per unit ("每桌10个人", "10 guests per table", "every two
  minutes"): a count per table is no version of the size of one group ("正好9个人，
  够坐"), nor an interval of a length ("ten minutes, nest gone").

`policies.extract.revision` consults these where a link rests on the value alone
(no change cue names what is revised). The words of each role are rules kept as
data (`policies/rules/<lang>/value_roles.yaml`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from policies.language.values import Value, extract_values
from policies.rulebook import Joined

# "…, like 10:00", "(e.g. 3pm)", "such as 5%", "比如9:30": what follows, up to the end
# of its clause, illustrates. A bare "like" only after a break: "I'd like 3 rooms" asks.
_EXAMPLE = Joined("value_roles", "example")
_CLAUSE_END = re.compile(r"[.;!?。；！？)）]\s|[.;!?。；！？)）]$|[；。！？]")


def example_spans(text: str) -> list[tuple[int, int]]:
    """Spans of `text` that give examples (from the marker to the end of its clause)."""
    spans = []
    for m in _EXAMPLE.finditer(text):
        end = _CLAUSE_END.search(text, m.end())
        spans.append((m.start(), end.start() if end else len(text)))
    return spans


def is_example(text: str, v: Value, spans: Sequence[tuple[int, int]] | None = None) -> bool:
    return any(a <= v.start < b for a, b in (spans if spans is not None else example_spans(text)))


# "24-hour clock", "two-person team": a hyphenated count used before a noun. Not a
# value's own unit word followed by a verb or a preposition ("10 hours of work").
_HEAD = re.compile(r"\s+([a-z]{3,})", re.IGNORECASE)
_NOT_HEAD = frozenset(
    "and or but for with per each of to in on at by from than that which who the a an "
    "is are was were be been will would can could should must max min maximum minimum "
    "total long old".split()
)


def attribute_head(text: str, v: Value) -> str | None:
    """The noun `v` describes when it is used as an attribute, else None.

    "the 24-hour clock" -> "clock"; "24小时制" -> "制"; "10 hours of work" -> None.
    """
    if v.end < len(text) and text[v.end] == "制":
        return "制"  # "24小时制", "12小时制": a format, not a length of time
    if "-" not in v.text.strip("-"):
        return None
    m = _HEAD.match(text, v.end)
    if m is None:
        return None
    head = m.group(1).casefold()
    return None if head in _NOT_HEAD else head


def _mentions(text: str, head: str) -> bool:
    if head == "制":
        return "制" in text
    stem = head[:-1] if head.endswith("s") and len(head) > 3 else head
    return re.search(rf"\b{re.escape(stem)}(?:s|es)?\b", text, re.IGNORECASE) is not None


def attribute_clash(new_text: str, new: Value, old_text: str, old: Value) -> bool:
    """One of two values describes a noun the other sentence never names: "the
    24-hour clock" is no version of "I'm covering 10 hours", nor "Both get a 14-day
    trial" of "annual billing gets 2 months free"."""
    head = attribute_head(new_text, new)
    if head is not None and not _mentions(old_text, head):
        return True
    head = attribute_head(old_text, old)
    return head is not None and not _mentions(new_text, head)


# "if they sign for a year, …", "as long as a guest prepays", "要是客人包年的话": a value
# for one case of what others do. A condition on the speaker's own move ("if we open
# a salary account the rate is 4.1%", "要是我们提前付款…") is an option the plan takes
# up, read as the new value, so it is no case here.
# Not 只要: "只要…就行" means "only needs", not "as long as".
_CONDITION = Joined("value_roles", "condition")


def conditional_before(text: str, v: Value) -> bool:
    """Is `v` said under a condition that opens before it in its sentence?"""
    m = _CONDITION.search(text)
    return m is not None and m.start() < v.start


def conditional(text: str) -> bool:
    return _CONDITION.search(text) is not None


# "每桌10个人", "每队最多6人", "every two minutes", "10 per table", "two to a room": a
# count spread over a unit. Before the value: 每/each/every/per and at most a short noun;
# after it: per/a/an/each/to a + noun.
_SHARE_BEFORE = Joined("value_roles", "share_before", ("zh", "en"))
_SHARE_AFTER = Joined("value_roles", "share_after")


def is_share(text: str, v: Value) -> bool:
    """Is `v` a count per unit of something ("每桌10个人", "every two minutes")?"""
    return bool(
        _SHARE_BEFORE.search(text[max(0, v.start - 8) : v.start])
        or _SHARE_AFTER.match(text[v.end : v.end + 16])
    )


def share_clash(new_text: str, new: Value, old_text: str, old: Value) -> bool:
    """A count per unit and a plain count are two settings, not versions of one: the
    group that fits one table is not the seats per table. Only counts (a money amount
    per hour may be replaced by a flat fee for the day)."""
    if new.kind != "qty" or old.kind != "qty":
        return False
    return is_share(new_text, new) != is_share(old_text, old)


# "selling … for $600", "listed at", "asking $500", "quoted (me) $450", "going for",
# "priced at", "卖1200", "要价/开价/报价/标价/售价 1200", "挂了1200": the verb that puts a
# price on a thing on offer, in the clause before the value. Spending words ("spend",
# "花", "预算") are no offer.
_OFFER_BEFORE = Joined("value_roles", "offer_before")


def is_offer_price(text: str, v: Value) -> bool:
    """Is money `v` the price of something on offer ("was selling a tank for $600")?"""
    if v.kind != "money":
        return False
    clause = re.split(r"[.;!?。；！？]\s", text[: v.start])[-1]
    return bool(_OFFER_BEFORE.search(clause))


def offer_clash(new_text: str, new: Value, old_text: str, old: Value) -> bool:
    """A price on something for sale is no version of the user's own amount (a budget,
    a cap): "a guy was selling his bike for $600" leaves "I'm budgeting $1,500" as it
    was. Only in that direction: a later plain amount ("the seller dropped it to $550")
    may still update a price first heard as an offer."""
    if is_offer_price(old_text, old):
        return False
    if is_offer_price(new_text, new):
        return True
    # A bare number beside an offer price names the thing ("a Fluval 307 … for $90"),
    # it is no amount of the user's either.
    return (
        new.kind == "number"
        and old.kind in ("money", "bound")
        and any(is_offer_price(new_text, v) for v in extract_values(new_text))
    )
