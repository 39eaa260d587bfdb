"""The LLM extractor: one user message to memory operations, as the model reads it.

The model answers in one JSON shape (`EXTRACT_SYSTEM`), every value copied from
the message (`_verbatim` checks it); what it cannot answer the rules do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from policies.base import ExtractionPolicy
from policies.language.text import normalize
from policies.llm.calls import Complete, LLMFailure, PolicyCall, ask_json
from policies.types import (
    Add,
    Confirm,
    Extraction,
    ExtractionContext,
    MemoryItem,
    MemoryOp,
    Revoke,
    Supersede,
    Turn,
)

_LIVE = frozenset({"active", "pending"})

EXTRACT_SYSTEM = """You maintain the working memory of a chat assistant.
Read ONE user message and say what it changes in memory.
Reply with one JSON object only:
{"operation": "add|update|revoke|confirm|irrelevant",
 "items": [{"type": "directive|constraint|fact|preference|entity|goal|state",
            "slot": "short key, e.g. deadline, budget, allergy",
            "value": "the exact words from the message",
            "importance": 0.0-1.0,
            "replaces": "id of the current item this changes, or null"}],
 "revoke": ["ids of current items the user withdraws"],
 "confirm": ["ids of current items the user confirms"]}
Rules:
- value is copied verbatim from the message: never paraphrase; keep negations,
  numbers, dates, amounts, IDs and names exactly.
- directive: a standing instruction for all later replies; constraint: a hard
  limit or prohibition; fact/entity: what is true (bookings, IDs, people).
- Chit-chat, thanks, questions that state nothing: {"operation": "irrelevant"}."""


class _ItemOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["directive", "constraint", "fact", "preference", "entity", "goal", "state"]
    slot: str = Field(min_length=1, max_length=80)
    value: str = Field(min_length=1, max_length=2000)
    importance: float = Field(default=0.6, ge=0, le=1)
    replaces: str | None = None


class _ExtractionOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    operation: Literal["add", "update", "revoke", "confirm", "irrelevant"]
    items: list[_ItemOut] = Field(default_factory=list, max_length=12)
    revoke: list[str] = Field(default_factory=list)
    confirm: list[str] = Field(default_factory=list)


def _verbatim(message: str) -> Callable[[_ExtractionOut], None]:
    folded = normalize(message)

    def check(out: _ExtractionOut) -> None:
        for item in out.items:
            if normalize(item.value) not in folded:
                raise ValueError(f"value is not verbatim from the message: {item.value[:80]!r}")

    return check


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_BY_MODEL = "the model named the item"


def _ops(out: _ExtractionOut, turn: Turn, ctx: ExtractionContext) -> list[MemoryOp]:
    live = {it.id: it for it in ctx.items if it.status in _LIVE}
    ops: list[MemoryOp] = []
    for raw in out.items:
        old = live.get(raw.replaces or "")
        item = MemoryItem(
            id=ctx.new_id(),
            type=raw.type,
            slot=raw.slot.strip(),
            value=" ".join(raw.value.split()),
            source="user",
            source_ordinal=turn.ordinal,
            importance=raw.importance,
            replaces=_short(old.value) if old is not None else None,
        )
        # The model's own decisions, named as the rule chain names its linkers.
        ops.append(Supersede(old.id, item, "llm", _BY_MODEL) if old is not None else Add(item))
    revoked = dict.fromkeys(i for i in out.revoke if i in live)
    ops += [Revoke(i, "revoked by the user", "llm", _BY_MODEL) for i in revoked]
    ops += [Confirm(i, "llm", _BY_MODEL) for i in dict.fromkeys(out.confirm) if i in live]
    return ops


class LLMExtractor:
    """User messages through the model; assistant and tool messages through the rules.

    What the assistant or a tool says is data, never a requirement: the
    rule-based path already enforces that (inferred items, compacted tool
    results), so the model is only asked about what the user said.
    """

    name: str = "llm"

    def __init__(
        self,
        complete: Complete,
        fallback: ExtractionPolicy,
        timeout_s: float = 30.0,
        max_items_in_prompt: int = 60,
    ) -> None:
        self.complete, self.fallback = complete, fallback
        self.timeout_s, self.max_items = timeout_s, max_items_in_prompt

    def extract(self, turn: Turn, ctx: ExtractionContext) -> Extraction:
        return self.fallback.extract(turn, ctx)

    def _prompt(self, turn: Turn, ctx: ExtractionContext) -> list[dict[str, Any]]:
        live = [it for it in ctx.items if it.status in _LIVE][-self.max_items :]
        listing = "\n".join(
            f"- id={it.id}; {it.type}; {it.slot}: {_short(it.value, 200)}" for it in live
        )
        user = f"Current items:\n{listing or '(none)'}\n\nMessage:\n{turn.text}"
        return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": user}]

    async def extract_async(
        self, turn: Turn, ctx: ExtractionContext
    ) -> tuple[Extraction, PolicyCall | None]:
        if turn.role != "user":
            return self.fallback.extract(turn, ctx), None
        call = PolicyCall("extractor", turn.ordinal)
        try:
            out = await ask_json(
                self.complete,
                self._prompt(turn, ctx),
                _ExtractionOut,
                call,
                self.timeout_s,
                _verbatim(turn.text),
            )
        except LLMFailure as exc:
            call.outcome = f"fallback: {exc}"
            return self.fallback.extract(turn, ctx), call
        ops = _ops(out, turn, ctx)
        operation = out.operation if ops or out.operation == "irrelevant" else "irrelevant"
        return Extraction(operation, tuple(ops), f"llm: {len(ops)} op(s)"), call
