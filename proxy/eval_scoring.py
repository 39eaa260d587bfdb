"""`memproxy eval`'s scores: computed on what reached the upstream, as `shared/eval/FORMAT.md` says.

The token count of FORMAT.md, one scenario's result, and the checks of the
final request: which expected values the context lost (missed) and which
superseded ones it still states as current (stale).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proxy.answers import fold
from proxy.chat_request import message_text
from proxy.eval_scenarios import Scenario
from proxy.tokens import TokenCounter


def format_tokens(counter: TokenCounter, messages: list[dict[str, Any]]) -> int:
    """FORMAT.md's count: cl100k tokens of the contents plus 4 per message."""
    total = 0
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        total += counter(content or "") + 4
    return total


@dataclass
class ScenarioResult:
    id: str
    rounds: int = 0
    recall: float = 0.0
    missed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    over_budget_rounds: int = 0
    final_ratio: float = 0.0
    mean_ratio: float = 0.0
    final_tokens: int = 0
    mean_tokens: float = 0.0
    # Mean share of each request's prompt that repeats the previous request's
    # leading messages (the request records' `prefix_share`; first request excluded).
    prefix_share: float = 0.0
    errors: int = 0
    # Requests answered without memory because the store did not answer in time
    # (`X-Memory-Degraded`): on an overloaded machine they make a run differ.
    degraded: int = 0
    # The request records of the replay, in order (`memproxy inspect ID`).
    request_ids: list[str] = field(default_factory=list)


def _without_empty(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if v is not None}


def score_final(
    scenario: Scenario, forwarded: list[dict[str, Any]], client: list[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """(missed check ids, stale check ids) on the final request."""
    context = (
        forwarded[:-1]
        if forwarded and forwarded[-1].get("content") == scenario.final_user
        else forwarded
    )
    whole = fold("\n".join(message_text(m) for m in context))
    # A client message is compared without its empty fields: litellm drops a
    # tool-call message's `"content": null` on the way, which changes no byte
    # of what the model reads.
    own = [_without_empty(m) for m in client]
    generated = [m for m in forwarded if _without_empty(m) not in own]
    generated_lines = [fold(line) for m in generated for line in message_text(m).splitlines()]
    missed, stale = [], []
    for check in scenario.checks:
        expect = [fold(p) for p in check["expect_any"]]
        if not any(p in whole for p in expect):
            missed.append(check["id"])
        stale_any = [fold(p) for p in check.get("stale_any") or ()]
        for line in generated_lines:
            if any(s in line for s in stale_any) and not any(p in line for p in expect):
                stale.append(check["id"])
                break
    return missed, stale
