"""The one place that orchestrates a chat request.

resolve session → ingest new turns → extract memory → assemble context →
forward (litellm) → record the answer → respond → (off the response path)
extract from the answer, write the request record, release the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi.responses import JSONResponse, Response

from policies.assembly import AssemblyInput
from policies.budget import message_tokens, resolve_budget, split_mandatory
from policies.registry import Policies, Preset
from policies.types import AssembledContext, Turn
from proxy.chat_request import SYSTEM_ROLES, ChatRequest, chain_hashes, message_hash, message_text
from proxy.config import Settings
from proxy.errors import ProxyError
from proxy.memory_state import MemoryState
from proxy.request_log import RequestLog
from proxy.sessions import Conversation, KeyedLocks, Resolution, SessionQueue, SessionResolver
from proxy.store.repo import Store, StoredMessage
from proxy.tokens import TokenCounter, TokenCounters
from proxy.upstream import Target, Upstream

log = logging.getLogger("memproxy.pipeline")

MODES = ("managed", "raw", "shadow", "compare")


@dataclass(slots=True)
class RequestContext:
    request_id: str
    tenant_id: str
    session_header: str | None
    mode_header: str | None
    budget_header: str | None
    policy_header: str | None
    started: float = field(default_factory=time.perf_counter)


@dataclass(slots=True)
class Prepared:
    """Everything decided before the upstream call."""

    ctx: RequestContext
    req: ChatRequest
    target: Target
    mode: str
    preset: Preset
    counter: TokenCounter
    resolution: Resolution | None
    turns: list[Turn]
    forwarded: list[dict[str, Any]]
    raw_tokens: int
    context_tokens: int
    budget: int | None
    assembled: AssembledContext | None
    shadow: AssembledContext | None
    operations: list[dict[str, Any]]
    release: Any  # releases the session ticket (idempotent)
    prefix_share: float | None = None
    proxy_ms: float = 0.0

    @property
    def session_id(self) -> str | None:
        return self.resolution.session.id if self.resolution else None

    def headers(self) -> dict[str, str]:
        out = {
            "X-Memory-Request-Id": self.ctx.request_id,
            "X-Memory-Mode": self.mode,
            "X-Memory-Policy": self.preset.name,
            "X-Memory-Raw-Tokens": str(self.raw_tokens),
            "X-Memory-Context-Tokens": str(self.context_tokens),
        }
        if self.session_id:
            out["X-Memory-Session"] = self.session_id
        if self.budget is not None:
            out["X-Memory-Budget"] = str(self.budget)
        if self.assembled is not None and self.assembled.over_budget:
            out["X-Memory-Over-Budget"] = "1"
        if self.shadow is not None:
            out["X-Memory-Shadow-Tokens"] = str(self.shadow.tokens)
        return out


def count_messages(counter: TokenCounter, messages: Sequence[dict[str, Any]]) -> int:
    return sum(message_tokens(m, counter) for m in messages)


def _clean_answer(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message as a client will send it back next turn."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": c.get("type") or "function",
                "function": {
                    "name": (c.get("function") or {}).get("name"),
                    "arguments": (c.get("function") or {}).get("arguments"),
                },
            }
            for c in message["tool_calls"]
        ]
    return out


def prefix_share(previous: list[dict[str, Any]] | None, current: list[dict[str, Any]]) -> float:
    """Share of `current`'s messages (by serialized size) that equal `previous`'s prefix."""
    if not previous or not current:
        return 0.0
    total = sum(len(json.dumps(m, ensure_ascii=False)) for m in current)
    same = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += len(json.dumps(b, ensure_ascii=False))
    return same / total if total else 0.0


class Pipeline:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        upstream: Upstream,
        policies: Policies,
        request_log: RequestLog,
    ) -> None:
        self.settings = settings
        self.store = store
        self.upstream = upstream
        self.policies = policies
        self.request_log = request_log
        self.counters = TokenCounters()
        self.memory = MemoryState(store)
        self.resolver = SessionResolver(store)
        self.conversation_locks = KeyedLocks()
        self.queue = SessionQueue()
        self._background: set[asyncio.Task[Any]] = set()
        self._last_forwarded: dict[str, list[dict[str, Any]]] = {}

    # --- request entry ---------------------------------------------------------

    def choose_mode(self, header: str | None) -> str:
        mode = (header or self.settings.memory.default_mode).strip().lower()
        if mode not in MODES:
            raise ProxyError(
                400,
                f"X-Memory-Mode: unknown mode {header!r}; expected one of {', '.join(MODES)}",
                param="X-Memory-Mode",
                code="invalid_header",
            )
        return mode

    async def prepare(self, req: ChatRequest, ctx: RequestContext) -> Prepared:
        target = self.upstream.resolve(req.model)
        mode = self.choose_mode(ctx.mode_header)
        try:
            preset = self.policies.preset(ctx.policy_header)
        except ValueError as exc:
            raise ProxyError(
                400, str(exc), param="X-Memory-Policy", code="invalid_header"
            ) from None
        counter = self.counters.for_model(target.provider_model)
        raw_tokens = count_messages(counter, req.messages)
        window = (
            self.upstream.input_window(target)
            if ctx.budget_header is None and (self.settings.memory.budget_tokens is None)
            else None
        )
        try:
            budget = resolve_budget(
                ctx.budget_header,
                self.settings.memory.budget_tokens,
                window,
                req.requested_output,
                default_window=self.settings.memory.default_context_window,
            )
        except ValueError as exc:
            raise ProxyError(
                400, str(exc), param="X-Memory-Budget", code="invalid_header"
            ) from None

        conv = self._conversation(req.messages)
        if not conv.turns:
            # Nothing but system messages: no conversation to manage.
            return Prepared(
                ctx,
                req,
                target,
                mode,
                preset,
                counter,
                None,
                [],
                req.messages,
                raw_tokens,
                raw_tokens,
                budget,
                None,
                None,
                [],
                lambda: None,
            )

        def store_turns(
            msgs: Sequence[dict[str, Any]], start: int, prev: str
        ) -> list[StoredMessage]:
            return self._stored(counter, msgs, start, prev)

        named = ctx.session_header
        # Conversations with different first turns can never match each other, so the
        # resolution lock is per (tenant, first turn) or per named session.
        held = await self.conversation_locks(f"{ctx.tenant_id}:{named or conv.hashes[0]}")
        try:
            if named is not None:
                session = await self.resolver.named_session(ctx.tenant_id, named, conv)
                resolution = None
            else:
                resolution = await self.resolver.resolve(ctx.tenant_id, conv, store_turns)
                session = resolution.session
            ticket = self.queue.enter(session.id)
        finally:
            held.release()
        try:
            await ticket.wait()
            if resolution is None:
                resolution = await self.resolver.resolve_named(session, conv, store_turns)
            return await self._prepare_in_session(
                req,
                ctx,
                target,
                mode,
                preset,
                counter,
                raw_tokens,
                budget,
                conv,
                resolution,
                ticket.release,
            )
        except BaseException:
            ticket.release()
            raise

    async def _prepare_in_session(
        self,
        req: ChatRequest,
        ctx: RequestContext,
        target: Target,
        mode: str,
        preset: Preset,
        counter: TokenCounter,
        raw_tokens: int,
        budget: int,
        conv: Conversation,
        resolution: Resolution,
        release: Any,
    ) -> Prepared:
        session = resolution.session
        if resolution.items_changed:
            self.memory.invalidate(session.id)
        system_msgs = conv.system or (session.system or [])
        turns = self._turns(counter, system_msgs, resolution.prefix, conv.turns)
        operations: list[dict[str, Any]] = []
        system_prompt = "\n".join(message_text(m) for m in system_msgs)
        if preset.extractor is not None and mode != "raw":
            conv_turns = [t for t in turns if t.ordinal >= 0]
            for ordinal, extraction in await self.memory.extract(
                session.id, preset.extractor, conv_turns, resolution.start, system_prompt
            ):
                operations.append(
                    {
                        "ordinal": ordinal,
                        "operation": extraction.operation,
                        "ops": len(extraction.ops),
                        "reason": extraction.reason,
                    }
                )
        client_forward = resolution.kind != "stateful"
        full_messages = [t.raw for t in turns]
        raw_forward = req.messages if client_forward else full_messages
        if resolution.kind == "stateful":
            raw_tokens = sum(t.tokens for t in turns)

        assembled = shadow = None
        if mode == "raw" or preset.assembler is None:
            forwarded = raw_forward
            context_tokens = raw_tokens
        else:
            items = await self.memory.items(session.id)
            managed = self._assemble(preset, turns, items, budget, counter, raw_tokens)
            if mode == "shadow":
                shadow, forwarded, context_tokens = managed, raw_forward, raw_tokens
            else:
                assembled = managed
                forwarded = (
                    raw_forward if managed.passthrough and client_forward else managed.messages
                )
                context_tokens = managed.tokens
        share = prefix_share(self._last_forwarded.get(session.id), forwarded)
        self._last_forwarded[session.id] = forwarded
        prepared = Prepared(
            ctx,
            req,
            target,
            mode,
            preset,
            counter,
            resolution,
            turns,
            forwarded,
            raw_tokens,
            context_tokens,
            budget,
            assembled,
            shadow,
            operations,
            release,
            share,
        )
        prepared.proxy_ms = (time.perf_counter() - ctx.started) * 1000
        return prepared

    def _assemble(
        self,
        preset: Preset,
        turns: list[Turn],
        items: list[Any],
        budget: int,
        counter: TokenCounter,
        raw_tokens: int,
    ) -> AssembledContext:
        system, history, tail = split_mandatory(turns)
        assert preset.assembler is not None
        return preset.assembler.assemble(
            AssemblyInput(
                system=system,
                history=history,
                tail=tail,
                items=items,
                summary=None,
                budget=budget,
                count=counter,
                current_ordinal=turns[-1].ordinal if turns else 0,
                conflict_notes=(),
                raw_tokens=raw_tokens,
            )
        )

    # --- conversions --------------------------------------------------------------

    @staticmethod
    def _conversation(messages: list[dict[str, Any]]) -> Conversation:
        split = 0
        while split < len(messages) and messages[split].get("role") in SYSTEM_ROLES:
            split += 1
        turns = messages[split:]
        hashes = [message_hash(m) for m in turns]
        return Conversation(messages[:split], turns, hashes, chain_hashes(hashes))

    @staticmethod
    def _stored(
        counter: TokenCounter, msgs: Sequence[dict[str, Any]], start: int, previous: str
    ) -> list[StoredMessage]:
        hashes = [message_hash(m) for m in msgs]
        chain = chain_hashes(hashes, previous)
        now = time.time()
        out = []
        for i, (msg, h, c) in enumerate(zip(msgs, hashes, chain, strict=True)):
            text = message_text(msg)
            out.append(
                StoredMessage(
                    ordinal=start + i,
                    role=str(msg.get("role")),
                    message=msg,
                    text=text,
                    tool_call_id=msg.get("tool_call_id"),
                    tool_call_ids=tuple(
                        c2.get("id") for c2 in msg.get("tool_calls") or () if isinstance(c2, dict)
                    ),
                    content_hash=h,
                    chain_hash=c,
                    tokens=message_tokens(msg, counter),
                    created_at=now,
                )
            )
        return out

    @staticmethod
    def _turns(
        counter: TokenCounter,
        system: list[dict[str, Any]],
        prefix: list[StoredMessage],
        client_turns: list[dict[str, Any]],
    ) -> list[Turn]:
        turns: list[Turn] = []
        for i, msg in enumerate(system):
            text = message_text(msg)
            turns.append(
                Turn(i - len(system), str(msg.get("role")), text, msg, message_tokens(msg, counter))
            )
        base = len(prefix)
        for stored in prefix:
            turns.append(
                Turn(
                    stored.ordinal,
                    stored.role,
                    stored.text,
                    stored.message,
                    stored.tokens,
                    stored.tool_call_ids,
                    stored.tool_call_id,
                )
            )
        for i, msg in enumerate(client_turns):
            text = message_text(msg)
            turns.append(
                Turn(
                    base + i,
                    str(msg.get("role")),
                    text,
                    msg,
                    message_tokens(msg, counter),
                    tuple(c.get("id") for c in msg.get("tool_calls") or () if isinstance(c, dict)),
                    msg.get("tool_call_id"),
                )
            )
        return turns

    # --- after the answer -------------------------------------------------------------

    async def record_answer(self, prepared: Prepared, message: dict[str, Any]) -> None:
        """Store the assistant turn before the client can send the next request."""
        if prepared.resolution is None:
            return
        session = prepared.resolution.session
        conv_turns = [t for t in prepared.turns if t.ordinal >= 0]
        ordinal = len(conv_turns)
        previous = ""
        if conv_turns:
            previous = await self._chain_at(session.id, ordinal - 1)
        answer = _clean_answer(message)
        stored = self._stored(prepared.counter, [answer], ordinal, previous)
        # Turns already stored past this point came from a request this one replaces
        # (a regenerate that raced it): their memory goes with them.
        replacing = session.message_count > ordinal
        await self.store.write_turns(
            session, ordinal, stored, drop_items_from=ordinal if replacing else None
        )
        if replacing:
            self.memory.invalidate(session.id)

    async def _chain_at(self, session_id: str, ordinal: int) -> str:
        rows = await self.store.load_messages(session_id, ordinal, ordinal + 1)
        return rows[0].chain_hash if rows else ""

    def finish(
        self,
        prepared: Prepared,
        *,
        status: int,
        answer: dict[str, Any] | None,
        response: dict[str, Any] | None,
        error: str | None,
        usage: dict[str, Any] | None,
        cost: float | None,
        upstream_ms: float | None,
    ) -> None:
        """Off the response path: extract from the answer, log, release the session."""
        task = asyncio.create_task(
            self._finish(prepared, status, answer, response, error, usage, cost, upstream_ms)
        )
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _finish(
        self,
        prepared: Prepared,
        status: int,
        answer: dict[str, Any] | None,
        response: dict[str, Any] | None,
        error: str | None,
        usage: dict[str, Any] | None,
        cost: float | None,
        upstream_ms: float | None,
    ) -> None:
        try:
            if answer is not None and prepared.resolution is not None:
                await self._extract_answer(prepared, answer)
            if prepared.assembled is not None and prepared.resolution is not None:
                await self.memory.mark_used(
                    prepared.resolution.session.id,
                    prepared.assembled.used_item_ids,
                    len([t for t in prepared.turns if t.ordinal >= 0]),
                )
        except Exception:
            log.exception("post-response memory update failed")
        finally:
            prepared.release()
        self.request_log.submit(
            self._record(prepared, status, response, error, usage, cost, upstream_ms)
        )

    async def _extract_answer(self, prepared: Prepared, answer: dict[str, Any]) -> None:
        if prepared.preset.extractor is None or prepared.mode == "raw":
            return
        assert prepared.resolution is not None
        conv_turns = [t for t in prepared.turns if t.ordinal >= 0]
        text = message_text(answer)
        turn = Turn(
            len(conv_turns), "assistant", text, answer, message_tokens(answer, prepared.counter)
        )
        system_prompt = "\n".join(t.text for t in prepared.turns if t.ordinal < 0)
        await self.memory.extract(
            prepared.resolution.session.id,
            prepared.preset.extractor,
            [*conv_turns, turn],
            len(conv_turns),
            system_prompt,
        )

    def _record(
        self,
        prepared: Prepared,
        status: int,
        response: dict[str, Any] | None,
        error: str | None,
        usage: dict[str, Any] | None,
        cost: float | None,
        upstream_ms: float | None,
    ) -> dict[str, Any]:
        def context_record(ctx: AssembledContext | None) -> dict[str, Any] | None:
            if ctx is None:
                return None
            return {
                "tokens": ctx.tokens,
                "budget": ctx.budget,
                "over_budget": ctx.over_budget,
                "passthrough": ctx.passthrough,
                "sections": [vars_of(s) for s in ctx.sections],
                "candidates": [vars_of(c) for c in ctx.candidates],
                "messages": ctx.messages,
            }

        record = {
            "session_kind": prepared.resolution.kind if prepared.resolution else None,
            "operations": prepared.operations,
            "managed": context_record(prepared.assembled),
            "shadow": context_record(prepared.shadow),
            "forwarded": prepared.forwarded,
            "params": dict(prepared.req.params.items()),
            "response": response,
            "error": error,
            "usage": usage,
            "cost": cost,
        }
        return self.request_log.row(
            record=record,
            id=prepared.ctx.request_id,
            tenant_id=prepared.ctx.tenant_id,
            session_id=prepared.session_id,
            mode=prepared.mode,
            policy=prepared.preset.name,
            model=prepared.req.model,
            status=status,
            budget=prepared.budget,
            raw_tokens=prepared.raw_tokens,
            context_tokens=prepared.context_tokens,
            prefix_share=prepared.prefix_share,
            proxy_ms=prepared.proxy_ms,
            upstream_ms=upstream_ms,
        )

    # --- non-streaming ---------------------------------------------------------------

    async def complete(self, prepared: Prepared) -> Response:
        call = self.upstream.build_call(
            prepared.target, prepared.forwarded, prepared.req.params, stream=False
        )
        try:
            completion = await self.upstream.complete(call)
        except ProxyError as exc:
            self.finish(
                prepared,
                status=exc.status,
                answer=None,
                response=None,
                error=exc.message,
                usage=None,
                cost=None,
                upstream_ms=None,
            )
            return exc.response(prepared.headers())
        except BaseException:
            prepared.release()
            raise
        answer = None
        choices = completion.body.get("choices") or []
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            answer = choices[0]["message"]
            try:
                await self.record_answer(prepared, answer)
            except BaseException:
                prepared.release()
                raise
        self.finish(
            prepared,
            status=200,
            answer=answer,
            response=completion.body,
            error=None,
            usage=completion.usage,
            cost=completion.cost,
            upstream_ms=completion.upstream_ms,
        )
        return JSONResponse(completion.body, headers=prepared.headers())

    async def drain(self) -> None:
        """Wait for background work (tests, eval, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        await self.request_log.flush()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.drain()


def vars_of(obj: Any) -> dict[str, Any]:
    return (
        {name: getattr(obj, name) for name in obj.__slots__}
        if hasattr(obj, "__slots__")
        else dict(vars(obj))
    )
