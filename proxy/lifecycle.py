"""Per-session lifecycle state: the rolling summary, the recall index, the memory layout
and the late sections kept in place.

Runs under the session's ticket, like `MemoryState`. The summary is persisted
(one `summaries` row per compaction chunk, written by `proxy.summaries`) and
cached here; the recall index and
the date labels live in memory only and grow by each request's new turns
(they are rebuilt from the stored turns after a restart); the working-memory
layout is a cache-friendliness hint kept in memory (losing it costs one
rebuilt block, nothing else); on PostgreSQL it is stored with the session as
well, so that whichever replica serves the next request lays the block out alike.

Rollback: a regenerate or an edit rewinds the session to ordinal k; chunks
covering any turn from k on go (the store drops their rows with the turns),
and the index forgets those turns. A fork starts with the parent's chunks
that lie entirely within the shared prefix.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.recall import RecallIndex
from policies.assemble.summary import DatedTurn
from policies.language.dates import DateLabels, stated_date
from policies.types import (
    AssembledContext,
    MemoryLayout,
    PlacedNote,
    RecallHit,
    SummaryChunk,
    Turn,
)
from proxy.store.repo import SessionRow, Store


@dataclass(slots=True)
class SessionLayers:
    chunks: list[SummaryChunk]
    index: RecallIndex = field(default_factory=RecallIndex.for_conversation)
    labels: DateLabels = field(default_factory=DateLabels)
    layout: MemoryLayout | None = None
    # The late sections the last request forwarded, to keep in place (like
    # the layout, a cache-friendliness hint: losing them costs one rewrite
    # of the prompt's end).
    notes: tuple[PlacedNote, ...] = ()
    # The backbone's levels of its frozen exchanges (`policies.assemble.backbone`), by
    # first ordinal; like the notes, a hint for the prompt cache.
    backbone: dict[int, tuple[int, int, str]] = field(default_factory=dict)
    # What each frozen exchange showed (signature, annotation ids), likewise.
    backbone_shown: dict[int, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    # The last assembly: its key (the assembler and `input_key` of its input),
    # the turns it was given, and the context as the assembler returned it
    # (`proxy.chat.managed`: an equal input reuses it).
    assembly: tuple[tuple[Any, ...], tuple[Turn, ...], AssembledContext] | None = None

    @property
    def upto(self) -> int:
        """Turns before this ordinal are covered by the summary."""
        return self.chunks[-1].upto if self.chunks else 0

    def rewind(self, ordinal: int) -> None:
        self.chunks = [c for c in self.chunks if c.upto <= ordinal]
        self.index.truncate(ordinal)
        self.labels.truncate(ordinal)
        self.layout = None
        self.notes = tuple(n for n in self.notes if n.before < ordinal)
        self.backbone = {o: v for o, v in self.backbone.items() if o < ordinal}
        self.backbone_shown = {o: v for o, v in self.backbone_shown.items() if o < ordinal}

    def dated(self, turns: Sequence[Turn]) -> list[DatedTurn]:
        return [DatedTurn(t, self.labels.get(t.ordinal)) for t in turns]

    def recall(
        self,
        turns: Sequence[Turn],
        query: frozenset[str],
        *,
        limit: int,
        min_score: float,
    ) -> list[RecallHit]:
        """Summarised turns relevant to `query`, best first (dated)."""
        if not query or self.upto <= 0:
            return []
        hits = self.index.search(query, limit=limit, before=self.upto)
        out = []
        for ordinal, score in hits:
            if score < min_score or ordinal >= len(turns):
                continue
            turn = turns[ordinal]
            if turn.role not in ("user", "assistant") or not turn.text.strip():
                continue
            out.append(RecallHit(ordinal, turn.role, self.labels.get(ordinal), turn.text, score))
        return out


class Lifecycle:
    def __init__(self, store: Store, cache_sessions: int = 2000) -> None:
        self.store = store
        self._cache: OrderedDict[str, SessionLayers] = OrderedDict()
        self._max = cache_sessions

    def drop(self, session_id: str) -> None:
        self._cache.pop(session_id, None)

    def holds(self, session_id: str) -> bool:
        """Whether `state` answers for the session without reading the store."""
        return session_id in self._cache

    def rewind(self, session_id: str, ordinal: int) -> None:
        state = self._cache.get(session_id)
        if state is not None:
            state.rewind(ordinal)

    async def state(
        self,
        session: SessionRow,
        turns: Sequence[Turn],
        rewound_to: int | None,
        fork_of: int | None,
    ) -> SessionLayers:
        """The session's layers, in step with `turns` (the conversation as it is now).

        `rewound_to`: this request discarded turns from that ordinal on.
        `fork_of`: the session is a fork sharing that many turns with its parent.
        """
        state = self._cache.get(session.id)
        if state is not None:
            self._cache.move_to_end(session.id)
            if rewound_to is not None:
                state.rewind(rewound_to)
        else:
            if fork_of is not None and session.parent_id:
                await self.store.copy_summary_chunks(session.parent_id, session.id, fork_of)
            chunks = await self.store.load_summary_chunks(session.id)
            state = SessionLayers([c for c in chunks if c.upto <= len(turns)])
            if self.store.shared and rewound_to is None and fork_of is None:
                # Another replica laid the block out: keep it, and the prompt with it.
                layout = await self.store.load_layout(session.id)
                if layout is not None and layout.ordinal < len(turns):
                    state.layout = layout
            created = await self.store.load_created_at(session.id) if turns else []
            self._index(state, turns, created)
            self._cache[session.id] = state
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
            return state
        if state.index.next_ordinal > len(turns):
            state.rewind(len(turns))
        self._index(state, turns, [])
        return state

    @staticmethod
    def _index(state: SessionLayers, turns: Sequence[Turn], created: Sequence[float]) -> None:
        """Index the turns not seen yet (only the new tail on a warm session)."""
        now = time.time()
        for turn in turns[state.index.next_ordinal :]:
            stamp = created[turn.ordinal] if turn.ordinal < len(created) else now
            date = state.labels.add(turn.text, stamp, stated_date(turn.raw))
            state.index.add(turn.ordinal, turn.text, turn.role, date)
