"""Long-term memory: a requirement stated in one conversation, carried into the next.

    python bench/longterm.py [--budget 500]

Each scenario is a pair of conversations of one user: the first states a
requirement, the second (a new chat, long enough to exceed the budget) asks
for something it applies to. The app runs in-process against the local stub
upstream (real HTTP through litellm, a temporary SQLite store); what the stub
received is checked for the requirement. Each pair runs twice: with a user
scope (`X-Memory-User`) and without one (the control: nothing may cross).
Controls in the table: a conversation about something else gets nothing, and
a conflicting request of the new conversation is shown as winning (also when
it shares no word with the rule: another courier). The `allergy` pair runs
with the stub's embeddings endpoint as `memory.long_term.embedding_model`
(character-trigram vectors: "allergic" ~ "allergies", no word shared) and,
as its control, with lexical retrieval only, which cannot find it.
A benchmark, not a test: it prints what happened at the given budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx  # noqa: E402

from policies.longterm.backfill import BACKFILL_HEADER  # noqa: E402
from proxy.config import settings_from_dict  # noqa: E402
from proxy.http.app import create_app  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402

FILLER_EN = [
    "Unrelated, but what's the history of the Dom Luís I Bridge? I keep reading about it "
    "and I'd love to know who designed it and why it has two decks.",
    "And is the port wine cellar tour worth the time, or is it a tourist trap? A friend said "
    "the small family cellars up the hill are nicer than the big brands by the river.",
    "What should I pack for rainy spring weather? I never know whether to bring an umbrella "
    "or just a light jacket with a hood, and my suitcase is small.",
    "Is it easy to get from the airport to the city centre by metro, and how long does it "
    "take at rush hour? I land around six in the evening.",
    "One more: which pastry shops are worth a detour? I've heard the custard tarts are "
    "better in some places than others, but everyone names a different one.",
]
FILLER_EN += [f"Back to that: {text}" for text in FILLER_EN]
FILLER_ZH = [
    "顺便问一下，成都的大熊猫基地一般要逛多久？早上去人会不会少一点？听说下午熊猫都在睡觉，"
    "是真的吗？",
    "那边的火锅一般多少钱一个人？我不太能吃辣，有没有清汤锅或者鸳鸯锅推荐？最好离地铁近一点。",
    "春天去成都要带什么衣服？听说那边经常下小雨，要不要带伞？早晚温差大不大？",
    "从双流机场到市中心坐地铁方便吗？晚上六点左右到，会不会很挤？大概要多长时间？",
    "宽窄巷子和锦里哪个更值得去？我只有一个晚上的空闲时间，想找个安静点的地方喝茶。",
]


ALLERGY = "I'm allergic to shellfish, so no shrimp or crab for me."
ASK_ALLERGIES = "Any allergies I should flag to the restaurant?"


@dataclass(frozen=True)
class Scenario:
    name: str
    first: list[str]  # conversation 1: states the requirement
    second: list[str]  # conversation 2: the last turn is the request checked
    expect: str  # what the forwarded background must contain ("" = no background at all)
    embeddings: bool = False  # retrieval with the stub's embeddings endpoint too


SCENARIOS = [
    Scenario(
        "hotel-en",
        ["I'm planning a weekend in Lisbon next month.", "Always book non-smoking rooms for me."],
        [
            "I have a conference in Porto in May.",
            *FILLER_EN,
            "Please book a hotel room near the venue for three nights.",
        ],
        "non-smoking rooms",
    ),
    Scenario(
        "hotel-zh",
        ["下个月我要去杭州出差。", "以后订酒店都选无烟房。"],
        ["下周要去成都开会。", *FILLER_ZH, "帮我订一下会场附近的酒店，住三晚。"],
        "无烟房",
    ),
    # A standing rule for a kind of task ("whenever you book a hotel…") reaches
    # the next request of that kind though the two share one content word.
    Scenario(
        "standing-hotel-en (one shared word)",
        [
            "I travel a lot for work these days.",
            "Whenever you book a hotel for me, make sure it has a gym.",
        ],
        [
            "I'm presenting at a trade fair in Rotterdam in June.",
            *FILLER_EN,
            "Find a hotel in Rotterdam for two nights.",
        ],
        "has a gym",
    ),
    Scenario(
        "standing-hotel-zh (one shared word)",
        ["最近出差比较多。", "每次帮我订酒店的时候，都要选带健身房的。"],
        ["六月要去青岛参加展会。", *FILLER_ZH, "帮我找一家青岛的酒店，住两晚。"],
        "健身房",
    ),
    Scenario(
        "standing-hotel-en, another task",
        [
            "I travel a lot for work these days.",
            "Whenever you book a hotel for me, make sure it has a gym.",
        ],
        [
            "I'm presenting at a trade fair in Rotterdam in June.",
            *FILLER_EN,
            "Find a quiet restaurant in Rotterdam for Friday dinner.",
        ],
        "",
    ),
    Scenario(
        "conflict-en",
        [
            "I order office supplies every month.",
            "Please always ship my orders by standard shipping, never express.",
        ],
        [
            "I need printer paper and toner for the office.",
            *FILLER_EN,
            "Use express shipping instead for this order.",
        ],
        "this conversation: Use express shipping instead",
    ),
    Scenario(
        "conflict-zh (no shared word)",
        ["我经常在网上买日用品。", "以后快递都走中通。"],
        ["想买点洗衣液和纸巾。", *FILLER_ZH, "这单用韵达寄吧。"],
        "this conversation: 这单用韵达寄吧。",
    ),
    Scenario(
        "allergy-en (embeddings)",
        ["I'm hosting a dinner party next week.", ALLERGY],
        ["We're eating out in Porto on Friday.", *FILLER_EN, ASK_ALLERGIES],
        "allergic to shellfish",
        embeddings=True,
    ),
    Scenario(
        "allergy-en (lexical only)",
        ["I'm hosting a dinner party next week.", ALLERGY],
        ["We're eating out in Porto on Friday.", *FILLER_EN, ASK_ALLERGIES],
        "",
    ),
    Scenario(
        "irrelevant-en",
        ["I'm planning a weekend in Lisbon next month.", "Always book non-smoking rooms for me."],
        ["I'm learning Python.", *FILLER_EN, "How do list comprehensions work?"],
        "",
    ),
]


async def converse(
    client: httpx.AsyncClient, app: Any, turns: list[str], headers: dict[str, str]
) -> httpx.Response:
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful travel and shopping assistant."}
    ]
    resp = None
    for text in turns:
        history.append({"role": "user", "content": text})
        resp = await client.post(
            "/v1/chat/completions", json={"model": "stub", "messages": history}, headers=headers
        )
        resp.raise_for_status()
        history.append(resp.json()["choices"][0]["message"])
    await app.state.services.pipeline.drain()
    assert resp is not None
    return resp


def background(stub: StubUpstream) -> str:
    chat = [r for r in stub.received if r.path.endswith("/chat/completions")][-1]
    return "\n".join(
        str(m["content"])
        for m in chat.body["messages"]
        if str(m.get("content", "")).startswith(BACKFILL_HEADER)
    )


async def run_pair(
    stub: StubUpstream, tmp: Path, scenario: Scenario, budget: int, scoped: bool
) -> dict[str, Any]:
    def entry(name: str, model: str) -> dict[str, Any]:
        return {
            "model_name": name,
            "litellm_params": {"model": model, "api_base": stub.url, "api_key": "bench"},
        }

    long_term: dict[str, Any] = {}
    if scenario.embeddings:
        # The stub's vectors put unrelated texts near 0 (see `proxy.stub.embeddings`).
        long_term = {"embedding_model": "embedder", "embedding_min_similarity": 0.15}
    db = tmp / f"{scenario.name.split()[0]}-{scenario.embeddings}-{scoped}.db"
    settings = settings_from_dict(
        {
            "model_list": [
                entry("stub", "openai/stub-model"),
                entry("embedder", "openai/stub-embedding"),
            ],
            "memory": {
                "database_url": f"sqlite+aiosqlite:///{db}",
                "budget_tokens": budget,
                "long_term": long_term,
            },
        },
        env={},
    )
    app = create_app(settings)
    headers = {"X-Memory-User": "user-1"} if scoped else {}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=60
        ) as client,
    ):
        await converse(client, app, scenario.first, headers)
        stub.reset()
        resp = await converse(client, app, scenario.second, headers)
        block = background(stub)
        row = await app.state.services.store.get_request(resp.headers["X-Memory-Request-Id"])
        record = json.loads(row["record_json"]) if row else {}
        decisions = [
            f"{c['decision']}: {c['reason']}"
            for c in (record.get("managed") or {}).get("candidates", [])
            if c["kind"] == "longterm"
        ]
        embedding_tokens = sum(
            c["prompt_tokens"]
            for c in record.get("policy_calls", [])
            if c["policy"].startswith("embedding")
        )
        return {
            "decisions": decisions,
            "embedding_tokens": embedding_tokens,
            "raw": int(resp.headers["X-Memory-Raw-Tokens"]),
            "context": int(resp.headers["X-Memory-Context-Tokens"]),
            "block": block,
            "ok": (scenario.expect in block) if scenario.expect else block == "",
        }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=500)
    args = parser.parse_args()
    stub = StubUpstream().start()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for scenario in SCENARIOS:
                scoped = await run_pair(stub, Path(tmp), scenario, args.budget, True)
                control = await run_pair(stub, Path(tmp), scenario, args.budget, False)
                rows.append((scenario, scoped, control))
    finally:
        stub.stop()
    print(
        f"budget {args.budget} tokens (memory.budget_tokens); "
        "long-term share 0.15 of the history budget\n"
    )
    print(
        "| scenario | expected in conv. 2 | raw tokens | forwarded | embedding tokens "
        "| with user scope: as expected | no scope |"
    )
    print("|---|---|---|---|---|---|---|")
    for scenario, scoped, control in rows:
        expected = scenario.expect or "(no background)"
        leaked = "none (ok)" if not control["block"] else "LEAKED"
        verdict = "yes" if scoped["ok"] else "NO"
        print(
            f"| {scenario.name} | {expected} | {scoped['raw']} | {scoped['context']} "
            f"| {scoped['embedding_tokens']} | {verdict} | {leaked} |"
        )
    print("\nWhat the upstream received as background, per scenario (with user scope):")
    for scenario, scoped, _ in rows:
        print(f"\n[{scenario.name}] {'; '.join(scoped['decisions']) or 'no candidates'}")
        print(scoped["block"] or "(none)")


if __name__ == "__main__":
    asyncio.run(main())
