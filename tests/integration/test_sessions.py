"""Session resolution over HTTP: continuation, regenerate, fork, stateful, isolation."""

from __future__ import annotations

import asyncio
from typing import Any

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


async def _turn(
    proxy: Any, history: list[dict[str, Any]], text: str, headers: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], Any]:
    """Send history + a new user message; return the history with the answer appended."""
    messages = [*history, {"role": "user", "content": text}]
    resp = await proxy.chat(messages, headers=headers)
    assert resp.status_code == 200, resp.text
    answer = resp.json()["choices"][0]["message"]
    return [*messages, {"role": "assistant", "content": answer["content"]}], resp


async def _stored_roles(proxy: Any, session_id: str) -> list[tuple[str, str]]:
    rows = await proxy.services.store.load_messages(session_id)
    return [(m.role, m.text) for m in rows]


async def test_continuation_stays_in_one_session_and_ingests_only_the_tail(proxy: Any) -> None:
    history, first = await _turn(proxy, [SYSTEM], "first question")
    session = first.headers["X-Memory-Session"]
    history, second = await _turn(proxy, history, "second question")
    history, third = await _turn(proxy, history, "third question")
    assert second.headers["X-Memory-Session"] == session
    assert third.headers["X-Memory-Session"] == session
    await proxy.settle()
    stored = await _stored_roles(proxy, session)
    assert stored == [
        ("user", "first question"),
        ("assistant", "echo: first question"),
        ("user", "second question"),
        ("assistant", "echo: second question"),
        ("user", "third question"),
        ("assistant", "echo: third question"),
    ]


async def test_regenerate_rolls_back_the_discarded_answer(proxy: Any) -> None:
    history, first = await _turn(proxy, [SYSTEM], "plan my week")
    session = first.headers["X-Memory-Session"]
    history, _ = await _turn(proxy, history, "add a gym day")
    # The client regenerates the last answer: it resends the history without it.
    resend = history[:-1]
    resp = await proxy.chat(resend)
    assert resp.headers["X-Memory-Session"] == session
    await proxy.settle()
    stored = await _stored_roles(proxy, session)
    assert len(stored) == 4
    assert stored[-1] == ("assistant", "echo: add a gym day")


async def test_regenerate_drops_memory_from_discarded_turns(proxy: Any) -> None:
    history, first = await _turn(proxy, [SYSTEM], "Help me plan a dinner party.")
    session = first.headers["X-Memory-Session"]
    history, _ = await _turn(proxy, history, "My budget is capped at 300 euros, no more.")
    await proxy.settle()
    values = [i.value for i in await proxy.services.store.load_items(session)]
    assert any("300 euros" in v for v in values)
    # Regenerate the first answer: everything after the first user turn is discarded.
    await proxy.chat(history[:2])
    await proxy.settle()
    values = [i.value for i in await proxy.services.store.load_items(session)]
    assert not any("300 euros" in v for v in values)


async def test_the_same_request_again_keeps_the_memory_of_the_turns_it_keeps(
    proxy: Any,
) -> None:
    history, first = await _turn(proxy, [SYSTEM], "We are repainting the hallway.")
    session = first.headers["X-Memory-Session"]
    history, _ = await _turn(proxy, history, "The paint must be low-VOC, no exceptions.")
    await proxy.settle()
    before = {(i.id, i.value, i.status) for i in await proxy.services.store.load_items(session)}
    assert any("low-VOC" in value for _, value, _ in before)
    # A regenerate button: the very same request, three times over.
    for _ in range(3):
        resp = await proxy.chat(history[:-1])
        assert resp.status_code == 200, resp.text
        assert resp.headers["X-Memory-Session"] == session
        await proxy.settle()
    after = {(i.id, i.value, i.status) for i in await proxy.services.store.load_items(session)}
    assert after == before
    stored = await _stored_roles(proxy, session)
    assert len(stored) == 4
    assert stored[-1] == ("assistant", "echo: The paint must be low-VOC, no exceptions.")
    # The session goes on from the regenerated answer.
    history, resp = await _turn(proxy, history, "And the trim?")
    assert resp.headers["X-Memory-Session"] == session


