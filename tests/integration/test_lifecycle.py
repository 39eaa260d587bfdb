"""Memory lifecycle over HTTP: compaction in steps, prefix reuse, rollback, recall, presets."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from sqlalchemy import select

from proxy.records import prefix_share
from proxy.store import schema as t
from proxy.tokens import TokenCounter

SYSTEM = {"role": "system", "content": "You are a helpful planning assistant."}
FILLER = (
    "Unrelated, but tell me something about the history of tea in Britain; I am curious "
    "how it became so popular and whether the East India Company story is true."
)
BUDGET = {"X-Memory-Budget": "700"}


async def converse(
    proxy: Any, turns: list[str], headers: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], list[Any]]:
    history: list[dict[str, Any]] = [SYSTEM]
    responses = []
    for text in turns:
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history, headers={**BUDGET, **(headers or {})})
        assert resp.status_code == 200, resp.text
        responses.append(resp)
        history.append(
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}
        )
    return history, responses


async def records(proxy: Any, responses: list[Any]) -> list[dict[str, Any]]:
    await proxy.settle()
    out = []
    for resp in responses:
        row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
        out.append({**row, "record": json.loads(row["record_json"])})
    return out


def turns_for(n: int) -> list[str]:
    return [
        "Our budget is 900 euros for the whole trip, never more." if i == 0 else f"{FILLER} ({i})"
        for i in range(n)
    ]


async def test_compaction_is_stepwise_and_prompts_grow_between_compactions(proxy: Any) -> None:
    # The layered preset's late sections in place (the backbone: test_backbone_*).
    _, responses = await converse(proxy, turns_for(14), {"X-Memory-Policy": "layered"})
    rows = await records(proxy, responses)
    compacting = [r for r in rows if (r["record"].get("lifecycle") or {}).get("compactions")]
    assert compacting, "the history never reached the high-water mark"
    assert len(compacting) < len(rows) // 2  # in steps, not every request
    grew = whole = 0
    for prev, cur in itertools.pairwise(rows):
        life = cur["record"].get("lifecycle") or {}
        if not prev["record"]["managed"] or prev["record"]["managed"]["passthrough"]:
            continue
        if life.get("compactions") or life.get("memory_layout") != "kept":
            continue
        before, now = prev["record"]["forwarded"], cur["record"]["forwarded"]
        pairs = enumerate(zip(before, now, strict=False))
        same = next((i for i, (a, b) in pairs if a != b), len(before))
        assert cur["prefix_share"] >= prefix_share(before[:same], now, TokenCounter()) - 1e-9
        # Late sections stay where they went (policies.assemble.placed); where they no
        # longer fit with the new turns, the last of them go, and nothing else:
        # the prompt repeats the previous one up to the first that went, and
        # every client turn after it is still there, in order.
        turns = [m for m in before[same:] if m["role"] != "system"]
        assert [m for m in now[same:] if m["role"] != "system"][: len(turns)] == turns
        if same == len(before):
            assert now[same]["role"] == "assistant"  # the previous answer, then the input
            whole += any(m["role"] == "system" for m in before[-3:-1])  # with late sections
        else:
            assert before[same]["role"] == "system"
        grew += 1
    assert grew >= 2
    assert whole >= 1


async def test_summary_is_persisted_and_rolled_back_with_its_turns(proxy: Any) -> None:
    history, responses = await converse(proxy, turns_for(14))
    session = responses[-1].headers["X-Memory-Session"]
    await proxy.settle()
    chunks = await proxy.services.store.load_summary_chunks(session)
    assert chunks
    assert chunks[-1].upto > 4
    assert any("900 euros" in s for c in chunks for ln in c.lines for s in ln.sentences)
    # Regenerate from early on: the client resends a prefix of what is stored.
    cut = 4
    resp = await proxy.chat(history[: 1 + cut - 1], headers=BUDGET)  # ends on a user turn
    assert resp.status_code == 200
    assert resp.headers["X-Memory-Session"] == session
    await proxy.settle()
    left = await proxy.services.store.load_summary_chunks(session)
    assert all(c.upto <= cut - 1 for c in left)
    async with proxy.services.store.engine.connect() as conn:
        uptos = [
            r.upto_ordinal
            for r in await conn.execute(
                select(t.summaries.c.upto_ordinal).where(t.summaries.c.session_id == session)
            )
        ]
    assert all(u <= cut - 1 for u in uptos)
    # The session keeps working after the rollback.
    again = await proxy.chat([*history[: 1 + cut - 1], {"role": "assistant", "content": "ok"},
                              {"role": "user", "content": "And now?"}], headers=BUDGET)  # fmt: skip
    assert again.status_code == 200


async def test_an_old_turn_is_recalled_with_its_date(proxy: Any, stub_upstream: Any) -> None:
    turns = [
        "My locker code at the gym is Zanzibar-4471, please keep it in mind.",
        *(f"{FILLER} ({i})" for i in range(12)),
        "What was my Zanzibar locker code again?",
    ]
    await converse(proxy, turns, {"X-Memory-Policy": "summary_buffer"})
    forwarded = stub_upstream.received[-1].body["messages"]
    recalled = [m for m in forwarded if m["content"].startswith("Earlier turns relevant")]
    assert recalled, [m["content"][:60] for m in forwarded]
    assert re.search(
        r"^\[\d{4}-\d{2}-\d{2}\] user: My locker code at the gym is Zanzibar-4471",
        recalled[0]["content"],
        re.MULTILINE,
    )


async def test_presets_differ_in_their_layers(proxy: Any, stub_upstream: Any) -> None:
    turns = turns_for(14)
    got = {}
    for preset in ("window", "summary_buffer", "layered", "full"):
        stub_upstream.reset()
        await converse(proxy, [f"[{preset}] {t}" for t in turns], {"X-Memory-Policy": preset})
        got[preset] = [m["content"] for m in stub_upstream.received[-1].body["messages"]]

    def has(preset: str, prefix: str) -> bool:
        return any(c.startswith(prefix) for c in got[preset])

    summary, memory = "Summary of the earlier conversation:", "Memory: the user's current"
    assert not has("window", summary)
    assert not has("window", memory)
    assert has("summary_buffer", summary)
    assert not has("summary_buffer", memory)
    assert has("layered", summary)
    assert has("layered", memory)
    assert any("900 euros" in c for c in got["layered"])
    # The backbone: the user's first turn verbatim, no summary or memory block.
    assert not has("full", summary)
    assert not has("full", memory)
    assert "[full] " + turns[0] in got["full"]
    assert any("900 euros" in c for c in got["summary_buffer"])


async def test_a_fork_inherits_the_summary_of_the_shared_prefix(proxy: Any) -> None:
    history, responses = await converse(proxy, turns_for(14))
    parent = responses[-1].headers["X-Memory-Session"]
    await proxy.settle()
    chunks = await proxy.services.store.load_summary_chunks(parent)
    assert chunks
    upto = chunks[0].upto
    # Edit a turn after the first chunk: a fork sharing the turns before it.
    edited = [*history[: 1 + upto + 2]]
    edited[1 + upto] = {"role": "user", "content": "Edited: what about coffee instead?"}
    resp = await proxy.chat(edited[: 2 + upto], headers=BUDGET)
    assert resp.status_code == 200
    child = resp.headers["X-Memory-Session"]
    assert child != parent
    await proxy.settle()
    inherited = await proxy.services.store.load_summary_chunks(child)
    assert inherited
    assert inherited[0] == chunks[0]


@pytest.mark.parametrize("preset", ["full", "layered"])
async def test_the_same_request_again_forwards_what_a_fresh_assembly_would(
    proxy: Any, stub_upstream: Any, monkeypatch: pytest.MonkeyPatch, preset: str
) -> None:
    # A regenerate button on a compacted conversation: the session's last assembly
    # is handed out again for an equal input (proxy.chat.managed: _assembled).
    headers = {"X-Memory-Policy": preset}
    history, _ = await converse(proxy, turns_for(12), headers)
    assemblies: list[str] = []
    policies = proxy.services.pipeline.policies
    for cls in {type(policies.preset(preset).assembler)}:
        original = cls.assemble

        def counted(self: Any, inp: Any, original: Any = original) -> Any:
            assemblies.append(type(self).__name__)
            return original(self, inp)

        monkeypatch.setattr(cls, "assemble", counted)
    sent, kept = [], []
    for fresh in (False, False, False, True):
        if fresh:  # the same request with no assembly kept: laid out anew
            for layers in proxy.services.pipeline.lifecycle._cache.values():
                layers.assembly = None
        resp = await proxy.chat(history[:-1], headers={**BUDGET, **headers})
        assert resp.status_code == 200, resp.text
        sent.append(stub_upstream.received[-1].raw)
        row = (await records(proxy, [resp]))[0]["record"]
        kept.append(json.dumps([row["forwarded"], row["managed"], row.get("lifecycle")]))
    assert sent[1:] == [sent[-1]] * 3
    assert kept[1:] == [kept[-1]] * 3
    if preset == "full":
        # Laid out by the first resend (its input holds what the continuation
        # before it left) and by the fresh one; the two between reuse it.
        assert len(assemblies) == 2, assemblies
