"""Append-only, named schema migrations (the simonw/llm way).

Never edit a migration that has shipped: add a new one. Each migration is a list
of portable DDL statements (SQLite and PostgreSQL); the comment on every column
says why it exists. `schema_migrations` records what has been applied.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True)
class Migration:
    name: str
    statements: tuple[str, ...]


M001_INITIAL = Migration(
    "001_initial",
    (
        """
        CREATE TABLE tenants (
            id TEXT PRIMARY KEY,            -- sha256 of the caller's API key (never the key itself)
            created_at DOUBLE PRECISION NOT NULL  -- first request seen from this key
        )
        """,
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,            -- ULID: sortable by creation time
            tenant_id TEXT NOT NULL,        -- isolation: sessions never match across tenants
            external_id TEXT,               -- X-Memory-Session value, when the client names it
            parent_id TEXT,                 -- session this one forked from (an edited turn)
            fork_ordinal INTEGER,           -- first ordinal that differs from the parent
            system_json TEXT,               -- latest system messages, for stateful clients
            message_count INTEGER NOT NULL DEFAULT 0,  -- stored turns: the chain length
            arm TEXT,                       -- sticky A/B arm (managed | raw), if assigned
            created_at DOUBLE PRECISION NOT NULL,  -- when the conversation was first seen
            updated_at DOUBLE PRECISION NOT NULL  -- tie-break between forks sharing a prefix
        )
        """,
        "CREATE UNIQUE INDEX ix_sessions_external ON sessions (tenant_id, external_id)",
        """
        CREATE TABLE messages (
            session_id TEXT NOT NULL,       -- owning session
            ordinal INTEGER NOT NULL,       -- position among non-system turns (0-based)
            tenant_id TEXT NOT NULL,        -- denormalised so prefix matching needs no join
            role TEXT NOT NULL,             -- user | assistant | tool
            message_json TEXT NOT NULL,     -- the client's message dict, forwarded verbatim
            text TEXT NOT NULL,             -- plain text for extraction, search and counting
            tool_call_id TEXT,              -- tool results: which call they answer
            tool_call_ids TEXT,             -- assistant tool calls: JSON list of ids (pairing)
            content_hash TEXT NOT NULL,     -- hash of this message alone
            chain_hash TEXT NOT NULL,       -- hash of all turns up to here: prefix matching key
            tokens INTEGER NOT NULL,        -- token count, computed once at ingest
            created_at DOUBLE PRECISION NOT NULL,  -- session date of the turn (temporal recall)
            PRIMARY KEY (session_id, ordinal)
        )
        """,
        "CREATE INDEX ix_messages_chain ON messages (tenant_id, chain_hash)",
        """
        CREATE TABLE memory_items (
            id TEXT PRIMARY KEY,            -- ULID
            session_id TEXT NOT NULL,       -- working memory is per session
            type TEXT NOT NULL,             -- directive | constraint | fact | preference | ...
            slot TEXT NOT NULL,             -- what the value is about; newer values replace older
            value TEXT NOT NULL,            -- verbatim source text (never paraphrased)
            source TEXT NOT NULL,           -- user | assistant | tool: user statements outrank
            source_ordinal INTEGER NOT NULL,  -- message it came from: rollback drops >= ordinal
            importance DOUBLE PRECISION NOT NULL,  -- scoring input set by the extractor
            status TEXT NOT NULL,           -- active | pending | superseded | revoked | ...
            superseded_by TEXT,             -- the item that replaced this one
            replaces TEXT,                  -- short form of the value this item replaced
            pinned INTEGER NOT NULL DEFAULT 0,  -- set by an operator: always kept
            exposure INTEGER NOT NULL DEFAULT 0,  -- times placed in a context (exposure penalty)
            last_used_ordinal INTEGER NOT NULL DEFAULT -1,  -- recency of use
            versions_json TEXT NOT NULL DEFAULT '[]',  -- history of values/statuses (rollback)
            updated_at DOUBLE PRECISION NOT NULL  -- last change (operator edits, debugging)
        )
        """,
        "CREATE INDEX ix_items_session ON memory_items (session_id)",
        """
        CREATE TABLE summaries (
            session_id TEXT NOT NULL,       -- rolling summary per session
            upto_ordinal INTEGER NOT NULL,  -- turns before this ordinal are summarised
            text TEXT NOT NULL,             -- the summary itself
            tokens INTEGER NOT NULL,        -- its size, for budgeting without re-counting
            created_at DOUBLE PRECISION NOT NULL,  -- when it was written (compaction history)
            PRIMARY KEY (session_id, upto_ordinal)
        )
        """,
        """
        CREATE TABLE requests (
            id TEXT PRIMARY KEY,            -- ULID, returned as X-Memory-Request-Id
            created_at DOUBLE PRECISION NOT NULL,  -- request time (retention, listing)
            tenant_id TEXT NOT NULL,        -- who asked (for isolation of the log)
            session_id TEXT,                -- null when no session was resolved
            mode TEXT NOT NULL,             -- managed | raw | shadow | compare
            policy TEXT NOT NULL,           -- preset / assembly policy used
            model TEXT NOT NULL,            -- model name the client asked for
            status INTEGER NOT NULL,        -- HTTP status returned to the client
            budget INTEGER,                 -- token budget applied
            raw_tokens INTEGER NOT NULL,    -- tokens of the client's messages
            context_tokens INTEGER NOT NULL,  -- tokens actually forwarded
            prefix_share DOUBLE PRECISION,  -- prompt share equal to the previous prompt's prefix
            proxy_ms DOUBLE PRECISION,      -- time spent in the proxy itself
            upstream_ms DOUBLE PRECISION,   -- time waiting for the provider
            record_json TEXT NOT NULL       -- sections, candidates, forwarded messages, response
        )
        """,
        "CREATE INDEX ix_requests_session ON requests (session_id, created_at)",
    ),
)