async def test_edited_turn_forks_a_new_session_from_the_common_prefix(proxy: Any) -> None:
    history, first = await _turn(proxy, [SYSTEM], "I need a hotel in Rome.")
    session = first.headers["X-Memory-Session"]
    history, _ = await _turn(proxy, history, "Budget is 150 euros per night.")
    history, _ = await _turn(proxy, history, "Near the Colosseum.")
    # The user edits their second message.
    edited = [*history[:3], {"role": "user", "content": "Budget is 90 euros per night."}]
    resp = await proxy.chat(edited)
    fork = resp.headers["X-Memory-Session"]
    assert fork != session
    await proxy.settle()
    row = await proxy.services.store.get_session(fork)
    assert row.parent_id == session
    assert row.fork_ordinal == 2
    assert [t for _, t in await _stored_roles(proxy, fork)][2] == "Budget is 90 euros per night."
    # The parent is untouched.
    parent = await _stored_roles(proxy, session)
    assert parent[2] == ("user", "Budget is 150 euros per night.")
    fork_values = [i.value for i in await proxy.services.store.load_items(fork)]
    assert not any("150 euros" in v for v in fork_values)
    assert any("90 euros" in v for v in fork_values)


async def test_stateful_mode_supplies_history_from_the_store(
    proxy: Any, stub_upstream: Any
) -> None:
    headers = {"X-Memory-Session": "chat-42"}
    resp = await proxy.chat(
        [SYSTEM, {"role": "user", "content": "My name is Ada."}], headers=headers
    )
    assert resp.status_code == 200
    session = resp.headers["X-Memory-Session"]
    # The client keeps no history: only the new message.
    resp = await proxy.chat([{"role": "user", "content": "What is my name?"}], headers=headers)
    assert resp.status_code == 200
    assert resp.headers["X-Memory-Session"] == session
    forwarded = stub_upstream.received[-1].body["messages"]
    assert forwarded == [
        SYSTEM,
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "echo: My name is Ada."},
        {"role": "user", "content": "What is my name?"},
    ]


async def test_tenants_never_share_a_session(proxy_factory: Any) -> None:
    harness = await proxy_factory(server={"api_keys": ["key-a", "key-b"]})
    messages = [SYSTEM, {"role": "user", "content": "identical history"}]
    a = await harness.chat(messages, headers={"Authorization": "Bearer key-a"})
    b = await harness.chat(messages, headers={"Authorization": "Bearer key-b"})
    assert a.headers["X-Memory-Session"] != b.headers["X-Memory-Session"]
    # Same session name, different tenants: still different sessions.
    named = {"X-Memory-Session": "shared-name"}
    a2 = await harness.chat(messages, headers={**named, "Authorization": "Bearer key-a"})
    b2 = await harness.chat(messages, headers={**named, "Authorization": "Bearer key-b"})
    # Both are answered with the name the client chose; behind it, two sessions.
    assert a2.headers["X-Memory-Session"] == b2.headers["X-Memory-Session"] == "shared-name"
    await harness.settle()
    store = harness.services.store
    rows = [await store.get_request(r.headers["X-Memory-Request-Id"]) for r in (a2, b2)]
    assert rows[0]["session_id"] != rows[1]["session_id"]


async def test_long_history_seen_first_is_ingested_in_one_pass(proxy: Any) -> None:
    history: list[dict[str, Any]] = [SYSTEM]
    for i in range(150):
        history.append({"role": "user", "content": f"message number {i}"})
        history.append({"role": "assistant", "content": f"reply number {i}"})
    history.append({"role": "user", "content": "and now?"})
    resp = await proxy.chat(history)
    session = resp.headers["X-Memory-Session"]
    await proxy.settle()
    stored = await _stored_roles(proxy, session)
    assert len(stored) == 302
    assert stored[0] == ("user", "message number 0")
    assert stored[-1] == ("assistant", "echo: and now?")


