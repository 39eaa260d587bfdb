"""`memproxy eval`'s scenarios: the files of `shared/eval/FORMAT.md`, the requests a replay sends.

A scenario is a conversation with scripted assistant messages, a final user
message, a budget and the checks scored on the final request. Every assistant
turn is preceded by a request carrying the history before it; the stub
upstream answers each with the scripted message found by the last user / tool
message it receives.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.chat_request import message_text


@dataclass
class Scenario:
    id: str
    language: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    final_user: str
    budget: int
    checks: list[dict[str, Any]]

    @classmethod
    def load(cls, path: Path) -> Scenario:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            id=data["id"],
            language=data.get("language", ""),
            system=data["system"],
            messages=data["messages"],
            tools=data.get("tools") or None,
            final_user=data["final_user"],
            budget=int(data["budget_tokens"]),
            checks=data["checks"],
        )

    def script(self) -> dict[str, deque[dict[str, Any]]]:
        """Scripted replies keyed by the last user/tool message before each."""
        replies: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        last = ""
        for msg in self.messages:
            if msg["role"] in ("user", "tool"):
                last = message_text(msg)
            elif msg["role"] == "assistant":
                reply = {"content": msg.get("content")}
                if msg.get("tool_calls"):
                    reply["tool_calls"] = msg["tool_calls"]
                replies[last].append(reply)
        return replies


def scripted_responder(scenario: Scenario) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """The stub's answers for a replay: each scripted assistant message, found by the
    last user / tool message of the request it answers."""
    script = scenario.script()

    def responder(body: dict[str, Any]) -> dict[str, Any] | None:
        key = ""
        for msg in reversed(body.get("messages") or []):
            if msg.get("role") in ("user", "tool"):
                key = message_text(msg)
                break
        queue = script.get(key)
        return queue.popleft() if queue else None

    return responder


def history_requests(scenario: Scenario) -> list[list[dict[str, Any]]]:
    """What a stock client sends before each scripted assistant message."""
    system = [{"role": "system", "content": scenario.system}]
    return [
        system + scenario.messages[:i]
        for i, msg in enumerate(scenario.messages)
        if msg["role"] == "assistant"
    ]


class EvalError(ValueError):
    """A request `memproxy eval` cannot run (said in one line)."""


def load_scenarios(directory: Path) -> list[Scenario]:
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise EvalError(f"no scenario files in {directory}")
    return [Scenario.load(p) for p in paths]


def select_scenarios(directory: Path, only: Sequence[str]) -> list[Scenario]:
    """The scenarios of `directory`, or only those named (all must exist)."""
    scenarios = load_scenarios(directory)
    if only:
        unknown = sorted(set(only) - {s.id for s in scenarios})
        if unknown:
            known = ", ".join(s.id for s in scenarios)
            raise EvalError(f"no scenario {', '.join(unknown)} in {directory} (there: {known})")
        scenarios = [s for s in scenarios if s.id in only]
    return scenarios
