"""Long-term memory with an embeddings endpoint, and what a session deletion takes back.

The embedding model is the local stub's `/v1/embeddings` reached through litellm:
hashed character-trigram vectors, so "allergic" and "allergies" are close though
no word is shared (a real model also relates true paraphrases; the stub does not,
and no test pretends it does). Its scale sits near 0 for unrelated texts, hence
the low `embedding_min_similarity` configured here.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from policies.longterm.backfill import BACKFILL_HEADER
from proxy.stub.state import Fault
from tests.integration.test_longterm import SYSTEM, auth, converse, latest_record

KEY, ADMIN = "key-tenant-a", {"Authorization": "Bearer adm-key-7"}
ALLERGY = "I'm allergic to shellfish, so no shrimp or crab for me."
ROOMS = "From now on, always book non-smoking rooms."
ASK_ALLERGIES = "Any allergies I should flag to the restaurant?"
EMBEDDINGS = "/v1/embeddings"


def with_embedder(stub_url: str, **long_term: Any) -> dict[str, Any]:
    model_list = [
        {"model_name": "stub", "litellm_params": {"model": "openai/stub-model",
         "api_base": stub_url, "api_key": "sk-provider-secret-123"}},
        {"model_name": "embedder", "litellm_params": {"model": "openai/stub-embedding",
         "api_base": stub_url, "api_key": "sk-provider-secret-123"}},
    ]  # fmt: skip
    return {
        "model_list": model_list,
        "server": {"api_keys": [KEY], "admin_key": "adm-key-7", "request_timeout_s": 5},
        "memory": {
            "long_term": {
                "embedding_model": "embedder",
                "embedding_min_similarity": 0.15,
                **long_term,
            }
        },
    }


def background(stub: Any) -> list[str]:
    """The background lines of the last chat request forwarded ([] if none)."""
    chat = [r for r in stub.received if r.path != EMBEDDINGS][-1]
    blocks = [
        str(m["content"])
        for m in chat.body["messages"]
        if m["role"] == "system" and str(m["content"]).startswith(BACKFILL_HEADER)
    ]
    return blocks[0].splitlines()[1:] if blocks else []


def embedding_requests(stub: Any) -> list[dict[str, Any]]:
    return [r.body for r in stub.received if r.path == EMBEDDINGS]


def calls_of(record: dict[str, Any], policy: str) -> list[dict[str, Any]]:
    return [c for c in record.get("policy_calls", []) if c["policy"] == policy]


async def test_a_related_word_form_is_found_by_meaning_and_the_calls_are_recorded(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**with_embedder(stub_upstream.url))
    headers = auth(KEY, "ana")
    await converse(proxy, ["I'm hosting a dinner party next week.", ALLERGY], headers)
    # The consolidated rule was embedded after the response, recorded with that request.
    record = await latest_record(proxy)
    [items_call] = calls_of(record, "embedding:items")
    assert items_call["outcome"] == "ok"
    assert items_call["prompt_tokens"] > 0
    assert embedding_requests(stub_upstream)[-1]["input"] == [ALLERGY]
    rows = await proxy.services.store.load_long_term(None, "ana")
    assert [(r.value, r.embedding_model, len(r.embedding or ())) for r in rows] == [
        (ALLERGY, "embedder", 512)
    ]

    await converse(proxy, [ASK_ALLERGIES], headers)
    assert [line.split(": ", 1)[1] for line in background(stub_upstream)] == [ALLERGY]
    record = await latest_record(proxy)
    [input_call] = calls_of(record, "embedding:input")
    assert (input_call["outcome"], input_call["prompt_tokens"] > 0) == ("ok", True)
    assert embedding_requests(stub_upstream)[-1]["input"] == [ASK_ALLERGIES]
    [shown] = [c for c in record["managed"]["candidates"] if c["kind"] == "longterm"]
    assert re.search(r"meaning \(cosine 0\.\d\d\)", shown["reason"])


async def test_without_embeddings_the_same_input_finds_nothing(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(server={"api_keys": [KEY], "admin_key": "adm-key-7"})
    headers = auth(KEY, "ana")
    await converse(proxy, ["I'm hosting a dinner party next week.", ALLERGY], headers)
    await converse(proxy, [ASK_ALLERGIES], headers)
    assert background(stub_upstream) == []
    assert embedding_requests(stub_upstream) == []


async def test_an_unrelated_input_gets_no_background_even_with_embeddings(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**with_embedder(stub_upstream.url))
    headers = auth(KEY, "ben")
    await converse(proxy, ["I'm hosting a dinner party next week.", ALLERGY], headers)
    await converse(proxy, ["How do I rotate a PDF page?"], headers)
    assert background(stub_upstream) == []


@pytest.mark.parametrize(
    "fault",
    [Fault(status=500, path=EMBEDDINGS), Fault(delay_s=1.5, path=EMBEDDINGS)],
    ids=["error", "timeout"],
)
async def test_a_failing_embeddings_endpoint_leaves_chat_and_lexical_recall_working(
    proxy_factory: Any, stub_upstream: Any, fault: Fault
) -> None:
    proxy = await proxy_factory(**with_embedder(stub_upstream.url, embedding_timeout_s=0.5))
    headers = auth(KEY, "cruz")
    await converse(proxy, ["Help me plan a trip to Porto.", ROOMS], headers)
    stub_upstream.inject(fault, times=10)  # litellm retries embeddings on its own
    history = await converse(proxy, ["Book a hotel room in Porto for two nights."], headers)
    assert history[-1]["role"] == "assistant"
    assert [line.split(": ", 1)[1] for line in background(stub_upstream)] == [ROOMS]
    record = await latest_record(proxy)
    [failed] = calls_of(record, "embedding:input")
    # An error is retried by litellm until the timeout: either way, lexical only.
    assert failed["outcome"] in (
        "fallback: lexical (ProxyError)",
        "fallback: lexical (TimeoutError)",
    )
    assert proxy.services.pipeline.longterm.embedding_failures >= 1
    # A consolidation whose embedding fails stores its rows all the same, unembedded.
    await converse(proxy, ["New trip: Lyon.", "From now on, always pick aisle seats."], headers)
    rows = await proxy.services.store.load_long_term(None, "cruz")
    aisle = next(r for r in rows if "aisle" in r.value)
    assert aisle.embedding is None
    metrics = (await proxy.client.get("/metrics")).text
    assert re.search(r"^memproxy_long_term_embedding_failures_total [1-9]", metrics, re.M)


async def test_the_queue_is_measured_in_metrics(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    proxy = await proxy_factory(server={"api_keys": [KEY], "admin_key": "adm-key-7"})

    def figure(text: str, name: str) -> int:
        found = re.search(rf"^{name} (\d+)$", text, re.M)
        assert found is not None, name
        return int(found.group(1))

    await converse(proxy, ["Help me plan a trip.", ROOMS], auth(KEY, "dee"))
    text = (await proxy.client.get("/metrics")).text
    assert figure(text, "memproxy_long_term_consolidated_total") == 2  # one job per request
    assert figure(text, "memproxy_long_term_queue_depth") == 0
    assert figure(text, "memproxy_long_term_failed_total") == 0
    assert figure(text, "memproxy_long_term_dropped_total") == 0
    with sqlite3.connect(tmp_path / "memproxy.db") as conn:
        conn.execute("DROP TABLE long_term_items")
    await converse(proxy, ["Another question."], auth(KEY, "dee"))
    text = (await proxy.client.get("/metrics")).text
    assert figure(text, "memproxy_long_term_failed_total") == 1


async def test_deleting_a_conversation_takes_back_what_it_alone_told(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(server={"api_keys": [KEY], "admin_key": "adm-key-7"})
    aisle = "From now on, always pick aisle seats."

    async def conversation(name: str, turns: list[str]) -> str:
        headers = {**auth(KEY, "eli"), "X-Memory-Session": name}
        history: list[dict[str, Any]] = [SYSTEM]
        session = ""
        for text in turns:
            history.append({"role": "user", "content": text})
            resp = await proxy.chat(history, headers=headers)
            assert resp.status_code == 200, resp.text
            session = resp.headers["X-Memory-Session-Id"]
            history.append(resp.json()["choices"][0]["message"])
        await proxy.settle()
        return session

    first = await conversation("trip-1", ["Planning a trip to Oslo.", ROOMS])
    second = await conversation("trip-2", ["Now a trip to Bergen.", ROOMS, aisle])

    async def items() -> list[tuple[str, list[str]]]:
        listed = await proxy.client.get("/memory/users/eli/items", headers=ADMIN)
        return sorted((i["value"], i["value_sessions"]) for i in listed.json()["data"])

    assert await items() == [(ROOMS, [first, second]), (aisle, [second])]
    deleted = await proxy.client.delete(f"/memory/sessions/{second}", headers=ADMIN)
    assert deleted.status_code == 200, deleted.text
    assert await items() == [(ROOMS, [first])]
    await proxy.client.delete(f"/memory/sessions/{first}", headers=ADMIN)
    assert await items() == []
