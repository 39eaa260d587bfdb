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
import json
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from proxy.answers import Tokens, bill, score_answer, usage_tokens
from proxy.app import create_app
from proxy.chat_request import message_text
from proxy.config import ModelEntry, ServerSettings, Settings
from proxy.evaluation import EvalError, Scenario, _free_socket, format_tokens, load_scenarios
from proxy.judge import (
    UNJUDGED,
    CheckVerdict,
    JudgeCall,
    check_messages,
    judge,
    upstream_judge,
)
from proxy.judge import judged_tokens as _judged_tokens
from proxy.stub_upstream import StubUpstream
from proxy.tokens import TokenCounter, encoding_for_model
from proxy.upstream import Upstream

SCRIPT_MODEL = "memproxy-eval-scripted"
ARMS = ("raw", "managed")
# Output tokens assumed per answer when --max-tokens does not bound them.
ASSUMED_ANSWER_TOKENS = 1000
ASSUMED_VERDICT_TOKENS = 80


class ProviderStop(Exception):
    """The provider refused the final request (after the proxy's retries): the run stops."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass
class LiveOptions:
    scenarios: Path
    model: str
    judge: str | None = None
    out: Path | None = None  # a new results file (default: live-eval-<time>.jsonl)
    resume: Path | None = None  # an earlier run's file: run only what it lacks
    max_tokens: int | None = None
    only: Sequence[str] = ()
    policy: str | None = None
    db_path: Path | None = None
    progress: bool = False


@dataclass
class Estimate:
    """What the remaining arms would cost, before anything is sent."""

    model: str
    judge: str | None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0  # a bound (--max-tokens) or an assumption
    judge_calls: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    cost: float | None = None
    judge_cost: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float | None:
        if self.cost is None or (self.judge and self.judge_cost is None):
            return None
        return self.cost + (self.judge_cost or 0.0)

    def text(self) -> str:
        lines = [
            f"{self.requests} final requests to {self.model}: about {self.prompt_tokens} input "
            f"and up to {self.completion_tokens} output tokens"
            + (f" (≈ ${self.cost:.4f})" if self.cost is not None else " (no price known)")
        ]
        if self.judge:
            lines.append(
                f"{self.judge_calls} judge calls to {self.judge}: about "
                f"{self.judge_prompt_tokens} input and {self.judge_completion_tokens} output "
                "tokens"
                + (f" (≈ ${self.judge_cost:.4f})" if self.judge_cost is not None else "")
                + ", more where a malformed verdict is retried"
            )
        total = self.total
        lines.append(
            f"estimated total: ${total:.4f} (prices from litellm's local cost map; "
            "prompt caching can only lower it)"
            if total is not None
            else "estimated total: unknown (a model has no price in litellm's cost map)"
        )
        return "\n".join(lines + self.notes)


# --- the results file ---------------------------------------------------------------


def read_results(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the run's header, its result and error lines); a torn last line is ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc.strerror}") from None
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # written when the run was killed mid-line
    if not rows or rows[0].get("type") != "run":
        raise EvalError(f"{path} is not a `memproxy eval --live` results file")
    return rows[0], rows[1:]


def _append(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()


def open_results(options: LiveOptions) -> tuple[Path, set[tuple[str, str]]]:
    """The file results go to and the (scenario, arm) pairs it already holds."""
    if options.resume is not None:
        header, rows = read_results(options.resume)
        for key, given in (("model", options.model), ("judge", options.judge)):
            if header.get(key) != given:
                raise EvalError(
                    f"{options.resume} is a run with --{key} {header.get(key)}; "
                    f"resume it with the same --{key}"
                )
        done = {(r["scenario"], r["arm"]) for r in rows if r.get("type") == "result"}
        return options.resume, done
    path = options.out or Path(time.strftime("live-eval-%Y%m%dT%H%M%SZ.jsonl", time.gmtime()))
    if path.exists():
        raise EvalError(f"{path} exists; give a new file for --out, or --resume {path}")
    header = {
        "type": "run",
        "model": options.model,
        "judge": options.judge,
        "scenarios": str(options.scenarios),
        "policy": options.policy or "default",
        "started_at": time.time(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    _append(path, header)
    return path, set()


# --- settings, estimate ---------------------------------------------------------------


def check_models(settings: Settings, options: LiveOptions) -> None:
    names = [e.model_name for e in settings.model_list]
    for flag, name in (("--model", options.model), ("--judge", options.judge)):
        if name is not None and settings.find_model(name) is None:
            raise EvalError(
                f"{flag} {name!r} is not a model_list model_name in the config "
                f"(there: {', '.join(names) or 'none'})"
            )


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


def final_messages(scenario: Scenario) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": scenario.system},
        *scenario.messages,
        {"role": "user", "content": scenario.final_user},
    ]


def estimate(
    upstream: Upstream,
    todo: Sequence[tuple[Scenario, str]],
    options: LiveOptions,
) -> Estimate:
    """Tokens of the remaining final requests (managed: at most its budget) and judge
    calls, priced with litellm's local cost map."""
    target = upstream.resolve(options.model)
    counter = TokenCounter(encoding_for_model(target.provider_model))
    answer_tokens = options.max_tokens or ASSUMED_ANSWER_TOKENS
    est = Estimate(options.model, options.judge, requests=len(todo))
    for scenario, arm in todo:
        raw = format_tokens(counter, final_messages(scenario))
        est.prompt_tokens += raw if arm == "raw" else min(raw, int(scenario.budget * 1.05))
        est.completion_tokens += answer_tokens
        if options.judge:
            for check in scenario.checks:
                rubric = check_messages(check, scenario.final_user, "")
                est.judge_calls += 1
                est.judge_prompt_tokens += format_tokens(counter, rubric) + answer_tokens
                est.judge_completion_tokens += ASSUMED_VERDICT_TOKENS
    if options.max_tokens is None:
        est.notes.append(
            f"(output assumed {ASSUMED_ANSWER_TOKENS} tokens an answer; --max-tokens bounds it)"
        )
    est.cost = bill(
        upstream.prices(options.model), Tokens(est.prompt_tokens, est.completion_tokens)
    )
    if options.judge:
        est.judge_cost = bill(
            upstream.prices(options.judge),
            Tokens(est.judge_prompt_tokens, est.judge_completion_tokens),
        )
    memory = upstream.settings.memory
    if "llm" in (memory.extractor, memory.summarizer):
        est.notes.append(
            f"(memory.extractor/summarizer: llm calls {memory.llm_model} on every request "
            "of the history too; those calls are not in this estimate)"
        )
    return est


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
    sock = _free_socket()
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
    script = scenario.script()

    def responder(body: dict[str, Any]) -> dict[str, Any] | None:
        key = ""
        for msg in reversed(body.get("messages") or []):
            if msg.get("role") in ("user", "tool"):
                key = message_text(msg)
                break
        queue = script.get(key)
        return queue.popleft() if queue else None

    stub.reset()
    stub.state.responder = responder
    system = [{"role": "system", "content": scenario.system}]
    history = [
        system + scenario.messages[:i]
        for i, msg in enumerate(scenario.messages)
        if msg["role"] == "assistant"
    ]
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
        "cost": bill(upstream.prices(opts.model), tokens),
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
            spent.add(_judged_tokens(judged))
            if judged.parsed is None:
                verdicts[check["id"]] = {"verdict": UNJUDGED, "reason": judged.reason}
            else:
                verdicts[check["id"]] = judged.parsed.model_dump()
        row["judge"] = verdicts
        row["judge_tokens"] = spent.as_dict()
        row["judge_cost"] = bill(upstream.prices(opts.judge), spent)
    return row


def select(scenarios: list[Scenario], only: Sequence[str], directory: Path) -> list[Scenario]:
    if not only:
        return scenarios
    unknown = sorted(set(only) - {s.id for s in scenarios})
    if unknown:
        known = ", ".join(s.id for s in scenarios)
        raise EvalError(f"no scenario {', '.join(unknown)} in {directory} (there: {known})")
    return [s for s in scenarios if s.id in only]


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
                    _append(path, {"type": "error", "scenario": scenario.id, "arm": arm,
                                   "status": stop.status, "message": stop.message,
                                   "at": time.time()})  # fmt: skip
                    return f"{scenario.id} ({arm}): the provider answered {stop}"
                _append(path, await score_arm(scenario, arm, got, upstream, options, judge_call))
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