M002_SUMMARY_CHUNKS = Migration(
    "002_summary_chunks",
    (
        # Each summaries row is now one compaction step (a chunk appended to the
        # ones before it); the structured lines let a chunk be re-rendered
        # (dates, stale values annotated) and trimmed by score without re-reading
        # turns. (The reason comes first: SQLite splices a trailing comment into
        # the table's CREATE statement, where it would swallow the closing paren.)
        "-- first turn this chunk summarises: it covers [start_ordinal, upto_ordinal)\n"
        "ALTER TABLE summaries ADD COLUMN start_ordinal INTEGER NOT NULL DEFAULT 0",
        "-- [[ordinal, role, date, score, protected, [sentences]], ...]: verbatim sentences\n"
        "ALTER TABLE summaries ADD COLUMN lines_json TEXT NOT NULL DEFAULT '[]'",
        "-- the summariser that wrote it: rules | llm | mixed (after a trim)\n"
        "ALTER TABLE summaries ADD COLUMN method TEXT NOT NULL DEFAULT 'rules'",
    ),
)

M003_LONG_TERM = Migration(
    "003_long_term",
    (
        """
        CREATE TABLE long_term_items (
            id TEXT PRIMARY KEY,            -- ULID
            tenant_id TEXT NOT NULL,        -- isolation: a user's memory never crosses tenants
            user_id TEXT NOT NULL,          -- X-Memory-User or the request's `user`: whose it is
            kind TEXT NOT NULL,             -- why it was kept: rule | preference | decision | ...
            type TEXT NOT NULL,             -- working-memory item type it came from
            slot TEXT NOT NULL,             -- merge key: a newer value on the slot replaces it
            value TEXT NOT NULL,            -- verbatim user text (never paraphrased)
            status TEXT NOT NULL,           -- active | revoked: only active rows are backfilled
            source_session_id TEXT NOT NULL,  -- conversation that last stated it: no backfill there
            source_item_id TEXT NOT NULL,   -- its working-memory item there: revisions follow it
            first_session_id TEXT NOT NULL,  -- conversation it was first seen in (provenance)
            first_seen DOUBLE PRECISION NOT NULL,  -- when it was first consolidated
            last_confirmed DOUBLE PRECISION NOT NULL,  -- last stated: the date shown on backfill
            confirmations INTEGER NOT NULL DEFAULT 1,  -- conversations that stated it (rerank)
            history_json TEXT NOT NULL DEFAULT '[]',  -- older values: [[value, session, at, note]]
            updated_at DOUBLE PRECISION NOT NULL  -- last change (operator edits, debugging)
        )
        """,
        "CREATE INDEX ix_long_term_user ON long_term_items (tenant_id, user_id)",
    ),
)

