"""Which exceptions mean "the store is unavailable" rather than "memproxy has a bug".

A locked, missing, read-only or full database is an operational fault, and so
is a PostgreSQL server that is down, restarting, out of disk, refusing writes
(`default_transaction_read_only`) or has not got our database yet: the
request can still be served without memory (`memory.on_store_error: open`) or
refused with a 503 (`closed`). An integrity or programming error is a bug and
stays a 500. The reason given to clients is the driver's one-line message
("database is locked"), never SQLAlchemy's text, which quotes SQL and values.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import exc as sa


class StoreBusy(Exception):
    """The wait for the store's write lock outlasted `memory.store_timeout_s`."""


class StoreUnavailable(Exception):
    """The store could not be reached or migrated (yet); the message says why."""


# SQLSTATE classes and codes of PostgreSQL that say "the database cannot serve
# this now", not "this statement is wrong": connection exceptions (08), invalid
# authorization (28: a role not created yet), no such database (3D), insufficient
# resources (53: disk full, too many connections), operator intervention (57:
# terminated by an administrator, shutting down, starting up, statement timeout),
# system errors (58: I/O), a read-only transaction (25006), a lock not granted
# within `lock_timeout` (55P03), a database not accepting connections (55000:
# `ALLOW_CONNECTIONS false`, being dropped or restored).
_PG_FAULT_CLASSES = ("08", "28", "3D", "53", "57", "58")
_PG_FAULT_CODES = ("25006", "55P03", "55000")


def pg_connect_args(timeout_s: float) -> dict[str, Any]:
    """asyncpg settings that bound every wait on PostgreSQL by `memory.store_timeout_s`.

    Connecting and waiting for a lock another connection holds (`LOCK TABLE`,
    a row lock) give up after `timeout_s`; any statement after 4 x `timeout_s`
    (a server that stopped answering mid-query), so no request hangs.
    """
    return {
        "timeout": timeout_s,
        "command_timeout": 4 * timeout_s,
        "server_settings": {"lock_timeout": str(max(1, int(timeout_s * 1000)))},
    }


def store_fault(exc: BaseException) -> str | None:
    """A short, secret-free reason if `exc` is a store fault, else None."""
    if isinstance(exc, StoreBusy | StoreUnavailable):
        return str(exc) or "the store stayed busy"
    if isinstance(exc, sa.TimeoutError):
        return "no store connection became free in time"
    if isinstance(exc, TimeoutError):
        return "the store did not answer in time"
    if isinstance(exc, OSError):
        # Raised by the driver while connecting: refused, reset, unknown host.
        return f"could not reach the store: {_first_line(exc)}"
    if isinstance(exc, sa.DBAPIError) and exc.connection_invalidated:
        # The driver's words vary with the moment the connection died (even
        # "another operation is in progress"); what matters is that it did.
        return "the store connection was lost"
    if isinstance(exc, sa.OperationalError | sa.InterfaceError) or type(exc) is sa.DatabaseError:
        return _first_line(getattr(exc, "orig", None) or exc)
    if isinstance(exc, sa.DBAPIError) and exc.orig is not None and _pg_fault(exc.orig):
        return _first_line(exc.orig)
    if isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
        return _first_line(exc)
    return None


def _pg_fault(orig: object) -> bool:
    state = getattr(orig, "sqlstate", None)
    if not isinstance(state, str):
        return False
    return state.startswith(_PG_FAULT_CLASSES) or state in _PG_FAULT_CODES


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
