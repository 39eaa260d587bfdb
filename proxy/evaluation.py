"""`memproxy eval`: replay memory scenarios through the proxy over HTTP and score them.

Exactly as `shared/eval/FORMAT.md` says: a local stub upstream answers with the
scenario's scripted assistant messages (found by the last user/tool message it
receives); every assistant turn is preceded by a request carrying the history
before it, back to back, no session header, `X-Memory-Budget` set; then the
final user message. Scores are computed on what reached the upstream.

This module runs the replay (the proxy served on a local port, the stub as its
upstream); the scenarios are read in `proxy/eval_scenarios.py`, scored in
`proxy/eval_scoring.py` and reported in `proxy/eval_report.py`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from policies.registry import EXTRACTORS
from proxy.config import settings_from_dict
from proxy.eval_report import build_report
from proxy.eval_scenarios import (
    EvalError,
    Scenario,
    history_requests,
    scripted_responder,
    select_scenarios,
)
from proxy.eval_scoring import ScenarioResult, format_tokens, score_final
from proxy.eval_wire import APIS, wire_request
from proxy.http.app import create_app
from proxy.llm_policies import make_completion
from proxy.llm_replies import RecordedReplies, load_replies
from proxy.settings import ModelEntry, Settings
from proxy.stub.server import StubUpstream
from proxy.tokens import TokenCounter


async def _replay(
    client: httpx.AsyncClient,
    stub: StubUpstream,
    scenario: Scenario,
    counter: TokenCounter,
    mode: str,
    policy: str | None,
    app: Any = None,
    api: str = "chat",
) -> ScenarioResult:
    stub.reset()
    stub.state.responder = scripted_responder(scenario)
    requests = history_requests(scenario)
    system = [{"role": "system", "content": scenario.system}]
    requests.append(system + scenario.messages + [{"role": "user", "content": scenario.final_user}])
    headers = {"X-Memory-Budget": str(scenario.budget), "X-Memory-Mode": mode}
    if policy:
        headers["X-Memory-Policy"] = policy
    result = ScenarioResult(scenario.id, rounds=len(requests))
    ratios, tokens = [], []
    request_ids: list[str] = []
    for messages in requests:
        body: dict[str, Any] = {"model": "stub", "messages": messages}
        if scenario.tools:
            body["tools"] = scenario.tools
        before = len(stub.received)
        path, wire_body = wire_request(api, body)
        resp = await client.post(path, json=wire_body, headers=headers)
        if resp.status_code != 200 or len(stub.received) == before:
            result.errors += 1
            continue
        request_ids.append(resp.headers.get("X-Memory-Request-Id", ""))
        result.degraded += resp.headers.get("X-Memory-Degraded") == "1"
        forwarded = stub.received[-1].body["messages"]
        sent = format_tokens(counter, forwarded)
        raw = format_tokens(counter, messages)
        tokens.append(sent)
        ratios.append(sent / raw if raw else 1.0)
        if sent > scenario.budget * 1.05:
            result.over_budget_rounds += 1
        if messages is requests[-1]:
            result.missed, result.stale = score_final(scenario, forwarded, messages)
            result.final_ratio, result.final_tokens = ratios[-1], sent
    checks = len(scenario.checks) or 1
    result.recall = (len(scenario.checks) - len(result.missed)) / checks
    result.mean_ratio = sum(ratios) / len(ratios) if ratios else 0.0
    result.mean_tokens = sum(tokens) / len(tokens) if tokens else 0.0
    result.prefix_share = await _mean_prefix_share(app, request_ids)
    result.request_ids = request_ids
    return result


async def _mean_prefix_share(app: Any, request_ids: list[str]) -> float:
    """Mean recorded prefix share over the scenario's requests, the first excluded."""
    if app is None or len(request_ids) < 2:
        return 0.0
    services = app.state.services
    await services.pipeline.drain()
    shares = []
    for request_id in request_ids[1:]:
        row = await services.store.get_request(request_id) if request_id else None
        if row is not None and row["prefix_share"] is not None:
            shares.append(float(row["prefix_share"]))
    return sum(shares) / len(shares) if shares else 0.0


async def _records(app: Any, request_ids: list[str]) -> list[dict[str, Any]]:
    store = app.state.services.store
    rows = []
    for request_id in request_ids:
        row = await store.get_request(request_id) if request_id else None
        if row is not None:
            rows.append({**row, "record": json.loads(row["record_json"])})
    return rows


def free_socket() -> socket.socket:
    # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted connections;
    # without it every response waits ~40 ms for the peer's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def new_db_path(path: Path) -> Path:
    """`--db`: absolute, and new (ids of an earlier run would mix with this one's)."""
    if path.exists():
        raise EvalError(f"{path} exists; give a new file for --db")
    return path.resolve()


