"""The hybrid extractor against the local stub upstream, reached through litellm.

The rules serve the response path; off it, the rules' uncertain links go to
the model (the stub, which answers the hybrid prompt as each test scripts:
verdicts, malformed JSON, an error or a delay) and its verdicts become memory
ops, or the rules' ops stand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from policies.hybrid import HYBRID_SYSTEM
from proxy.config import ConfigError, settings_from_dict
from proxy.record_text import decision_lines

Reply = dict[str, Any] | None
SYSTEM = {"role": "system", "content": "You help me plan a pottery studio's season."}


def hybrid_config(**memory: Any) -> dict[str, Any]:
    return {"memory": {"extractor": "hybrid", "llm_model": "stub", "llm_timeout_s": 5, **memory}}


def questions_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(body["messages"][1]["content"])["questions"]  # type: ignore[no-any-return]


def answering(verdict: str) -> Callable[[dict[str, Any]], Reply]:
    """Every question of the hybrid prompt answered with `verdict`."""

    def reply(body: dict[str, Any]) -> Reply:
        answers = [{"q": q["q"], "verdict": verdict} for q in questions_of(body)]
        return {"content": json.dumps({"answers": answers})}

    return reply


def route(hybrid: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    def responder(body: dict[str, Any]) -> Reply:
        first = (body.get("messages") or [{}])[0].get("content") or ""
        return hybrid(body) if first == HYBRID_SYSTEM else None

    return responder


def asks(stub: Any) -> list[dict[str, Any]]:
    return [r.body for r in stub.received if r.body["messages"][0].get("content") == HYBRID_SYSTEM]


async def converse(proxy: Any, first: str, second: str) -> tuple[str, dict[str, Any]]:
    """Two user turns, the second request's record; the session id."""
    history: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": first}]
    resp = await proxy.chat(history)
    assert resp.status_code == 200, resp.text
    await proxy.settle()
    history += [
        {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]},
        {"role": "user", "content": second},
    ]
    resp = await proxy.chat(history)
    assert resp.status_code == 200, resp.text
    await proxy.settle()
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    return resp.headers["X-Memory-Session"], json.loads(row["record_json"])


async def user_items(proxy: Any, session: str) -> list[tuple[str, str]]:
    items = await proxy.services.store.load_items(session)
    return sorted((i.value, i.status) for i in items if i.source == "user")


# A new value of the same unit with no cue and no shared subject word: the rules add it.
REVISED = [
    ("The kiln firing takes 9 hours.", "It came out at 11 hours on the test run."),
    ("开放日预计来40位客人。", "报名的有55位客人。"),
]


@pytest.mark.parametrize(("first", "second"), REVISED)
async def test_a_value_only_revision_the_model_confirms_becomes_a_supersede(
    proxy_factory: Any, stub_upstream: Any, first: str, second: str
) -> None:
    proxy = await proxy_factory(**hybrid_config())
    stub_upstream.state.responder = route(answering("revised"))
    session, record = await converse(proxy, first, second)
    assert await user_items(proxy, session) == sorted([(first, "superseded"), (second, "active")])
    (ask,) = asks(stub_upstream)
    (question,) = questions_of(ask)
    assert (question["earlier"], question["new"]) == (first, second)
    assert "id" not in ask["messages"][1]["content"]  # texts only: the prompt repeats
    (call,) = record["policy_calls"]
    assert (call["policy"], call["outcome"], call["attempts"], call["questions"]) == (
        "extractor", "ok", 1, 1,
    )  # fmt: skip
    # The model's decision is in the record beside the rules' (`memproxy inspect`).
    (decided,) = [d for op in record["operations"] for d in op["decisions"]]
    assert (decided["op"], decided["linker"]) == ("supersede", "hybrid_model")
    items = {i.id: i for i in await proxy.services.store.load_items(session)}
    assert items[decided["old"]].value == first
    assert items[decided["new"]].value == second
    assert "hybrid_model" in items[decided["old"]].versions[-1].note


# Look-alikes the rules link by the kind of value alone: a part and a whole, two people.
SEPARATE = [
    (
        "The total for the kitchen renovation is $12,400.",
        "We paid $3,000 for the kitchen renovation.",
    ),
    ("小王订了木屋3晚。", "小李订了木屋5晚。"),
]


