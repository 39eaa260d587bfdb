"""The store: migrations on a blank database, prefix matching, isolation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import inspect

from proxy.store import schema
from proxy.store.migrations import MIGRATIONS
from proxy.store.repo import Store, StoredMessage


async def test_migrations_build_the_declared_schema_on_a_blank_database(tmp_path: Path) -> None:
    db = tmp_path / "blank.db"
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        async with store.engine.connect() as conn:
            columns = await conn.run_sync(
                lambda sync: {
                    table: [c["name"] for c in inspect(sync).get_columns(table)]
                    for table in inspect(sync).get_table_names()
                }
            )
    finally:
        await store.close()
    for table in schema.metadata.sorted_tables:
        assert columns[table.name] == [c.name for c in table.columns], table.name
    assert set(columns) == {t.name for t in schema.metadata.sorted_tables} | {"schema_migrations"}
    with sqlite3.connect(db) as conn:
        applied = [r[0] for r in conn.execute("SELECT name FROM schema_migrations")]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert applied == [m.name for m in MIGRATIONS]
    assert journal == "wal"


async def test_migrations_are_idempotent(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'twice.db'}"
    for _ in range(2):
        store = await Store.open(url)
        await store.close()
    with sqlite3.connect(tmp_path / "twice.db") as conn:
        count = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
    assert count == len(MIGRATIONS)


def test_every_column_has_a_comment_saying_why() -> None:
    for migration in MIGRATIONS:
        for statement in migration.statements:
            if not statement.strip().startswith("CREATE TABLE"):
                continue
            body = statement.split("(", 1)[1]
            for line in body.splitlines():
                line = line.strip()
                if not line or line.startswith((")", "PRIMARY KEY")):
                    continue
                assert "--" in line, f"{migration.name}: column without a reason: {line}"


def _message(ordinal: int, chain: str) -> StoredMessage:
    return StoredMessage(
        ordinal=ordinal,
        role="user",
        message={"role": "user", "content": f"m{ordinal}"},
        text=f"m{ordinal}",
        tool_call_id=None,
        tool_call_ids=(),
        content_hash=f"h{ordinal}",
        chain_hash=chain,
        tokens=5,
        created_at=0.0,
    )


async def test_prefix_match_is_longest_and_tenant_scoped(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    try:
        a = await store.create_session("tenant-a", session_id="S1")
        await store.write_turns(a, 0, [_message(0, "c0"), _message(1, "c1"), _message(2, "c2")])
        match = await store.match_chain("tenant-a", ["c0", "c1", "x2", "x3"])
        assert match is not None
        assert (match.session_id, match.length) == ("S1", 2)
        assert await store.match_chain("tenant-b", ["c0", "c1"]) is None
        # Longer than one IN-list chunk: the match is still found.
        long_chain = ["c0", "c1", "c2", *(f"n{i}" for i in range(2000))]
        match = await store.match_chain("tenant-a", long_chain)
        assert match is not None
        assert match.length == 3
    finally:
        await store.close()
