"""The spine: the history as units (a user turn and the replies up to the next one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policies.assemble.backbone.params import FULL_DIGEST
from policies.assemble.budget import group_turns, is_forwardable
from policies.types import Turn


@dataclass(slots=True)
class Unit:
    """A user turn and the assistant / tool groups up to the next user turn."""

    user: Turn | None
    groups: list[list[Turn]]
    # Current rendering level: user 2 verbatim, 1 condensed, 0 gone;
    # assistant 2 digest + tools, 1 tools (or a placeholder), 0 gone.
    user_level: int = 2
    assistant_level: int = FULL_DIGEST
    reason: str = ""

    @property
    def first_ordinal(self) -> int:
        if self.user is not None:
            return self.user.ordinal
        return self.groups[0][0].ordinal

    def turns(self) -> list[Turn]:
        own = [self.user] if self.user is not None else []
        return own + [t for g in self.groups for t in g]


def user_text(unit: Unit) -> str:
    return unit.user.text if unit.user is not None else ""


def split_units(turns: Sequence[Turn]) -> list[Unit]:
    units: list[Unit] = []
    for group in group_turns(turns):
        if not is_forwardable(group):
            continue
        if group[0].role == "user" and len(group) == 1:
            units.append(Unit(group[0], []))
        elif units:
            units[-1].groups.append(group)
        else:
            units.append(Unit(None, [group]))
    return units


def total_tokens(turns: Sequence[Turn]) -> int:
    return sum(t.tokens for t in turns)


def live_split(units: Sequence[Unit], target: int) -> int:
    """Index of the first unit of the longest suffix within `target` tokens
    (`len(units)`: not even the last exchange fits, everything is frozen)."""
    total, start = 0, len(units)
    for i in range(len(units) - 1, -1, -1):
        size = sum(t.tokens for t in units[i].turns())
        if total + size > target:
            break
        total += size
        start = i
    return start


def turns_of(units: Sequence[Unit]) -> list[Turn]:
    return [t for u in units for t in u.turns()]
