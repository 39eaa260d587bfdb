"""SQLAlchemy Core views of the tables the migrations create (used for queries).

The DDL lives in `migrations.py`; a test migrates a blank database and checks
that these definitions and the real columns agree.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Integer, MetaData, Table, Text

metadata = MetaData()

tenants = Table(
    "tenants",
    metadata,
    Column("id", Text, primary_key=True),
    Column("created_at", Float, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("tenant_id", Text, nullable=False),
    Column("external_id", Text),
    Column("parent_id", Text),
    Column("fork_ordinal", Integer),
    Column("system_json", Text),
    Column("message_count", Integer, nullable=False),
    Column("arm", Text),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("version", Integer, nullable=False),
    Column("layout_json", Text),
)

messages = Table(
    "messages",
    metadata,
    Column("session_id", Text, primary_key=True),
    Column("ordinal", Integer, primary_key=True),
    Column("tenant_id", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("message_json", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("tool_call_id", Text),
    Column("tool_call_ids", Text),
    Column("content_hash", Text, nullable=False),
    Column("chain_hash", Text, nullable=False),
    Column("tokens", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
)

memory_items = Table(
    "memory_items",
    metadata,
    Column("id", Text, primary_key=True),
    Column("session_id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("slot", Text, nullable=False),
    Column("value", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("source_ordinal", Integer, nullable=False),
    Column("importance", Float, nullable=False),
    Column("status", Text, nullable=False),
    Column("superseded_by", Text),
    Column("replaces", Text),
    Column("pinned", Integer, nullable=False),
    Column("exposure", Integer, nullable=False),
    Column("last_used_ordinal", Integer, nullable=False),
    Column("versions_json", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)

summaries = Table(
    "summaries",
    metadata,
    Column("session_id", Text, primary_key=True),
    Column("upto_ordinal", Integer, primary_key=True),
    Column("text", Text, nullable=False),
    Column("tokens", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("start_ordinal", Integer, nullable=False),
    Column("lines_json", Text, nullable=False),
    Column("method", Text, nullable=False),
)

requests = Table(
    "requests",
    metadata,
    Column("id", Text, primary_key=True),
    Column("created_at", Float, nullable=False),
    Column("tenant_id", Text, nullable=False),
    Column("session_id", Text),
    Column("mode", Text, nullable=False),
    Column("policy", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("status", Integer, nullable=False),
    Column("budget", Integer),
    Column("raw_tokens", Integer, nullable=False),
    Column("context_tokens", Integer, nullable=False),
    Column("prefix_share", Float),
    Column("proxy_ms", Float),
    Column("upstream_ms", Float),
    Column("record_json", Text, nullable=False),
    Column("prompt_tokens", Integer),
    Column("cached_tokens", Integer),
    Column("cache_write_tokens", Integer),
    Column("input_cost", Float),
    Column("route", Text, nullable=False),
)

long_term_items = Table(
    "long_term_items",
    metadata,
    Column("id", Text, primary_key=True),
    Column("tenant_id", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("slot", Text, nullable=False),
    Column("value", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("source_session_id", Text, nullable=False),
    Column("source_item_id", Text, nullable=False),
    Column("first_session_id", Text, nullable=False),
    Column("first_seen", Float, nullable=False),
    Column("last_confirmed", Float, nullable=False),
    Column("confirmations", Integer, nullable=False),
    Column("history_json", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("embedding", Text),
    Column("embedding_model", Text),
    Column("value_sessions_json", Text),
)
