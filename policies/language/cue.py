"""A named pattern with the examples it must and must not match.

Rules of the memory engine are data: each has a name (what the record and the
tests call it) and its own examples beside it, run by one test
(`tests/unit/test_backbone.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cue:
    """A named pattern with the examples it must and must not match (tested)."""

    name: str
    pattern: re.Pattern[str]
    matches: tuple[str, ...]
    rejects: tuple[str, ...]
