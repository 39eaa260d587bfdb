"""Values the conversation gave another figure later: an older reply's sentence
holding the earlier figure is out of date.

The assistant's older replies reach the model as digests, the proxy's text.
A digest sentence that states a count ("25 panels", "16 people") or a labelled
amount ("Total: $1,200", "预算 8000 元") which a later turn, of either side,
states with another figure shows an old value as if it stood: the later turn
says what stands, and the digest leaves the sentence out. Only values whose
kind is clear are compared: a count with its unit, and an amount after a word
that names what it is the figure of (`money_label`); bare numbers, times and
unlabelled prices (one option among several) are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from policies.language.values import Value, extract_values
from policies.rulebook import Joined

_MONEY_LABEL = Joined("values", "money_label")
# How far before an amount its label may stand (characters).
_LABEL_REACH = 32


def _key(v: Value, text: str) -> str | None:
    """What a value is the figure of, when that is clear; None otherwise."""
    if v.number is None:
        return None
    if v.kind == "qty" and v.unit:
        return f"qty:{v.unit}"
    if v.kind == "money":
        before = text[max(0, v.start - _LABEL_REACH) : v.start]
        labels = list(_MONEY_LABEL.finditer(before))
        if labels:
            return f"money:{v.unit}:{labels[-1].group(0).lower()}"
    return None


# Every request reads every turn of its history: a turn's pairs are worked out once.
@lru_cache(maxsize=8192)
def keyed_values(text: str) -> tuple[tuple[str, float], ...]:
    """The (key, figure) pairs of the values in `text` whose kind is clear."""
    out = []
    for v in extract_values(text):
        key = _key(v, text)
        if key is not None and v.number is not None:
            out.append((key, v.number))
    return tuple(out)


@dataclass(slots=True)
class Restated:
    """Per key, the figures stated and the ordinals that stated them."""

    said: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    @classmethod
    def of(cls, turns: Iterable[tuple[int, str]]) -> Restated:
        r = cls()
        for ordinal, text in turns:
            for key, figure in keyed_values(text):
                r.said.setdefault(key, []).append((ordinal, figure))
        return r

    def outdated(self, line: str, ordinal: int, counts_only: bool = False) -> bool:
        """Whether a line of the turn at `ordinal` states a figure that a later
        turn gives another figure of the same kind (`counts_only`: of a count)."""
        for key, figure in keyed_values(line):
            if counts_only and not key.startswith("qty:"):
                continue
            if any(o > ordinal and f != figure for o, f in self.said.get(key, ())):
                return True
        return False
