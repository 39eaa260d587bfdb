"""The settings of long-term memory (`memory.long_term`): how much of it a new
conversation is shown, and how relevant it must be."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LongTermParams(BaseModel):
    """Backfill of long-term items into a new conversation (`memory.long_term`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # At most this many items are inserted per request, best first.
    max_items: int = Field(default=3, ge=0, le=20)
    # Relevance an item needs: the IDF-weighted share of its terms that the
    # current input (or, at 0.75 weight, this conversation's memory and
    # system prompt) mentions. One shared key noun of a 3-term rule is ~0.33.
    min_score: float = Field(default=0.25, ge=0, le=1)
    # Share of the history budget (budget minus system prompt and current input);
    # the seeds give retrieval ~1/8 of the window. One line is ~25 tokens.
    share: float = Field(default=0.15, ge=0, le=0.5)
    # Rules on these slots (how to answer, not what about) apply to every
    # conversation: they clear the threshold whatever the input.
    global_slots: tuple[str, ...] = ("language", "format")
    # Share of a long-term rule's subject terms that a rule or request of this
    # conversation must mention to be shown as overriding it ("usually X; this
    # conversation: Y"): two of three, not one shared verb.
    conflict_min: float = Field(default=0.5, gt=0, le=1)
    # Users with more items than this are pre-filtered by BM25 before reranking.
    prefilter: int = Field(default=200, ge=10)
    # With an embedding model: the cosine similarity (input vs item) from which an
    # item is related by meaning; it then clears `min_score`, and ranks higher the
    # closer it is. Each model has its own scale: OpenAI's text-embedding-3 models
    # put unrelated sentences around 0.1-0.2; the stub's n-gram vectors around 0.
    embedding_min_similarity: float = Field(default=0.35, gt=0, lt=1)
