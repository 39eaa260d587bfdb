"""LLM-backed extraction and summarisation against the local stub upstream.

The stub answers the policies' prompts (told apart by their system prompt)
with whatever the test scripts: valid JSON, malformed JSON, or an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from policies.llm.extractor import EXTRACT_SYSTEM
from policies.llm.summarizer import SUMMARY_SYSTEM
from tests.integration.test_lifecycle import BUDGET, FILLER, SYSTEM

Reply = dict[str, Any] | None


def llm_config(**memory: Any) -> dict[str, Any]:
    return {"memory": {"llm_model": "stub", "llm_timeout_s": 5, **memory}}


def route(
    extract: Callable[[dict[str, Any]], Reply] | None = None,
    summarize: Callable[[dict[str, Any]], Reply] | None = None,
) -> Callable[[dict[str, Any]], Reply]:
    """A stub responder: policy prompts go to the given callables, chat gets the default."""

    def responder(body: dict[str, Any]) -> Reply:
        first = (body.get("messages") or [{}])[0].get("content") or ""
        if first == EXTRACT_SYSTEM and extract is not None:
            return extract(body)
        if first == SUMMARY_SYSTEM and summarize is not None:
            return summarize(body)
        return None

    return responder


def message_of(body: dict[str, Any]) -> str:
    return str(body["messages"][1]["content"]).split("Message:\n", 1)[1]


def policy_requests(stub: Any, system: str) -> list[dict[str, Any]]:
    return [r.body for r in stub.received if r.body["messages"][0].get("content") == system]


async def chat_once(proxy: Any, text: str) -> Any:
    resp = await proxy.chat([SYSTEM, {"role": "user", "content": text}])
    assert resp.status_code == 200, resp.text
    await proxy.settle()
    return resp


async def record_of(proxy: Any, resp: Any) -> dict[str, Any]:
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    return json.loads(row["record_json"])  # type: ignore[no-any-return]


async def test_llm_extraction_replaces_the_rules_and_is_accounted(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**llm_config(extractor="llm"))

    def extract(body: dict[str, Any]) -> Reply:
        text = message_of(body)
        value = "allergic to peanuts"
        assert value in text
        out = {"operation": "add", "items": [
            {"type": "constraint", "slot": "allergy", "value": value, "importance": 0.95}
        ]}  # fmt: skip
        return {"content": json.dumps(out)}

    stub_upstream.state.responder = route(extract=extract)
    resp = await chat_once(proxy, "Hi, quick note: my son is allergic to peanuts. Plan lunch.")
    session = resp.headers["X-Memory-Session"]
    items = await proxy.services.store.load_items(session)
    assert [(i.slot, i.value, i.type) for i in items if i.source == "user"] == [
        ("allergy", "allergic to peanuts", "constraint")
    ]
    record = await record_of(proxy, resp)
    (call,) = record["policy_calls"]
    assert call["policy"] == "extractor"
    assert call["outcome"] == "ok"
    assert call["attempts"] == 1
    assert record["policy_tokens"] == call["prompt_tokens"] + call["completion_tokens"] > 0


async def test_malformed_json_is_retried_once_then_the_rules_take_over(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Any
) -> None:
    rules = await proxy_factory(memory={"database_url": f"sqlite+aiosqlite:///{tmp_path}/r.db"})
    text = "From now on, always answer in French. Our budget is 900 euros."
    expected = await chat_once(rules, text)
    rule_items = await rules.services.store.load_items(expected.headers["X-Memory-Session"])

    proxy = await proxy_factory(**llm_config(extractor="llm"))
    stub_upstream.reset()
    stub_upstream.state.responder = route(extract=lambda body: {"content": "Sure! {not json"})
    resp = await chat_once(proxy, text)
    record = await record_of(proxy, resp)
    (call,) = record["policy_calls"]
    assert call["attempts"] == 2
    assert call["outcome"].startswith("fallback: invalid output twice")
    asks = policy_requests(stub_upstream, EXTRACT_SYSTEM)
    assert len(asks) == 2
    assert "not a valid answer" in asks[1]["messages"][-1]["content"]  # the retry says why
    items = await proxy.services.store.load_items(resp.headers["X-Memory-Session"])
    assert sorted((i.type, i.value) for i in items) == sorted((i.type, i.value) for i in rule_items)


async def test_invented_values_fail_validation_and_a_second_answer_is_used(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**llm_config(extractor="llm"))
    answers = iter(
        [
            {"operation": "add", "items": [{"type": "fact", "slot": "x", "value": "made up"}]},
            {"operation": "add", "items": [{"type": "fact", "slot": "city", "value": "Lisbon"}]},
        ]
    )
    stub_upstream.state.responder = route(extract=lambda b: {"content": json.dumps(next(answers))})
    resp = await chat_once(proxy, "We are flying to Lisbon next week.")
    (call,) = (await record_of(proxy, resp))["policy_calls"]
    assert (call["attempts"], call["outcome"]) == (2, "ok")
    items = await proxy.services.store.load_items(resp.headers["X-Memory-Session"])
    assert [i.value for i in items if i.source == "user"] == ["Lisbon"]


@pytest.mark.parametrize("failure", ["error", "timeout"])
async def test_summariser_failure_leaves_the_session_intact(
    proxy_factory: Any, stub_upstream: Any, failure: str
) -> None:
    proxy = await proxy_factory(**llm_config(summarizer="llm", llm_timeout_s=0.5))

    def summarize(body: dict[str, Any]) -> Reply:
        if failure == "timeout":
            import time

            time.sleep(1.0)
            return {"content": json.dumps({"lines": []})}
        raise RuntimeError("stub: summariser upstream down")  # the stub answers 500

    stub_upstream.state.responder = route(summarize=summarize)
    history: list[dict[str, Any]] = [SYSTEM]
    compacted = None
    for i in range(16):
        text = "Our budget is 900 euros, never more." if i == 0 else f"{FILLER} ({i})"
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history, headers=BUDGET)
        assert resp.status_code == 200, resp.text
        history.append(
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}
        )
        await proxy.settle()
        record = await record_of(proxy, resp)
        if record.get("policy_calls"):
            compacted = (resp, record)
            break
    assert compacted is not None, "no compaction happened"
    resp, record = compacted
    (call,) = record["policy_calls"]
    assert call["policy"] == "summarizer"
    assert call["outcome"].startswith("fallback:")
    session = resp.headers["X-Memory-Session"]
    store = proxy.services.store
    chunks = await store.load_summary_chunks(session)
    assert chunks
    assert all(c.method == "rules" for c in chunks)
    turns = await store.load_messages(session)
    assert [m.message["content"] for m in turns] == [m["content"] for m in history[1:]]
    items_before = await store.load_items(session)
    # The next request works and sees the rule-based summary.
    stub_upstream.state.responder = None
    history.append({"role": "user", "content": "Remind me of the budget?"})
    nxt = await proxy.chat(history, headers=BUDGET)
    assert nxt.status_code == 200
    forwarded = stub_upstream.received[-1].body["messages"]
    assert any("900 euros" in str(m["content"]) for m in forwarded)
    await proxy.settle()
    assert {i.id for i in items_before} <= {i.id for i in await store.load_items(session)}


async def test_llm_summary_replaces_the_chunk_and_keeps_protected_values(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**llm_config(summarizer="llm"))

    def summarize(body: dict[str, Any]) -> Reply:
        listing = body["messages"][1]["content"].split("Turns leaving the window:\n", 1)[1]
        turns = [json.loads(line) for line in listing.splitlines() if line.strip()]
        # Paraphrases the budget and drops its number: the check must restore it.
        lines = [{"ordinal": t["ordinal"], "text": "The user set a budget."} for t in turns[:1]]
        return {"content": json.dumps({"lines": lines})}

    stub_upstream.state.responder = route(summarize=summarize)
    history: list[dict[str, Any]] = [SYSTEM]
    for i in range(16):
        text = "Our budget is 900 euros, never more." if i == 0 else f"{FILLER} ({i})"
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history, headers=BUDGET)
        assert resp.status_code == 200
        history.append(
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}
        )
        await proxy.settle()
        if (await record_of(proxy, resp)).get("policy_calls"):
            break
    chunks = await proxy.services.store.load_summary_chunks(resp.headers["X-Memory-Session"])
    assert chunks[0].method == "llm"
    first = chunks[0].lines[0]
    assert first.sentences[0] == "The user set a budget."
    assert "Our budget is 900 euros, never more." in first.sentences  # protected, verbatim


def test_llm_settings_need_a_configured_model() -> None:
    from proxy.config import ConfigError, settings_from_dict

    with pytest.raises(ConfigError, match="llm_model is required"):
        settings_from_dict({"memory": {"summarizer": "llm"}}, env={})
    with pytest.raises(ConfigError, match="not a model_list model_name"):
        settings_from_dict({"memory": {"extractor": "llm", "llm_model": "nope"}}, env={})
