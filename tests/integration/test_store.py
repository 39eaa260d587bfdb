"""The store: migrations on a blank database, prefix matching, isolation.

Each test runs on SQLite and on PostgreSQL (skipped without MEMPROXY_TEST_PG_URL).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect, text

from policies.types import MemoryLayout
from proxy.store import schema
from proxy.store.engine import SQLITE_CACHE_KIB
from proxy.store.migrations import MIGRATIONS
from proxy.store.repo import Store, StoredMessage


async def test_migrations_build_the_declared_schema_on_a_blank_database(
    database_url: str,
) -> None:
    store = await Store.open(database_url)
    try:
        async with store.engine.connect() as conn:
            columns = await conn.run_sync(
                lambda sync: {
                    table: {c["name"]: c for c in inspect(sync).get_columns(table)}
                    for table in inspect(sync).get_table_names()
                }
            )
            applied = [r[0] for r in await conn.execute(text("SELECT name FROM schema_migrations"))]
            journal = None
            if store.engine.dialect.name == "sqlite":
                journal = await conn.scalar(text("PRAGMA journal_mode"))
    finally:
        await store.close()
    for table in schema.metadata.sorted_tables:
        found = columns[table.name]
        assert list(found) == [c.name for c in table.columns], table.name
        for column in table.columns:
            # Same nullability (SQLite lets a TEXT primary key be null: not
            # compared), and a type of the same family, on every database.
            if not column.primary_key:
                assert found[column.name]["nullable"] == column.nullable, (
                    f"{table.name}.{column.name}"
                )
            assert found[column.name]["type"]._type_affinity is column.type._type_affinity, (
                f"{table.name}.{column.name}: {found[column.name]['type']!r}"
            )
    assert set(columns) == {t.name for t in schema.metadata.sorted_tables} | {"schema_migrations"}
    assert applied == [m.name for m in MIGRATIONS]
    assert journal in (None, "wal")


async def test_migrations_are_idempotent(database_url: str) -> None:
    for _ in range(2):
        store = await Store.open(database_url)
        await store.close()
    store = await Store.open(database_url)
    try:
        async with store.engine.connect() as conn:
            count = await conn.scalar(text("SELECT COUNT(*) FROM schema_migrations"))
    finally:
        await store.close()
    assert count == len(MIGRATIONS)


async def test_every_sqlite_connection_has_a_bounded_page_cache(tmp_path: Path) -> None:
    """The page cache is a per-connection bound of the proxy's memory: set on each
    connection the pool opens, not left to the SQLite build's default."""
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path}/bounded.db")
    try:
        async with store.engine.connect() as first, store.engine.connect() as second:
            sizes = [await c.scalar(text("PRAGMA cache_size")) for c in (first, second)]
    finally:
        await store.close()
    assert sizes == [-SQLITE_CACHE_KIB, -SQLITE_CACHE_KIB]


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


async def test_prefix_match_is_longest_and_tenant_scoped(database_url: str) -> None:
    store = await Store.open(database_url)
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


async def test_memory_layout_round_trips(database_url: str) -> None:
    store = await Store.open(database_url)
    try:
        await store.create_session("t", session_id="S1")
        assert await store.load_layout("S1") is None
        layout = MemoryLayout(
            stable_ids=("b", "a"),
            anchor_count=1,
            known_ids=frozenset({"a", "b", "c"}),
            tiers={"a": "active", "c": "archived"},
            entity_line="Entities: Porto",
            ordinal=7,
        )
        await store.save_layout("S1", layout)
        assert await store.load_layout("S1") == layout
        await store.save_layout("S1", None)
        assert await store.load_layout("S1") is None
    finally:
        await store.close()


async def test_an_append_from_a_stale_session_row_still_replaces(database_url: str) -> None:
    # An append skips the deletes it never needs; a row whose count is behind the
    # store's (it never is in one process, but if) must still replace, not fail.
    store = await Store.open(database_url)
    try:
        session = await store.create_session("tenant-a", session_id="S9")
        stale = await store.get_session("S9")
        assert stale is not None
        await store.write_turns(session, 0, [_message(0, "k0"), _message(1, "k1")])
        await store.write_turns(stale, 1, [_message(1, "k1b"), _message(2, "k2")])
        stored = await store.load_messages("S9")
        assert [m.chain_hash for m in stored] == ["k0", "k1b", "k2"]
        assert stale.message_count == 3
        # And the plain append after it.
        await store.write_turns(stale, 3, [_message(3, "k3")])
        assert [m.chain_hash for m in await store.load_messages("S9")] == ["k0", "k1b", "k2", "k3"]
    finally:
        await store.close()
