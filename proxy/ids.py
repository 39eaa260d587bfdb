"""ULIDs: sortable by time, safe in URLs and headers."""

from __future__ import annotations

from ulid import ULID


def new_id() -> str:
    return str(ULID())
