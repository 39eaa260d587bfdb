"""One accounted model call for one JSON object: what the proxy injects (`Complete`),
the answer validated against a schema with one retry (`ask_json`), and the account
of the call (`PolicyCall`) the request that caused it records."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

RETRY_PROMPT = (
    "That was not a valid answer ({}). Reply again with only the JSON object, "
    "exactly in the requested shape, and nothing else."
)


@dataclass(frozen=True, slots=True)
class LLMReply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


# messages -> reply; raises on any provider error.
Complete = Callable[[list[dict[str, Any]]], Awaitable[LLMReply]]


@dataclass(slots=True)
class PolicyCall:
    """One LLM-backed policy run, as recorded with the request that caused it."""

    policy: str  # extractor | summarizer
    ordinal: int  # the turn extracted, or the end of the summarised span
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    ms: float = 0.0
    outcome: str = "ok"  # ok | fallback: <why>
    # The hybrid extractor: the rules' uncertain links it asked about, and what
    # the model decided (left out of the record when nothing was asked).
    questions: int = 0
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.questions:
            del out["questions"], out["decisions"]
        return out


class LLMFailure(Exception):
    """The model gave no usable answer: fall back to the rules."""


_M = TypeVar("_M", bound=BaseModel)


def _json_part(text: str) -> str:
    """The JSON object in a reply, without code fences or chatter around it."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return text[start : end + 1]


async def ask_json(
    complete: Complete,
    messages: list[dict[str, Any]],
    model: type[_M],
    call: PolicyCall,
    timeout_s: float,
    check: Callable[[_M], None] | None = None,
) -> _M:
    """Ask for a JSON object matching `model`; one retry on a parse or `check` failure."""
    started = time.perf_counter()
    why = ""
    try:
        for attempt in (1, 2):
            call.attempts = attempt
            try:
                reply = await asyncio.wait_for(complete(messages), timeout_s)
            except TimeoutError:
                raise LLMFailure(f"timeout after {timeout_s:g}s") from None
            except Exception as exc:
                raise LLMFailure(f"error: {str(exc)[:200]}") from None
            call.prompt_tokens += reply.prompt_tokens
            call.completion_tokens += reply.completion_tokens
            if reply.cost is not None:
                call.cost = (call.cost or 0.0) + reply.cost
            try:
                parsed = model.model_validate_json(_json_part(reply.text))
                if check is not None:
                    check(parsed)
                return parsed
            except (ValidationError, ValueError) as exc:
                why = " ".join(str(exc).split())[:300]
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": RETRY_PROMPT.format(why)},
                ]
        raise LLMFailure(f"invalid output twice: {why[:200]}")
    finally:
        call.ms = round((time.perf_counter() - started) * 1000, 1)
