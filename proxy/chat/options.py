"""What a request's headers choose: the memory mode (`X-Memory-Mode`), the
policy preset (`X-Memory-Policy`) and the token budget (`X-Memory-Budget`, else
the configured one, else the model's input window); a 400 naming the header
when one is invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policies.assemble.budget import resolve_budget
from policies.registry import Preset
from proxy.chat.plan import MODES, RequestContext
from proxy.chat_request import ChatRequest
from proxy.errors import ProxyError
from proxy.upstream_wire import Target

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


def request_mode(p: Pipeline, header: str | None) -> str:
    mode = (header or p.settings.memory.default_mode).strip().lower()
    if mode not in MODES:
        raise ProxyError(
            400,
            f"X-Memory-Mode: unknown mode {header!r}; expected one of {', '.join(MODES)}",
            param="X-Memory-Mode",
            code="invalid_header",
        )
    return mode


def request_preset(p: Pipeline, header: str | None) -> Preset:
    try:
        return p.policies.preset(header)
    except ValueError as exc:
        raise ProxyError(400, str(exc), param="X-Memory-Policy", code="invalid_header") from None


def request_budget(p: Pipeline, req: ChatRequest, ctx: RequestContext, target: Target) -> int:
    memory = p.settings.memory
    window = None
    if ctx.budget_header is None and memory.budget_tokens is None:
        window = p.upstream.input_window(target)
    try:
        return resolve_budget(
            ctx.budget_header,
            memory.budget_tokens,
            window,
            req.requested_output,
            default_window=memory.default_context_window,
        )
    except ValueError as exc:
        raise ProxyError(400, str(exc), param="X-Memory-Budget", code="invalid_header") from None
