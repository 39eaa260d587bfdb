"""LLM-backed extraction and summarisation, behind an injected completion callable.

`policies/` never imports the proxy: the proxy hands in `complete(messages)
-> LLMReply` (a configured model through litellm) and runs these off the
response path, in session order. Each policy asks for one JSON object,
validates it against a schema (and against the source text: extracted values
must be verbatim), asks once more on a parse or validation failure, and
otherwise falls back to the rule-based policy, on an error or a timeout too.
Every call is accounted (`PolicyCall`: attempts, tokens, cost, outcome) so the
request that caused it can record it.

The sync `extract` / `summarize` methods are the rule-based fallback itself:
the response path never waits for a model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from policies.assemble.summary import DatedTurn, RuleSummarizer, render_chunks, sentence_score
from policies.base import ExtractionPolicy
from policies.language.cues import negated
from policies.language.text import normalize
from policies.language.values import extract_values, value_signature
from policies.types import (
    Add,
    Confirm,
    Extraction,
    ExtractionContext,
    MemoryItem,
    MemoryOp,
    Revoke,
    SummaryChunk,
    SummaryLine,
    Supersede,
    Turn,
)

_LIVE = frozenset({"active", "pending"})
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


# --- extraction ---------------------------------------------------------------------------

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


# --- summarisation ------------------------------------------------------------------------

SUMMARY_SYSTEM = """You extend the rolling summary of a conversation.
You get the summary so far (do not repeat or rewrite it) and the turns that
now leave the context window. Write at most one short line per turn that
matters; skip chit-chat. Reply with one JSON object only:
{"lines": [{"ordinal": <turn number>, "text": "what the turn established"}]}
Rules: copy numbers, dates, amounts, IDs, names and negations exactly
("don't", "never", "不要"); never present an old value as current when a later
turn changed it."""


class _LineOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ordinal: int
    text: str = Field(min_length=1, max_length=2000)


class _SummaryOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    lines: list[_LineOut] = Field(default_factory=list)


def _in_span(start: int, upto: int) -> Callable[[_SummaryOut], None]:
    def check(out: _SummaryOut) -> None:
        for line in out.lines:
            if not start <= line.ordinal < upto:
                raise ValueError(f"ordinal {line.ordinal} is outside [{start}, {upto})")

    return check


def _missing_protected(rule: SummaryLine | None, text: str) -> list[str]:
    """Protected sentences of the rule line whose values or negation the LLM text lost."""
    if rule is None:
        return []
    have = {value_signature(v) for v in extract_values(text)}
    out = []
    for sentence in rule.sentences:
        if not sentence_score(sentence, rule.role)[1]:
            continue
        wanted = {value_signature(v) for v in extract_values(sentence)}
        if not wanted <= have or (negated(sentence) and not negated(text)):
            out.append(sentence)
    return out


class LLMSummarizer:
    """The model writes the new chunk; protected content is checked against the rules.

    The model only writes lines for the evicted turns (the summary so far is
    context, never rewritten). Any protected sentence (numbers, dates, IDs,
    names, negations) whose values the model's line lost is appended to that
    line verbatim, and a turn the model skipped that had protected content
    keeps its rule-based line: protected content is never paraphrased away.
    """

    name: str = "llm"

    def __init__(self, complete: Complete, fallback: RuleSummarizer, timeout_s: float = 30.0):
        self.complete, self.fallback, self.timeout_s = complete, fallback, timeout_s

    def summarize(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> SummaryChunk:
        return self.fallback.summarize(previous, turns, start, upto)

    def _prompt(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn]
    ) -> list[dict[str, Any]]:
        so_far = "\n".join(render_chunks(previous)) or "(empty)"
        listing = "\n".join(
            json.dumps(
                {"ordinal": d.turn.ordinal, "date": d.date, "role": d.turn.role,
                 "text": d.turn.text[:4000]},
                ensure_ascii=False,
            )
            for d in turns
            if d.turn.role in ("user", "assistant", "tool") and d.turn.text.strip()
        )  # fmt: skip
        user = f"Summary so far:\n{so_far}\n\nTurns leaving the window:\n{listing}"
        return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": user}]

    async def summarize_async(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> tuple[SummaryChunk, PolicyCall]:
        rules = self.fallback.summarize(previous, turns, start, upto)
        call = PolicyCall("summarizer", upto)
        try:
            out = await ask_json(
                self.complete,
                self._prompt(previous, turns),
                _SummaryOut,
                call,
                self.timeout_s,
                _in_span(start, upto),
            )
        except LLMFailure as exc:
            call.outcome = f"fallback: {exc}"
            return rules, call
        by_ordinal = {ln.ordinal: ln for ln in rules.lines}
        dated = {d.turn.ordinal: d for d in turns}
        written: dict[int, SummaryLine] = {}
        for raw in out.lines:
            source = dated.get(raw.ordinal)
            if source is None or raw.ordinal in written:
                continue
            rule = by_ordinal.get(raw.ordinal)
            text = " ".join(raw.text.split())
            missing = _missing_protected(rule, text)
            written[raw.ordinal] = SummaryLine(
                ordinal=raw.ordinal,
                role=source.turn.role,
                date=source.date,
                sentences=(text, *missing),
                score=rule.score if rule else 1.0,
                protected=bool(rule and rule.protected),
            )
        for ordinal, rule in by_ordinal.items():
            if ordinal not in written and rule.protected:
                written[ordinal] = rule
        lines = tuple(written[o] for o in sorted(written))
        return SummaryChunk(start, upto, lines, "llm"), call


__all__ = [
    "Complete",
    "LLMExtractor",
    "LLMFailure",
    "LLMReply",
    "LLMSummarizer",
    "PolicyCall",
    "ask_json",
]
