"""Fixtures for tests that run on each supported database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.databases import database_for


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A blank database: a SQLite file, then a throwaway PostgreSQL database (or skipped)."""
    async with database_for(request.param, tmp_path) as url:
        yield url
