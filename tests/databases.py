"""Databases for tests: a SQLite file, or a throwaway PostgreSQL database.

PostgreSQL tests run when `MEMPROXY_TEST_PG_URL` names a server (`.ci/run`
sets it when one answers) and are skipped otherwise. Each test gets its own
database, created from that URL and dropped afterwards, so concurrent runs
on one server never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

PG_ENV = "MEMPROXY_TEST_PG_URL"
SKIP_REASON = (
    f"PostgreSQL tests need {PG_ENV} (e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test); "
    ".ci/run sets it when a server answers"
)


def pg_base_url() -> str:
    """The configured server's URL, or skip the calling test with the reason."""
    url = os.environ.get(PG_ENV, "")
    if not url:
        pytest.skip(SKIP_REASON)
    return url


async def create_pg_database(base_url: str) -> str:
    """A new, empty database on the server of `base_url`; returns its URL."""
    name = f"memproxy_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()
    return make_url(base_url).set(database=name).render_as_string(hide_password=False)


async def drop_pg_database(base_url: str, url: str) -> None:
    """Drop a database made by `create_pg_database` (connected clients are cut off)."""
    parsed = make_url(url)
    assert (parsed.database or "").startswith("memproxy_test_"), url
    admin = create_async_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    finally:
        await admin.dispose()


@asynccontextmanager
async def temp_pg_database(base_url: str) -> AsyncIterator[str]:
    """A new, empty database on the server of `base_url`; dropped on exit."""
    url = await create_pg_database(base_url)
    try:
        yield url
    finally:
        await drop_pg_database(base_url, url)


@asynccontextmanager
async def database_for(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """A blank database of `kind` ("sqlite" | "postgresql") for one test."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'memproxy.db'}"
        return
    async with temp_pg_database(pg_base_url()) as url:
        yield url