@pytest.mark.parametrize(("first", "second"), SEPARATE)
async def test_a_model_saying_separate_keeps_both(
    proxy_factory: Any, stub_upstream: Any, first: str, second: str, tmp_path: Any
) -> None:
    rules = await proxy_factory(memory={"database_url": f"sqlite+aiosqlite:///{tmp_path}/r.db"})
    session, _ = await converse(rules, first, second)
    assert await user_items(rules, session) == sorted([(first, "superseded"), (second, "active")])

    proxy = await proxy_factory(**hybrid_config())
    stub_upstream.reset()
    stub_upstream.state.responder = route(answering("separate"))
    session, record = await converse(proxy, first, second)
    assert await user_items(proxy, session) == sorted([(first, "active"), (second, "active")])
    (decided,) = [d for op in record["operations"] if op["operation"] == "refine"
                  for d in op["decisions"]]  # fmt: skip
    assert (decided["op"], decided["linker"]) == ("separate", "hybrid_model")
    assert "implicit" in decided["why"]  # what the rules had decided
    lines = [line for line in decision_lines(record) if "hybrid_model" in line]
    assert lines == [
        f"#2 {decided['old']} → {decided['new']} kept separate by hybrid_model: "
        "separate (the rules: revised by implicit)"
    ]


async def test_invalid_json_then_valid_is_applied_after_one_retry(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(**hybrid_config())
    replies = iter([{"content": "Sure, revised! {answers: oops"}])
    valid = answering("revised")
    stub_upstream.state.responder = route(lambda body: next(replies, None) or valid(body))
    first, second = REVISED[0]
    session, record = await converse(proxy, first, second)
    (call,) = record["policy_calls"]
    assert (call["attempts"], call["outcome"]) == (2, "ok")
    retry = asks(stub_upstream)[1]["messages"]
    assert "not a valid answer" in retry[-1]["content"]  # the retry says why
    assert await user_items(proxy, session) == sorted([(first, "superseded"), (second, "active")])


@pytest.mark.parametrize("failure", ["invalid twice", "timeout", "error"])
async def test_on_failure_the_rules_ops_stand(
    proxy_factory: Any, stub_upstream: Any, failure: str, tmp_path: Any
) -> None:
    first, second = SEPARATE[0]
    rules = await proxy_factory(memory={"database_url": f"sqlite+aiosqlite:///{tmp_path}/r.db"})
    session, _ = await converse(rules, first, second)
    expected = await rules.services.store.load_items(session)

    def fail(body: dict[str, Any]) -> Reply:
        if failure == "timeout":
            time.sleep(1.0)
            return answering("separate")(body)
        if failure == "error":
            raise RuntimeError("stub: the model is down")  # the stub answers 500
        return {"content": '{"answers": [{"q": 1, "verdict": "maybe"}]}'}  # not a verdict

    proxy = await proxy_factory(**hybrid_config(llm_timeout_s=0.5))
    stub_upstream.reset()
    stub_upstream.state.responder = route(fail)
    session, record = await converse(proxy, first, second)
    (call,) = record["policy_calls"]
    assert call["outcome"].startswith("fallback:")
    if failure == "invalid twice":
        assert call["attempts"] == 2
    assert not [op for op in record["operations"] if op["operation"] == "refine"]
    items = await proxy.services.store.load_items(session)
    assert [(i.value, i.status, i.slot) for i in items] == [
        (i.value, i.status, i.slot) for i in expected
    ]


async def test_nothing_uncertain_asks_nothing(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await proxy_factory(**hybrid_config())
    stub_upstream.state.responder = route(answering("separate"))
    _, record = await converse(
        proxy, "We open the studio at 10am on Saturdays.", "Please list three clay suppliers."
    )
    assert asks(stub_upstream) == []
    assert "policy_calls" not in record


def test_hybrid_without_llm_model_is_a_config_error(tmp_path: Any) -> None:
    config = {"memory": {"extractor": "hybrid", "database_url": f"sqlite:///{tmp_path}/x.db"}}
    with pytest.raises((ConfigError, ValueError), match="llm_model is required when extractor"):
        settings_from_dict(config, env={})
