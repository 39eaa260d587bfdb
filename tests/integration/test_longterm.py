"""Long-term memory over HTTP: one user's conversations, as the upstream receives them.

Conversation 1 states a preference; conversation 2 (a new chat of the same user
and tenant) gets it as labelled background, and no other user or tenant ever
does. What the stub upstream received is the assertion point.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from policies.longterm.backfill import BACKFILL_HEADER
from proxy.config import ConfigError, settings_from_dict

KEYS = ["key-tenant-a", "key-tenant-b"]
SYSTEM = {"role": "system", "content": "You are a helpful travel and shopping assistant."}
# Lines name the day the earlier conversation happened; a run may cross
# midnight, so `background` checks the date is today's or yesterday's and
# shows it as TODAY.
TODAY = "TODAY"


def _recent_days() -> set[str]:
    now = time.time()
    return {time.strftime("%Y-%m-%d", time.gmtime(now - d * 86400)) for d in (0, 1)}


def auth(key: str, user: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}"}
    if user is not None:
        headers["X-Memory-User"] = user
    return headers


async def converse(
    proxy: Any, turns: list[str], headers: dict[str, str], **body: Any
) -> list[dict[str, Any]]:
    """One conversation, turn by turn; returns the full history."""
    history: list[dict[str, Any]] = [SYSTEM]
    for text in turns:
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history, headers=headers, **body)
        assert resp.status_code == 200, resp.text
        history.append(resp.json()["choices"][0]["message"])
    await proxy.settle()
    return history


def background(stub: Any) -> list[str]:
    """The background block of the last forwarded request, line by line ([] if none)."""
    blocks = [
        str(m["content"])
        for m in stub.received[-1].body["messages"]
        if m["role"] == "system" and str(m["content"]).startswith(BACKFILL_HEADER)
    ]
    assert len(blocks) <= 1
    lines = blocks[0].splitlines()[1:] if blocks else []
    out = []
    for line in lines:
        found = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", line)
        if found and found.group(1) in _recent_days():
            line = line.replace(found.group(1), TODAY, 1)
        out.append(line)
    return out


@pytest.fixture
async def tenants(proxy_factory: Any) -> Any:
    return await proxy_factory(server={"api_keys": KEYS, "admin_key": "adm-key-7"})


PREFERENCE = [
    "I'm planning a weekend in Lisbon next month.",
    "Always book non-smoking rooms for me.",
    "Thanks, that's all for now.",
]


async def test_preference_reaches_a_later_conversation_of_the_same_user_only(
    tenants: Any, stub_upstream: Any
) -> None:
    await converse(tenants, PREFERENCE, auth(KEYS[0], "alice"))
    ask = ["Please book a hotel room in Porto for two nights in May."]

    await converse(tenants, ask, auth(KEYS[0], "alice"))
    lines = background(stub_upstream)
    assert lines == [
        f"- long-term rule, from an earlier conversation on {TODAY}: "
        "Always book non-smoking rooms for me."
    ]
    forwarded = stub_upstream.received[-1].body["messages"]
    # Background sits right before the current input, after the client's system prompt.
    assert forwarded[0] == SYSTEM
    assert forwarded[-1] == {"role": "user", "content": ask[0]}

    # The same user id in another tenant, and another user in the same tenant: nothing.
    await converse(tenants, [*ask, "Two adults."], auth(KEYS[1], "alice"))
    assert background(stub_upstream) == []
    await converse(tenants, [*ask, "One adult."], auth(KEYS[0], "bob"))
    assert background(stub_upstream) == []
    # No user scope at all: nothing crosses conversations.
    await converse(tenants, [*ask, "Three adults."], auth(KEYS[0]))
    assert background(stub_upstream) == []


async def test_the_request_user_field_is_a_scope_too(tenants: Any, stub_upstream: Any) -> None:
    await converse(tenants, PREFERENCE, auth(KEYS[0]), user="carol")
    await converse(tenants, ["Find me a room in Madrid for Friday."], auth(KEYS[0]), user="carol")
    assert any("non-smoking rooms" in line for line in background(stub_upstream))


async def test_a_contradicting_rule_of_the_current_conversation_wins(
    tenants: Any, stub_upstream: Any
) -> None:
    headers = auth(KEYS[0], "dana")
    await converse(
        tenants,
        [
            "I order office supplies every month.",
            "Please always ship my orders by standard shipping, never express.",
        ],
        headers,
    )
    current = "Use express shipping instead for this order of printer paper."
    await converse(tenants, [current], headers)
    assert background(stub_upstream) == [
        f"- long-term rule, from an earlier conversation on {TODAY}: usually: Please always "
        f"ship my orders by standard shipping, never express.; this conversation: {current}"
    ]
    # The current request is what the upstream reads last, as the client sent it.
    assert stub_upstream.received[-1].body["messages"][-1]["content"] == current
    record = await latest_record(tenants)
    shown = [c for c in record["managed"]["candidates"] if c["kind"] == "longterm"]
    assert [c["decision"] for c in shown] == ["recalled"]
    assert "this conversation overrides it" in shown[0]["reason"]
    assert record["long_term"]["conflicts"]


async def test_chinese_preference_carries_over_and_irrelevant_items_stay_out(
    tenants: Any, stub_upstream: Any
) -> None:
    headers = auth(KEYS[0], "erin")
    await converse(tenants, ["下个月我要去杭州出差。", "以后订酒店都选无烟房。"], headers)
    await converse(tenants, ["帮我订一下杭州的酒店，下周五入住两晚。"], headers)
    assert background(stub_upstream) == [
        f"- long-term rule, from an earlier conversation on {TODAY}: 以后订酒店都选无烟房。"
    ]
    # A conversation about something else gets no background at all.
    await converse(tenants, ["How do Python list comprehensions work?"], headers)
    assert background(stub_upstream) == []
    record = await latest_record(tenants)
    assert record["managed"]["passthrough"] is True
    assert [s["name"] for s in record["managed"]["sections"]] == ["system", "recent", "tail"]


async def latest_record(proxy: Any) -> dict[str, Any]:
    admin = {"Authorization": "Bearer adm-key-7"}
    rows = (await proxy.client.get("/memory/requests?limit=1", headers=admin)).json()["data"]
    detail = await proxy.client.get(f"/memory/requests/{rows[0]['id']}", headers=admin)
    return detail.json()["record"]  # type: ignore[no-any-return]


async def test_a_long_term_store_outage_leaves_chat_working(
    tenants: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    headers = auth(KEYS[0], "frank")
    with sqlite3.connect(tmp_path / "memproxy.db") as conn:
        conn.execute("DROP TABLE long_term_items")
    await converse(tenants, PREFERENCE, headers)  # consolidation fails in the background
    history = await converse(tenants, ["Please book a hotel room in Porto."], headers)
    assert history[-1]["role"] == "assistant"
    assert background(stub_upstream) == []
    longterm = tenants.services.pipeline.longterm
    assert longterm.failures >= 1
    assert longterm.consolidated == 0
    record = await latest_record(tenants)
    reasons = [c["reason"] for c in record["managed"]["candidates"] if c["kind"] == "longterm"]
    assert reasons == ["long-term store unavailable: OperationalError"]


async def test_admin_lists_edits_deletes_and_erases_a_users_items(
    tenants: Any, stub_upstream: Any
) -> None:
    admin = {"Authorization": "Bearer adm-key-7"}
    headers = auth(KEYS[0], "gina")
    await converse(tenants, [*PREFERENCE[:2], "I'm vegetarian, by the way."], headers)
    await converse(tenants, ["Hello again!", "I'm vegetarian."], auth(KEYS[1], "gina"))

    listed = (await tenants.client.get("/memory/users/gina/items", headers=admin)).json()["data"]
    assert sorted((i["value"], i["status"]) for i in listed) == [
        ("Always book non-smoking rooms for me.", "active"),
        ("I'm vegetarian, by the way.", "active"),
        ("I'm vegetarian.", "active"),
    ]
    assert len({i["tenant_id"] for i in listed}) == 2
    rooms = next(i for i in listed if "rooms" in i["value"])
    assert rooms["kind"] == "rule"
    assert rooms["first_seen"] <= rooms["last_confirmed"]
    one_tenant = await tenants.client.get(
        f"/memory/users/gina/items?tenant={rooms['tenant_id']}", headers=admin
    )
    assert len(one_tenant.json()["data"]) == 2

    # An operator edit is what the next conversation gets; the old value stays as history.
    edited = await tenants.client.patch(
        f"/memory/users/gina/items/{rooms['id']}",
        json={"value": "Always book quiet non-smoking rooms on a high floor."},
        headers=admin,
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["history"][-1]["value"] == "Always book non-smoking rooms for me."
    await converse(tenants, ["Book a hotel room in Rome, please."], headers)
    assert any("high floor" in line for line in background(stub_upstream))

    revoked = await tenants.client.patch(
        f"/memory/users/gina/items/{rooms['id']}", json={"status": "revoked"}, headers=admin
    )
    assert revoked.json()["status"] == "revoked"
    await converse(tenants, ["Book a hotel room in Milan, please."], headers)
    assert background(stub_upstream) == []

    gone = await tenants.client.delete(f"/memory/users/gina/items/{rooms['id']}", headers=admin)
    assert gone.json()["deleted"] is True
    again = await tenants.client.delete(f"/memory/users/gina/items/{rooms['id']}", headers=admin)
    assert again.status_code == 404

    erased = await tenants.client.delete("/memory/users/gina", headers=admin)
    assert erased.json()["deleted"] == 2
    after = await tenants.client.get("/memory/users/gina/items", headers=admin)
    assert after.json()["data"] == []
    unauthorised = await tenants.client.get("/memory/users/gina/items", headers=auth(KEYS[0]))
    assert unauthorised.status_code == 403


async def test_a_later_conversation_can_retire_a_long_term_rule(
    tenants: Any, stub_upstream: Any
) -> None:
    headers = auth(KEYS[0], "hank")
    await converse(tenants, ["Hi there.", "From now on, reply in French."], headers)
    await converse(tenants, ["How do I boil an egg?"], headers)
    assert background(stub_upstream) == [
        f"- long-term rule, from an earlier conversation on {TODAY}: From now on, reply in French."
    ]
    await converse(tenants, ["Hello again.", "Stop replying in French."], headers)
    await converse(tenants, ["How do I poach an egg?"], headers)
    assert background(stub_upstream) == []
    rows = await tenants.services.store.load_long_term(None, "hank")
    assert [(r.status, r.history[-1].note[:22]) for r in rows] == [
        ("revoked", "revoked in conversatio")
    ]


async def test_an_erasure_skips_the_users_queued_consolidation(tmp_path: Path) -> None:
    from policies.longterm.params import LongTermParams
    from policies.types import MemoryItem, Turn
    from proxy.longterm import ConsolidationJob, LongTermMemory
    from proxy.store.repo import Store

    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'erase.db'}")
    try:
        memory = LongTermMemory(store, LongTermParams())
        rule = MemoryItem("i1", "directive", "language", "Reply in French.", "user", 0)
        turn = Turn(0, "user", rule.value, {"role": "user", "content": rule.value}, 5)
        job = ConsolidationJob("tenant", "ivan", "s1", (rule,), (turn,), 0)
        memory.submit(job)
        assert await memory.erase("ivan", None) == 0  # before the worker got to it
        await memory.drain()
        assert await store.load_long_term("tenant", "ivan") == []
        memory.submit(ConsolidationJob("tenant", "ivan", "s1", (rule,), (turn,), 0))
        await memory.drain()
        assert [r.value for r in await store.load_long_term("tenant", "ivan")] == [rule.value]
        await memory.aclose()
    finally:
        await store.close()


async def test_deletion_marks_are_kept_only_while_an_older_job_is_queued(
    tmp_path: Path,
) -> None:
    from policies.longterm.params import LongTermParams
    from policies.types import MemoryItem, Turn
    from proxy.longterm import ConsolidationJob, LongTermMemory
    from proxy.store.repo import Store

    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'marks.db'}")
    try:
        memory = LongTermMemory(store, LongTermParams())
        async with memory.operator_change():
            for i in range(500):  # nothing queued: no job a mark could skip
                memory.forget_session(f"gone-{i}")
        assert memory.marks() == 0
        rule = MemoryItem("i1", "directive", "format", "Answer in a table.", "user", 0)
        turn = Turn(0, "user", rule.value, {"role": "user", "content": rule.value}, 5)
        memory.submit(ConsolidationJob("tenant", "olga", "s7", (rule,), (turn,), 0))
        async with memory.operator_change():
            memory.forget_session("s7")  # the queued job is older: kept, and it skips
            memory.forget_session("other")
        assert memory.marks() == 2
        await memory.drain()
        assert await store.load_long_term("tenant", "olga") == []
        assert memory.marks() == 0  # the queue drained: every mark dropped
        await memory.aclose()
    finally:
        await store.close()


@pytest.mark.parametrize(("key", "value"), [("share", 0.9), ("max_itmes", 2)])
def test_long_term_settings_are_validated_with_the_key_named(key: str, value: Any) -> None:
    settings = settings_from_dict({"memory": {"long_term": {"max_items": 1}}}, env={})
    assert settings.memory.long_term.max_items == 1
    with pytest.raises(ConfigError, match=rf"memory\.long_term\.{key}"):
        settings_from_dict({"memory": {"long_term": {key: value}}}, env={})


async def test_streamed_conversations_take_part_too(tenants: Any, stub_upstream: Any) -> None:
    headers = auth(KEYS[0], "judy")
    history: list[dict[str, Any]] = [SYSTEM]
    for text in PREFERENCE[:2]:
        history.append({"role": "user", "content": text})
        body = {"model": "stub", "messages": history, "stream": True}
        async with tenants.client.stream(
            "POST", "/v1/chat/completions", json=body, headers=headers
        ) as resp:
            assert resp.status_code == 200
            lines = [line async for line in resp.aiter_lines() if line.startswith("data: {")]
        answer = "".join(
            c["choices"][0]["delta"].get("content") or ""
            for c in (json.loads(line[6:]) for line in lines)
            if c.get("choices")
        )
        history.append({"role": "assistant", "content": answer})
    await tenants.settle()
    body = {
        "model": "stub",
        "messages": [SYSTEM, {"role": "user", "content": "Book a hotel room in Faro."}],
        "stream": True,
    }
    async with tenants.client.stream(
        "POST", "/v1/chat/completions", json=body, headers=headers
    ) as resp:
        assert resp.status_code == 200
        _ = [line async for line in resp.aiter_lines()]
    assert any("non-smoking rooms" in line for line in background(stub_upstream))


async def test_another_courier_in_chinese_wins_over_the_usual_one_with_no_word_shared(
    tenants: Any, stub_upstream: Any
) -> None:
    headers = auth(KEYS[0], "kim")
    await converse(tenants, ["我常在网上买文具。", "以后寄东西一律走圆通。"], headers)
    current = "这回换申通发吧"
    await converse(tenants, ["想买几支中性笔。", current], headers)
    assert background(stub_upstream) == [
        f"- long-term rule, from an earlier conversation on {TODAY}: usually: "
        f"以后寄东西一律走圆通。; this conversation: {current}"
    ]
    assert stub_upstream.received[-1].body["messages"][-1]["content"] == current