def _eval_settings(
    stub_url: str,
    db: Path,
    extractor: str,
    replies: RecordedReplies | None,
    llm_live: ModelEntry | None,
) -> Settings:
    """The proxy's settings for a run: the stub upstream as the only model, the
    store in `db`, the extractor; with `llm_live`, that model beside the stub,
    answering the extractor's prompts."""
    settings = settings_from_dict(
        {
            "model_list": [
                {
                    "model_name": "stub",
                    "litellm_params": {
                        "model": "openai/stub-model",
                        "api_base": stub_url,
                        "api_key": "eval",
                    },
                }
            ],
            "memory": {
                "database_url": f"sqlite+aiosqlite:///{db}",
                **({"extractor": extractor, "llm_model": "stub"} if replies is not None else {}),
            },
        },
        env={},
    )
    if llm_live is not None:
        memory = settings.memory.model_copy(update={"llm_model": llm_live.model_name})
        listed = [*settings.model_list, llm_live]
        settings = settings.model_copy(update={"model_list": listed, "memory": memory})
    return settings


@asynccontextmanager
async def _served(app: Any) -> AsyncIterator[int]:
    """Serve `app` on a free local port (yielded) until the block ends."""
    sock = free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
        await asyncio.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await serving
        sock.close()


async def run_eval(
    directory: Path,
    *,
    mode: str = "managed",
    policy: str | None = None,
    progress: bool = False,
    on_records: Callable[[Scenario, list[dict[str, Any]]], None] | None = None,
    only: Sequence[str] = (),
    db_path: Path | None = None,
    api: str = "chat",
    extractor: str = "rules",
    llm_replies: Path | None = None,
    llm_record: Path | None = None,
    llm_live: ModelEntry | None = None,
) -> dict[str, Any]:
    """Replay every scenario in `directory` and score it; `on_records` gets each
    scenario's request rows (record parsed) for analyses beyond the scores.

    `only`: scenario ids to run (all when empty). `db_path`: an absolute path
    for a new SQLite file that keeps the store, request records included,
    after the run, so that `memproxy inspect` can show what each request sent
    and why (else a temporary one; see `new_db_path`). `api`: the wire API the
    requests go through (chat | responses | messages; `proxy.eval_wire`).
    `extractor`: `memory.extractor`; an LLM-backed one is answered offline from
    the recording `llm_replies` (`proxy.llm_replies`; a prompt it lacks falls
    back to the rules and is counted in the report's `llm_replies`), and
    `llm_record` (a new file) gets every prompt asked, for a recording;
    `llm_live` (a model_list entry of the user's) answers what the recording
    lacks, live, and its replies are recorded."""
    if api not in APIS:
        raise EvalError(f"unknown api {api!r}; expected one of {', '.join(APIS)}")
    replies = _recorded(extractor, llm_replies, llm_record, llm_live is not None)
    scenarios = select_scenarios(directory, only)
    counter = TokenCounter("cl100k_base")
    results: list[ScenarioResult] = []
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        db = db_path if db_path is not None else Path(tmp) / "eval.db"
        settings = _eval_settings(stub.url, db, extractor, replies, llm_live)
        app = create_app(settings, replies)
        async with _served(app) as port:
            if replies is not None and llm_live is not None:
                replies.live = make_completion(app.state.services.upstream, settings)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                for scenario in _progress(scenarios, progress):
                    results.append(
                        await _replay(client, stub, scenario, counter, mode, policy, app, api)
                    )
                    if on_records is not None:
                        on_records(scenario, await _records(app, results[-1].request_ids))
    report = build_report(results, mode, policy)
    report["api"] = api
    if replies is not None:
        report["extractor"] = extractor
        report["llm_replies"] = replies.counts()
    return report


def _recorded(
    extractor: str, replies: Path | None, record: Path | None, live: bool
) -> RecordedReplies | None:
    """The offline completion of an LLM-backed extractor (None: the rules)."""
    if extractor not in EXTRACTORS:
        raise EvalError(f"unknown extractor {extractor!r}; expected one of {', '.join(EXTRACTORS)}")
    if extractor == "rules":
        if replies is not None or record is not None or live:
            raise EvalError(
                "--llm-replies, --llm-record and --llm-model go with --extractor llm or hybrid"
            )
        return None
    if record is not None and record.exists():
        raise EvalError(f"{record} exists; give a new file for --llm-record")
    try:
        answers = load_replies(replies) if replies is not None else {}
    except (OSError, ValueError) as exc:
        raise EvalError(str(exc)) from None
    return RecordedReplies(answers, record)


def _progress(scenarios: list[Scenario], show: bool) -> Any:
    if not show:
        return scenarios
    from rich.progress import track

    return track(scenarios, description="replaying scenarios", transient=True)
