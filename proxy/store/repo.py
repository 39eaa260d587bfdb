"""The store: one object, its concerns in their own modules.

- `engine.StoreEngine`: the async SQLAlchemy engine, write transactions, faults
  (the last fault and commit seen, in `fault_watch.FaultWatch`);
- `replicas.ReplicaCoherence`: session versions, so replicas drop stale caches;
- `conversations.Conversations`: tenants, sessions, turns (reads in
  `session_queries.SessionQueries`, the turn write in `turn_writes.TurnWrites`);
- `memory_rows.MemoryRows`: working memory (items, summary chunks, layout);
- `request_rows.RequestRows`: request records;
- `admin_edits.AdminEdits`: inspection and operator changes;
- `ab_stats.ABAnalytics`: the A/B report;
- `long_term.LongTermRows`: a user's long-term items.

Every method is one short transaction. The pipeline batches its writes so a
request costs a handful of round trips whatever the history length. Callers
import `Store` and the row types from here.
"""

from __future__ import annotations

from proxy.store.ab_stats import ABAnalytics
from proxy.store.admin_edits import AdminEdits
from proxy.store.conversations import Conversations
from proxy.store.long_term import LongTermRows
from proxy.store.request_rows import RequestRows
from proxy.store.rows import (
    ChainMatch,
    SessionRow,
    StoredMessage,
    chunk_from_row,
    chunk_to_row,
    item_from_row,
    item_to_row,
    layout_from_json,
    layout_to_json,
)


class Store(Conversations, AdminEdits, RequestRows, ABAnalytics, LongTermRows):
    """Every query the proxy makes, over one engine (LongTermRows last: its
    connection stubs give way to the engine's)."""


__all__ = [
    "ChainMatch",
    "SessionRow",
    "Store",
    "StoredMessage",
    "chunk_from_row",
    "chunk_to_row",
    "item_from_row",
    "item_to_row",
    "layout_from_json",
    "layout_to_json",
]