M004_SESSION_VERSION = Migration(
    "004_session_version",
    (
        # Several replicas on one PostgreSQL each cache a session's turns, items
        # and summary; every write to the session bumps this counter (under the
        # session row's lock), so a replica can tell that its copy is stale.
        "-- bumped by every write to the session: replicas detect stale caches\n"
        "ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
        # The layout is a prompt-cache hint (which items the working-memory block
        # shows, in which order); a replica that did not serve the previous
        # request would otherwise rebuild the block and send a different prompt.
        "-- working-memory block as last laid out (JSON): the same prompt on any replica\n"
        "ALTER TABLE sessions ADD COLUMN layout_json TEXT",
    ),
)

M005_LONG_TERM_VECTORS = Migration(
    "005_long_term_vectors",
    (
        # Retrieval by meaning (`memory.long_term.embedding_model`): each row keeps
        # the vector of its current value, and which model made it (vectors of two
        # models are not comparable). Deleting a conversation propagates to the
        # rows it alone stated, so each row also says who stated its current value.
        "-- base64 float32 vector of `value` (null: not embedded; lexical retrieval only)\n"
        "ALTER TABLE long_term_items ADD COLUMN embedding TEXT",
        "-- model_list name that made `embedding`: another model's vector is ignored\n"
        "ALTER TABLE long_term_items ADD COLUMN embedding_model TEXT",
        "-- JSON list of conversations that stated the current value (session deletion)\n"
        "ALTER TABLE long_term_items ADD COLUMN value_sessions_json TEXT",
    ),
)

M006_REQUEST_CACHE = Migration(
    "006_request_cache",
    (
        # The bill under prompt caching (issue #18): what the provider reported
        # reading from and writing to its prompt cache, and the input priced
        # with it, so the A/B report sums them without reading the records.
        "-- input tokens the provider reported (cached and written included)\n"
        "ALTER TABLE requests ADD COLUMN prompt_tokens INTEGER",
        "-- of those, read from the provider's prompt cache (billed at its discount)\n"
        "ALTER TABLE requests ADD COLUMN cached_tokens INTEGER",
        "-- of those, written to the prompt cache (Anthropic: billed at 125 %)\n"
        "ALTER TABLE requests ADD COLUMN cache_write_tokens INTEGER",
        "-- USD of the input with cache prices (null: the model has no price)\n"
        "ALTER TABLE requests ADD COLUMN input_cost DOUBLE PRECISION",
    ),
)

M007_REQUEST_ROUTE = Migration(
    "007_request_route",
    (
        # Pass-through routes (embeddings, files, ...) are recorded too; the
        # records written before them were all chat completions.
        "-- API route of the request (/v1/embeddings, ...): records of all routes share the table\n"
        "ALTER TABLE requests ADD COLUMN route TEXT NOT NULL DEFAULT '/v1/chat/completions'",
    ),
)

# The ordered list. Append only.
MIGRATIONS: tuple[Migration, ...] = (
    M001_INITIAL,
    M002_SUMMARY_CHUNKS,
    M003_LONG_TERM,
    M004_SESSION_VERSION,
    M005_LONG_TERM_VECTORS,
    M006_REQUEST_CACHE,
    M007_REQUEST_ROUTE,
)

# Any constant: replicas starting together on a blank PostgreSQL database take
# turns to migrate it (the second one then finds nothing left to do).
_MIGRATION_LOCK = 0x6D656D70726F7879  # "memproxy"


async def apply_migrations(conn: AsyncConnection) -> list[str]:
    """Apply pending migrations inside the caller's transaction; return their names."""
    if conn.dialect.name == "postgresql":
        # Held until the caller's transaction ends: DDL is transactional there.
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
    # Read before writing: a database that is up to date but read-only (a
    # replica, `default_transaction_read_only`) still serves reads.
    exists = await conn.run_sync(lambda sync: inspect(sync).has_table("schema_migrations"))
    if not exists:
        await conn.execute(
            text(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name TEXT PRIMARY KEY,"  # migration name, applied once
                " applied_at DOUBLE PRECISION NOT NULL)"
            )
        )
    done = {row[0] for row in await conn.execute(text("SELECT name FROM schema_migrations"))}
    applied = []
    for migration in MIGRATIONS:
        if migration.name in done:
            continue
        for statement in migration.statements:
            await conn.execute(text(statement))
        await conn.execute(
            text(
                "INSERT INTO schema_migrations (name, applied_at)"
                " VALUES (:name, CAST(strftime('%s','now') AS DOUBLE PRECISION))"
                if conn.dialect.name == "sqlite"
                else "INSERT INTO schema_migrations (name, applied_at)"
                " VALUES (:name, EXTRACT(EPOCH FROM now()))"
            ),
            {"name": migration.name},
        )
        applied.append(migration.name)
    return applied
