"""Long-term memory across a user's conversations: the proxy side.

A user scope comes from `X-Memory-User`, else the request's `user` field;
without one nothing crosses conversations. It is always inside the caller's
tenant. Two paths:

- Backfill, on the request path: the user's items are read (with a timeout)
  and `policies.longterm.backfill` picks the background lines. A store error or a slow
  read only means no background this time: the chat goes on.
- Consolidation, off it: after a request's memory work, a job with a snapshot
  of the session's items and the turns goes to a bounded queue; one worker
  merges it into the user's items (`policies.longterm.candidates` what is kept,
  `policies.longterm.merge` how, `policies.longterm.retire` what revocations take back).
  A failure is logged and counted; it never reaches a chat request. A full queue drops the job
  (the next request of the session brings the same items again).

Operator changes to a user's items wait for the job in flight (the worker
runs one at a time), and an erasure also discards the user's queued jobs.
On PostgreSQL, several replicas may consolidate the same user at once: each
job's read-merge-write holds an advisory lock named after the user, so none
of them merges into a stale copy (which would duplicate or lose items).

With `embedding_model`, retrieval also goes by meaning. The input is embedded
on the request path (only when the user has embedded items), within
`embedding_timeout_s`; the items a job consolidates are embedded after the
response, before the request is recorded, so both calls are recorded with the
request that caused them. Any embedding failure leaves retrieval lexical.

Modules: `jobs` (the job, the merge, the types), `recall` (`Recall`: backfill),
`embedding` (`Embedder`), `worker` (`ConsolidationQueue`), `operator`
(`OperatorGuard`: erasures and operator changes), `memory` (`LongTermMemory`,
which composes them).
"""

from proxy.longterm.jobs import ConsolidationJob, Embed, EmbeddingReply, Vector, user_scope
from proxy.longterm.memory import LongTermMemory

__all__ = [
    "ConsolidationJob",
    "Embed",
    "EmbeddingReply",
    "LongTermMemory",
    "Vector",
    "user_scope",
]
