"""The rolling summary's writes: a compaction appends a chunk, a trim merges the chunks
into one, a better chunk (the LLM summariser's) replaces one for the same span.

Each persists the session's `summaries` rows (one per chunk) and updates the layers
in memory (`proxy.lifecycle.SessionLayers`) to match, under the session's ticket like
every other write of the request. Reading the chunks back, and dropping them on a
rollback, is `proxy.lifecycle`.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.assemble.summary import render_chunks, summary_tokens, trim_chunks
from policies.base import SummarizationPolicy
from policies.types import SummaryChunk, TokenCounter, Turn
from proxy.lifecycle import SessionLayers
from proxy.store.repo import Store


def _chunk_row(chunk: SummaryChunk, count: TokenCounter) -> tuple[SummaryChunk, str, int]:
    texts = render_chunks([chunk])
    text = texts[0].split("\n", 1)[1] if texts else ""  # without the section header
    return chunk, text, summary_tokens(texts, count)


class Summaries:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def compact(
        self,
        session_id: str,
        state: SessionLayers,
        turns: Sequence[Turn],
        upto: int,
        summarizer: SummarizationPolicy,
        cap: int,
        count: TokenCounter,
    ) -> SummaryChunk:
        """Summarise turns [state.upto, upto) into a new chunk and persist it.

        Incremental: the previous chunks are kept as they are, the new one is
        appended after them.
        """
        start = state.upto
        evicted = state.dated([t for t in turns[start:upto] if start <= t.ordinal < upto])
        chunk = summarizer.summarize(state.chunks, evicted, start, upto)
        await self.store.replace_summary_chunks(
            session_id, [_chunk_row(chunk, count)], from_upto=start
        )
        state.chunks = [*state.chunks, chunk]
        return chunk

    async def trim(
        self, session_id: str, state: SessionLayers, target: int, count: TokenCounter
    ) -> None:
        """The summary outgrew its cap: merge it into one chunk of `target` tokens
        (lowest-scoring lines go first; their turns stay findable by recall).

        Down to a low-water mark, so that the next compactions append again.
        """
        trimmed = list(trim_chunks(state.chunks, target, count))
        await self.store.replace_summary_chunks(session_id, [_chunk_row(c, count) for c in trimmed])
        state.chunks = trimmed

    async def replace_chunk(
        self, session_id: str, state: SessionLayers, chunk: SummaryChunk, count: TokenCounter
    ) -> bool:
        """Swap in a better chunk for the same span (the LLM summariser's); False if
        that span is no longer a chunk of its own (trimmed or rolled back since)."""
        for i, old in enumerate(state.chunks):
            if (old.start, old.upto) == (chunk.start, chunk.upto):
                previous = state.chunks[i - 1].upto if i else 0
                rows = [_chunk_row(c, count) for c in (chunk, *state.chunks[i + 1 :])]
                await self.store.replace_summary_chunks(session_id, rows, from_upto=previous)
                state.chunks = [*state.chunks[:i], chunk, *state.chunks[i + 1 :]]
                return True
        return False
