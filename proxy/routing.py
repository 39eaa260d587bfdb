"""Retries with backoff, then ordered fallbacks over `model_list` entries.

litellm's Router offers the same, but it keeps per-deployment state (cooldowns,
failure counts) that makes one request's route depend on earlier ones, and it
does not tell us which attempts it made. This loop is small, stateless and
records every attempt, so the request record says which model answered and why.
It never imports litellm: `proxy.upstream` hands it the call and an error mapper.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from proxy.errors import ProxyError
from proxy.settings import Settings

T = TypeVar("T")

# Client-side problems (400, 413, 422) fail the same way everywhere: no retry and
# no fallback. An entry the provider refuses (bad key, unknown model) may still
# have a working fallback, but retrying it is pointless.
_FALL_BACK_ONLY = frozenset({401, 403, 404})


class Call(dict[str, Any]):
    """The keyword arguments of one litellm call, plus the entries to fall back to.

    A dict, so callers may still adjust fields (`call["num_retries"] = 0`).
    """

    def __init__(
        self, model_name: str, fields: dict[str, Any], fallbacks: Sequence[Call] = ()
    ) -> None:
        super().__init__(fields)
        self.model_name = model_name
        self.fallbacks = list(fallbacks)


def retryable(error: ProxyError) -> bool:
    """Worth another try on the same entry: unreachable, timed out, throttled, 5xx."""
    return error.status in (408, 409, 429) or error.status >= 500


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        seconds = email.utils.mktime_tz(parsed) - time.time()
    return max(0.0, seconds) if seconds == seconds else None  # NaN is no answer


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    num_retries: int = 0
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        router = settings.router_settings
        return cls(
            num_retries=settings.num_retries,
            backoff_s=router.retry_backoff_s,
            backoff_max_s=router.retry_backoff_max_s,
            retry_after_max_s=router.retry_after_max_s,
        )

    def delay(self, error: ProxyError, retry: int) -> float | None:
        """Seconds to wait before retry number `retry` (0-based); None: give this entry up.

        The provider's `Retry-After` is honoured exactly, up to `retry_after_max_s`;
        a longer one is not waited for (a fallback, or the client, may do better).
        Otherwise exponential backoff with jitter, so that retries do not align.
        """
        asked = retry_after_seconds(error.headers.get("Retry-After"))
        if asked is not None:
            return asked if asked <= self.retry_after_max_s else None
        ceiling = min(self.backoff_s * 2.0**retry, self.backoff_max_s)
        return ceiling / 2 + random.random() * ceiling / 2


@dataclass(slots=True)
class RouteLog:
    """Every attempt of one request, for its record."""

    attempts: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None  # the entry that answered

    def record(self) -> dict[str, Any]:
        first = self.attempts[0]["model"] if self.attempts else None
        return {
            "model": self.model,
            "fallback": self.model is not None and self.model != first,
            "retries": max(0, len(self.attempts) - 1),
            "attempts": self.attempts,
        }


async def run_routed(
    call: Call,
    policy: RetryPolicy,
    attempt: Callable[[Call], Awaitable[T]],
    map_error: Callable[[BaseException], ProxyError],
) -> tuple[T, RouteLog]:
    """Run `attempt` on `call`, retrying and falling back as `policy` and the call say.

    The retry count comes from the call (`num_retries`), so a caller with its
    own deadline can turn retries off. The final error carries the route.
    """
    retries = int(call.get("num_retries") or 0)
    route = RouteLog()
    error: ProxyError | None = None
    for entry in (call, *call.fallbacks):
        for n in range(retries + 1):
            started = time.perf_counter()
            try:
                result = await attempt(entry)
            except Exception as exc:
                error = exc if isinstance(exc, ProxyError) else map_error(exc)
                ms = round((time.perf_counter() - started) * 1000, 1)
                tried: dict[str, Any] = {
                    "model": entry.model_name,
                    "status": error.status,
                    "code": error.code,
                    "ms": ms,
                }
                route.attempts.append(tried)
                if not retryable(error) or n == retries:
                    break
                wait = policy.delay(error, n)
                if wait is None:
                    break
                tried["wait_s"] = round(wait, 3)
                await asyncio.sleep(wait)
                continue
            route.attempts.append(
                {
                    "model": entry.model_name,
                    "status": 200,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                }
            )
            route.model = entry.model_name
            return result, route
        assert error is not None
        if not (retryable(error) or error.status in _FALL_BACK_ONLY):
            break
    assert error is not None
    if len(route.attempts) > 1:
        error.message = f"{error.message} (gave up after {len(route.attempts)} attempts)"
    error.route = route.record()
    raise error
