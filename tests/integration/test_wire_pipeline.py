"""Responses and Messages run the same memory pipeline as chat: sessions, modes,
records, errors in each API's shape, and eval figures equal across the three."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy.eval_wire import wire_request
from proxy.evaluation import run_eval
from proxy.stub.state import Fault

SYSTEM = {"role": "system", "content": "You look after a community orchard."}


def _history(rounds: int = 10) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [SYSTEM]
    history.append({"role": "user", "content": "Spraying is only allowed on Tuesdays."})
    history.append({"role": "assistant", "content": "Noted: spraying on Tuesdays only."})
    for i in range(rounds):
        history.append({"role": "user", "content": f"Tell me about apple variety {i} " * 6})
        history.append({"role": "assistant", "content": f"Variety {i} keeps well. " * 10})
    history.append({"role": "user", "content": "When may we spray?"})
    return history


async def _post(proxy: Any, api: str, messages: list[dict[str, Any]], **headers: str) -> Any:
    path, body = wire_request(api, {"model": "stub", "messages": messages})
    return await proxy.client.post(path, json=body, headers=headers)


async def _record(proxy: Any, resp: Any) -> dict[str, Any]:
    await proxy.settle()
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    assert row is not None
    return json.loads(row["record_json"])  # type: ignore[no-any-return]


@pytest.mark.parametrize("api", ["responses", "messages"])
async def test_modes_and_headers_behave_as_on_chat(
    proxy: Any, stub_upstream: Any, api: str
) -> None:
    history = _history()
    raw = await _post(proxy, api, history, **{"X-Memory-Mode": "raw", "X-Memory-Budget": "300"})
    assert raw.status_code == 200
    assert raw.headers["X-Memory-Mode"] == "raw"
    assert stub_upstream.received[-1].body["messages"] == history
    record = await _record(proxy, raw)
    assert record["wire"] == api
    assert record["forwarded"] == history

    shadow = await _post(
        proxy, api, history, **{"X-Memory-Mode": "shadow", "X-Memory-Budget": "300"}
    )
    assert stub_upstream.received[-1].body["messages"] == history
    assert int(shadow.headers["X-Memory-Shadow-Tokens"]) <= 300

    before = len(stub_upstream.received)
    compare = await _post(
        proxy, api, history, **{"X-Memory-Mode": "compare", "X-Memory-Budget": "300"}
    )
    assert compare.status_code == 200
    bodies = [r.body["messages"] for r in stub_upstream.received[before:]]
    assert len(bodies) == 2
    assert history in bodies
    record = await _record(proxy, compare)
    assert record["compare"]["raw_response"]["choices"][0]["message"]["content"]

    managed = await _post(proxy, api, history, **{"X-Memory-Budget": "300"})
    assert int(managed.headers["X-Memory-Context-Tokens"]) <= 300
    forwarded = stub_upstream.received[-1].body["messages"]
    assert forwarded != history
    assert "Tuesdays" in json.dumps(forwarded)


async def test_one_conversation_whichever_api_continues_it(proxy: Any) -> None:
    history = _history(2)
    first = await proxy.chat([*history[:-1], {"role": "user", "content": "Start a plan."}])
    session = first.headers["X-Memory-Session"]
    answer = first.json()["choices"][0]["message"]
    grown = [*history[:-1], {"role": "user", "content": "Start a plan."}, answer]
    on_messages = await _post(proxy, "messages", [*grown, {"role": "user", "content": "More."}])
    assert on_messages.headers["X-Memory-Session"] == session
    text = on_messages.json()["content"][0]["text"]
    grown += [{"role": "user", "content": "More."}, {"role": "assistant", "content": text}]
    on_responses = await _post(proxy, "responses", [*grown, {"role": "user", "content": "Again."}])
    assert on_responses.headers["X-Memory-Session"] == session


async def test_upstream_errors_keep_their_status_in_each_apis_shape(
    proxy: Any, stub_upstream: Any
) -> None:
    messages = [{"role": "user", "content": "hello"}]
    stub_upstream.inject(Fault(status=400, message="bad thing"))
    resp = await _post(proxy, "messages", messages)
    assert resp.status_code == 400
    body = resp.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "bad thing" in body["error"]["message"]
    stub_upstream.inject(Fault(status=400, message="bad thing"))
    resp = await _post(proxy, "responses", messages)
    assert resp.status_code == 400
    assert "bad thing" in resp.json()["error"]["message"]


async def test_a_cut_stream_ends_with_an_error_event(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(cut_after_chunks=2))
    path, body = wire_request("messages", {"model": "stub", "messages": _history(1)})
    resp = await proxy.client.post(path, json={**body, "stream": True})
    events = [json.loads(x[6:]) for x in resp.text.splitlines() if x.startswith("data: ")]
    assert events[0]["type"] == "message_start"
    assert events[-1]["type"] == "error"
    assert "message_stop" not in [e["type"] for e in events]


async def test_bad_responses_input_is_a_400_naming_the_field(proxy: Any) -> None:
    resp = await proxy.client.post(
        "/v1/responses", json={"model": "stub", "input": [{"type": "mystery_item"}]}
    )
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["param"] == "input[0].type"
    assert "mystery_item" in error["message"]
    missing = await proxy.client.get("/v1/responses/resp_nothing_here")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "response_not_found"


def _tool_scenario() -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "stock", "arguments": '{"item": "pruning saw"}'},
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Our shed budget is 300 euros; never buy second-hand tools."},
        {"role": "assistant", "content": "Understood: 300 euros, new tools only."},
        {"role": "user", "content": "Is a pruning saw in stock?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"in_stock": 4, "price": 42}'},
        {"role": "assistant", "content": "Yes, four at 42 euros each."},
    ]
    for i in range(5):
        messages += [
            {"role": "user", "content": f"Which ladder suits tree row {i}? " * 4},
            {"role": "assistant", "content": f"Row {i} needs a three-metre ladder. " * 6},
        ]
    return {
        "id": "orchard-shed-en",
        "language": "en",
        "system": "You help an orchard buy tools.",
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "stock", "parameters": {}}}],
        "final_user": "What may we spend, and on what kind of tools?",
        "budget_tokens": 300,
        "checks": [
            {"id": "budget", "expect_any": ["300 euros"], "stale_any": []},
            {"id": "new-only", "expect_any": ["never buy second-hand"], "stale_any": []},
        ],
    }


async def test_eval_gives_the_same_figures_through_each_api(tmp_path: Path) -> None:
    (tmp_path / "orchard-shed-en.json").write_text(json.dumps(_tool_scenario()), encoding="utf-8")
    totals = {}
    for api in ("chat", "responses", "messages"):
        report = await run_eval(tmp_path, api=api)
        assert report["api"] == api
        totals[api] = {k: v for k, v in report["total"].items() if k != "prefix_share"}
        assert report["total"]["errors"] == 0
    assert totals["responses"] == totals["chat"]
    assert totals["messages"] == totals["chat"]
    assert totals["chat"]["recall"] == 1.0


@pytest.mark.parametrize("api", ["responses", "messages"])
async def test_two_users_of_one_key_stay_apart_on_the_wire_apis(proxy: Any, api: str) -> None:
    opening = [SYSTEM, {"role": "user", "content": "Hello there"}]
    first_a = await _post(proxy, api, opening, **{"X-Memory-User": "ana"})
    first_b = await _post(proxy, api, opening, **{"X-Memory-User": "ben"})
    assert first_a.status_code == first_b.status_code == 200, first_b.text
    # Identical openings: matched per end user, as on chat completions.
    assert first_a.headers["X-Memory-Session"] != first_b.headers["X-Memory-Session"]
    # The record is awaited like a chat request's (GET /memory/requests/{id} waits).
    rid = first_b.headers["X-Memory-Request-Id"]
    await proxy.services.request_log.wait_for(rid, 2.0)
    assert await proxy.services.store.get_request(rid) is not None
