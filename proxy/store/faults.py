"""Which exceptions mean "the store is unavailable" rather than "memproxy has a bug".

A locked, missing, read-only or full database is an operational fault: the
request can still be served without memory (`memory.on_store_error: open`) or
refused with a 503 (`closed`). An integrity or programming error is a bug and
stays a 500. The reason given to clients is the driver's one-line message
("database is locked"), never SQLAlchemy's text, which quotes SQL and values.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import exc as sa


class StoreBusy(Exception):
    """The wait for the store's write lock outlasted `memory.store_timeout_s`."""


def store_fault(exc: BaseException) -> str | None:
    """A short, secret-free reason if `exc` is a store fault, else None."""
    if isinstance(exc, StoreBusy):
        return str(exc) or "the store stayed busy"
    if isinstance(exc, sa.TimeoutError):
        return "no store connection became free in time"
    if isinstance(exc, sa.OperationalError | sa.InterfaceError) or type(exc) is sa.DatabaseError:
        return _first_line(getattr(exc, "orig", None) or exc)
    if isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
        return _first_line(exc)
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
