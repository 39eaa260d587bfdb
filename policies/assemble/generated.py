"""The messages the managed assemblers write themselves, and their headers.

Each section an assembler writes (the working-memory block, its delta,
replay, the summary, recalled turns, the backbone's notes) is a `Generated`:
its system messages with their exact cost per section and the account of
what it showed and left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from policies.types import Candidate, Section

# Headers of the messages the assembler writes: short (every token counts
# against the history budget) and explicit that memory beats old turns, since
# the verbatim turns kept alongside may still show superseded values.
MEMORY_HEADER = "Memory: the user's current requirements; they override older turns."
DELTA_HEADER = "Memory, new or changed since (current; overrides older turns):"
REPLAY_HEADER = "Keep in mind for this reply:"
RECALL_HEADER = "Earlier turns relevant to the current input:"
CONFLICT_MARK = "(confirm with the user) "


@dataclass(slots=True)
class Generated:
    """Messages the assembler writes itself, with their exact cost per section."""

    contents: list[str]
    tokens: int
    parts: list[Section]
    candidates: list[Candidate] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": c} for c in self.contents]


def nothing(section: str, candidates: list[Candidate] | None = None) -> Generated:
    return Generated([], 0, [Section(section)], candidates or [])