async def test_back_to_back_rounds_see_memory_from_the_previous_answer(
    proxy: Any, stub_upstream: Any
) -> None:
    """Ordering: round n's memory (incl. the answer) is in place before round n+1."""
    history: list[dict[str, Any]] = [SYSTEM]
    for i in range(8):
        history, resp = await _turn(proxy, history, f"round {i}: remember code ZX-{1000 + i}")
    session = resp.headers["X-Memory-Session"]
    await proxy.settle()
    stored = await _stored_roles(proxy, session)
    assert len(stored) == 16
    values = " ".join(i.value for i in await proxy.services.store.load_items(session))
    for i in range(8):
        assert f"ZX-{1000 + i}" in values


async def test_parallel_requests_on_one_named_session_lose_no_turn(proxy: Any) -> None:
    headers = {"X-Memory-Session": "burst"}
    await proxy.chat([SYSTEM, {"role": "user", "content": "start"}], headers=headers)
    results = await asyncio.gather(
        *[
            proxy.chat([{"role": "user", "content": f"parallel {i}"}], headers=headers)
            for i in range(10)
        ]
    )
    assert all(r.status_code == 200 for r in results)
    session = results[0].headers["X-Memory-Session-Id"]
    await proxy.settle()
    stored = await _stored_roles(proxy, session)
    users = [t for r, t in stored if r == "user"]
    assert sorted(users) == sorted(["start", *[f"parallel {i}" for i in range(10)]])
    assert len(stored) == 22
    roles = [r for r, _ in stored]
    assert roles == ["user", "assistant"] * 11


async def test_a_client_resending_answers_with_null_fields_stays_recognised(
    proxy: Any, monkeypatch: Any
) -> None:
    # SDK clients append the answer object as received, with extra null fields;
    # continuations must still be recognised in-process, not by a store lookup.
    store = proxy.services.store
    lookups: list[int] = []
    match_chain = store.match_chain

    async def counting(*args: Any, **kwargs: Any) -> Any:
        lookups.append(1)
        return await match_chain(*args, **kwargs)

    monkeypatch.setattr(store, "match_chain", counting)
    history: list[dict[str, Any]] = [SYSTEM]
    sessions = set()
    for text in ("one", "two", "three", "four"):
        messages = [*history, {"role": "user", "content": text}]
        resp = await proxy.chat(messages)
        assert resp.status_code == 200, resp.text
        sessions.add(resp.headers["X-Memory-Session"])
        answer = resp.json()["choices"][0]["message"]
        history = [*messages, {**answer, "tool_calls": None, "function_call": None}]
    assert len(sessions) == 1
    assert len(lookups) == 1  # the first request only


async def test_named_sessions_with_equal_histories_stay_apart(proxy: Any) -> None:
    # Named requests reuse cached turns by content, whichever session cached them;
    # which session a request belongs to must still be the name's alone.
    history, plain = await _turn(proxy, [SYSTEM], "shared opening question")
    names = ("named-left", "named-right")
    sessions = {}
    for name in names:
        _, resp = await _turn(proxy, history, f"follow-up for {name}", {"X-Memory-Session": name})
        assert resp.headers["X-Memory-Session"] == name
        sessions[name] = resp.headers["X-Memory-Session-Id"]
    assert len({plain.headers["X-Memory-Session-Id"], *sessions.values()}) == 3
    for name in names:
        again, resp = await _turn(
            proxy, history, f"follow-up for {name}", {"X-Memory-Session": name}
        )
        assert resp.headers["X-Memory-Session-Id"] == sessions[name]
        _, resp = await _turn(proxy, again, f"third turn of {name}", {"X-Memory-Session": name})
        assert resp.headers["X-Memory-Session-Id"] == sessions[name]
    await proxy.settle()
    for name in names:
        stored = await _stored_roles(proxy, sessions[name])
        other = next(n for n in names if n != name)
        texts = [text for _, text in stored]
        assert texts[:2] == ["shared opening question", "echo: shared opening question"]
        assert f"third turn of {name}" in texts
        assert not any(other in text for text in texts)
