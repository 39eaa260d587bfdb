"""`memproxy eval --live --model NAME`: the scenarios' final questions, answered by the
user's own model through the proxy in raw and managed mode, and the answers scored.

A client's history is replayed as `memproxy eval` replays it (FORMAT.md): one
request before every scripted assistant turn, back to back, no session header,
`X-Memory-Budget` set. Those turns are the scenario's own, so the requests that
precede them go to a local stub that answers with them (model `SCRIPT_MODEL`,
with the live model's tokenizer); only the final request goes to the provider,
and its answer is scored (`proxy.answers`) and, with `--judge`, judged
(`proxy.judge`). Each arm has its own tenant (its bearer token), so the arms'
sessions never meet.

Every finished arm is appended to a JSONL file at once: an interrupted run (a
provider error, Ctrl-C) leaves a readable partial report, and `--resume FILE`
runs only what is missing. Before anything is spent, an estimate (tokens ×
litellm's local prices) is shown and must be confirmed.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from proxy.answers import Tokens, bill, score_answer, usage_tokens
from proxy.chat_request import message_text
from proxy.eval_scenarios import Scenario, history_requests, load_scenarios, scripted_responder
from proxy.evaluation import free_socket
from proxy.http.app import create_app
from proxy.judge import (
    UNJUDGED,
    CheckVerdict,
    JudgeCall,
    check_messages,
    judge,
    judged_tokens,
    upstream_judge,
)
from proxy.live_plan import (
    ARMS,
    Estimate,
    LiveOptions,
    append_result,
    check_models,
    estimate,
    final_messages,
    open_results,
    read_results,
    select,
)
from proxy.settings import ModelEntry, ServerSettings, Settings
from proxy.stub.server import StubUpstream
from proxy.upstream import Upstream

SCRIPT_MODEL = "memproxy-eval-scripted"


class ProviderStop(Exception):
    """The provider refused the final request (after the proxy's retries): the run stops."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def live_settings(user: Settings, model: str, stub_url: str, db: Path) -> Settings:
    """The user's settings (models, memory policy, retries) with a private store and
    the scripted model that answers the history's requests."""
    entry = user.find_model(model)
    assert entry is not None
    bare = str(entry.litellm_params["model"]).rsplit("/", 1)[-1]
    scripted = ModelEntry(
        model_name=SCRIPT_MODEL,
        # The live model's name, so that the proxy counts with its tokenizer.
        litellm_params={"model": f"openai/{bare}", "api_base": stub_url, "api_key": "eval"},
        model_info=dict(entry.model_info),
    )
    memory = user.memory.model_copy(
        update={"database_url": f"sqlite+aiosqlite:///{db}", "ab_split": None}
    )
    server = ServerSettings(
        request_timeout_s=user.server.request_timeout_s,
        connect_timeout_s=user.server.connect_timeout_s,
        num_retries=user.server.num_retries,
    )
    return user.model_copy(
        update={"model_list": [*user.model_list, scripted], "memory": memory, "server": server}
    )


# --- the run ----------------------------------------------------------------------------


@dataclass
class LiveOutcome:
    path: Path
    report: dict[str, Any]
    estimate: Estimate | None = None
    stopped: str | None = None  # why the run stopped early
    cancelled: bool = False  # the estimate was not confirmed


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """The proxy on a free loopback port, and a client for it."""
    app = create_app(settings)
    sock = free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        timeout = settings.server.request_timeout_s + 30
        async with httpx.AsyncClient(base_url=url, timeout=timeout) as client:
            yield client, app
    finally:
        server.should_exit = True
        await task
        sock.close()


@dataclass
class ArmAnswer:
    answer: str
    usage: dict[str, Any] | None
    request_id: str
    raw_tokens: int
    context_tokens: int
    history_errors: int


async def replay_arm(
    client: httpx.AsyncClient, stub: StubUpstream, scenario: Scenario, arm: str, opts: LiveOptions
) -> ArmAnswer:
    """The history through the scripted model, then the final request to the live one."""
    stub.reset()
    stub.state.responder = scripted_responder(scenario)
    history = history_requests(scenario)
    headers = {
        "X-Memory-Mode": arm,
        "X-Memory-Budget": str(scenario.budget),
        # One tenant per arm and scenario: the arms' sessions never match each other.
        "Authorization": f"Bearer memproxy-eval-{arm}-{scenario.id}",
    }
    if opts.policy and arm == "managed":
        headers["X-Memory-Policy"] = opts.policy
    extra: dict[str, Any] = {"tools": scenario.tools} if scenario.tools else {}
    errors = 0
    for messages in history:
        body = {"model": SCRIPT_MODEL, "messages": messages, **extra}
        resp = await client.post("/v1/chat/completions", json=body, headers=headers)
        errors += resp.status_code != 200
    final: dict[str, Any] = {"model": opts.model, "messages": final_messages(scenario), **extra}
    if opts.max_tokens:
        final["max_tokens"] = opts.max_tokens
    resp = await client.post("/v1/chat/completions", json=final, headers=headers)
    if resp.status_code != 200:
        try:
            said = str(resp.json()["error"]["message"])
        except (ValueError, KeyError, TypeError):
            said = resp.text[:300]
        raise ProviderStop(resp.status_code, said)
    data = resp.json()
    choice = (data.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    answer = message_text(message) if message.get("content") else ""
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        answer += f"\n→ {fn.get('name')}({fn.get('arguments')})"
    return ArmAnswer(
        answer=answer,
        usage=data.get("usage"),
        request_id=resp.headers.get("X-Memory-Request-Id", ""),
        raw_tokens=int(resp.headers.get("X-Memory-Raw-Tokens") or 0),
        context_tokens=int(resp.headers.get("X-Memory-Context-Tokens") or 0),
        history_errors=errors,
    )


async def score_arm(
    scenario: Scenario,
    arm: str,
    got: ArmAnswer,
    upstream: Upstream,
    opts: LiveOptions,
    judge_call: JudgeCall | None,
) -> dict[str, Any]:
    """The results-file line of one arm: scores, verdicts, tokens and money."""
    score = score_answer(scenario.checks, got.answer)
    tokens = usage_tokens(got.usage)
    row: dict[str, Any] = {
        "type": "result",
        "scenario": scenario.id,
        "arm": arm,
        "checks": len(scenario.checks),
        "present": score.present,
        "missed": score.missed,
        "stale": score.stale,
        "judge": None,
        "tokens": tokens.as_dict(),
        "cost": bill(upstream.pricing.prices(opts.model), tokens),
        "judge_tokens": None,
        "judge_cost": None,
        "raw_tokens": got.raw_tokens,
        "context_tokens": got.context_tokens,
        "history_errors": got.history_errors,
        "request_id": got.request_id,
        "answer": got.answer,
        "at": time.time(),
    }
    if judge_call is not None and opts.judge:
        verdicts: dict[str, dict[str, Any]] = {}
        spent = Tokens()
        for check in scenario.checks:
            judged = await judge(
                judge_call, check_messages(check, scenario.final_user, got.answer), CheckVerdict
            )
            spent.add(judged_tokens(judged))
            if judged.parsed is None:
                verdicts[check["id"]] = {"verdict": UNJUDGED, "reason": judged.reason}
            else:
                verdicts[check["id"]] = judged.parsed.model_dump()
        row["judge"] = verdicts
        row["judge_tokens"] = spent.as_dict()
        row["judge_cost"] = bill(upstream.pricing.prices(opts.judge), spent)
    return row


async def run_live(
    user_settings: Settings,
    options: LiveOptions,
    confirm: Callable[[Estimate], bool],
) -> LiveOutcome:
    """Run what the results file lacks; `confirm` sees the estimate before any spend."""
    from proxy.live_report import build_report

    check_models(user_settings, options)
    scenarios = select(load_scenarios(options.scenarios), options.only, options.scenarios)
    path, done = open_results(options)
    todo = [(s, arm) for s in scenarios for arm in ARMS if (s.id, arm) not in done]
    if not todo:
        return LiveOutcome(path, build_report(*read_results(path)))
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        db = options.db_path or Path(tmp) / "live-eval.db"
        settings = live_settings(user_settings, options.model, stub.url, db)
        upstream = Upstream(settings)
        await asyncio.to_thread(upstream.load)
        est = estimate(upstream, todo, options)
        if not confirm(est):
            return LiveOutcome(path, build_report(*read_results(path)), est, cancelled=True)
        stopped = await _run_arms(settings, stub, todo, options, path)
    return LiveOutcome(path, build_report(*read_results(path)), est, stopped=stopped)


async def _run_arms(
    settings: Settings,
    stub: StubUpstream,
    todo: Sequence[tuple[Scenario, str]],
    options: LiveOptions,
    path: Path,
) -> str | None:
    async with serving(settings) as (client, app):
        upstream: Upstream = app.state.services.upstream
        await upstream.ready()
        judge_call = upstream_judge(upstream, options.judge) if options.judge else None
        with _Progress(options.progress, len(todo)) as advance:
            for scenario, arm in todo:
                try:
                    got = await replay_arm(client, stub, scenario, arm, options)
                except ProviderStop as stop:
                    append_result(path, {"type": "error", "scenario": scenario.id, "arm": arm,
                                   "status": stop.status, "message": stop.message,
                                   "at": time.time()})  # fmt: skip
                    return f"{scenario.id} ({arm}): the provider answered {stop}"
                append_result(
                    path, await score_arm(scenario, arm, got, upstream, options, judge_call)
                )
                advance(f"{scenario.id} ({arm})")
        await app.state.services.pipeline.drain()
    return None


class _Progress:
    """A rich progress bar on stderr (or nothing), advanced once per finished arm."""

    def __init__(self, show: bool, total: int) -> None:
        self.show, self.total = show, total
        self._bar: Any = None

    def __enter__(self) -> Callable[[str], None]:
        if not self.show:
            return lambda _label: None
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.start()
        task = self._bar.add_task("live eval", total=self.total)

        def advance(label: str) -> None:
            self._bar.update(task, advance=1, description=f"live eval · {label}")

        return advance

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
