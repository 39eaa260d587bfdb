"""Hostile and odd input: never a 5xx, every rejection in OpenAI's error shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROLES = ["system", "developer", "user", "assistant", "tool", "function", "wizard", "", None, 3]

# Any Unicode (CJK, emoji, controls, zero-width), plus NUL and a few long runs.
text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="你好世界需求改成不要 abc\n\t\x00\u200b", max_size=300),
)

content_part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text}),
    st.fixed_dictionaries(
        {
            "type": st.just("image_url"),
            "image_url": st.fixed_dictionaries({"url": st.just("data:image/png;base64,AAAA")}),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["blob", "", "text"])}),
    st.just("not a part"),
)

message = st.fixed_dictionaries(
    {"role": st.sampled_from(ROLES)},
    optional={
        "content": st.one_of(st.none(), text, st.lists(content_part, max_size=3), st.integers()),
        "tool_call_id": st.one_of(st.text(max_size=8), st.integers()),
        "tool_calls": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "id": st.text(min_size=1, max_size=6),
                        "type": st.just("function"),
                        "function": st.fixed_dictionaries(
                            {"name": st.text(min_size=1, max_size=6), "arguments": st.just("{}")}
                        ),
                    }
                ),
                max_size=2,
            ),
            st.just("nope"),
        ),
        "name": st.one_of(st.text(max_size=5), st.integers()),
    },
)

headers = st.fixed_dictionaries(
    {},
    optional={
        "X-Memory-Budget": st.one_of(
            st.integers(-10, 10**12).map(str), st.sampled_from(["", "abc", "1e9", " 50 "])
        ),
        "X-Memory-Mode": st.sampled_from(["managed", "raw", "shadow", "compare", "weird", ""]),
        "X-Memory-Policy": st.sampled_from(["full", "window", "raw", "summary_buffer", "zzz"]),
        "X-Memory-Session": st.text(alphabet="abcXYZ-_09", min_size=1, max_size=20),
    },
)


def _check(resp: Any) -> None:
    assert resp.status_code < 500 or resp.status_code in (502, 504), resp.text
    if resp.status_code >= 400:
        body = resp.json()
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["message"]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages=st.lists(message, max_size=8), hdrs=headers)
async def test_random_message_lists_never_cause_a_5xx(
    proxy: Any, messages: list[dict[str, Any]], hdrs: dict[str, str]
) -> None:
    resp = await proxy.chat(messages, headers=hdrs)
    _check(resp)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=5), children, max_size=3)
        ),
        max_leaves=20,
    )
)
async def test_arbitrary_json_bodies_are_rejected_cleanly(proxy: Any, body: Any) -> None:
    resp = await proxy.client.post(
        "/v1/chat/completions",
        content=json.dumps(body),
        headers={"content-type": "application/json"},
    )
    _check(resp)


async def test_deeply_nested_json_is_a_400(proxy: Any) -> None:
    payload = "[" * 100_000 + "]" * 100_000
    resp = await proxy.client.post(
        "/v1/chat/completions", content=payload, headers={"content-type": "application/json"}
    )
    assert resp.status_code == 400
    _check(resp)


async def test_ten_thousand_messages_are_handled(proxy: Any) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(10_000)
    ] + [{"role": "user", "content": "last"}]
    resp = await proxy.chat(messages, headers={"X-Memory-Budget": "500"})
    assert resp.status_code == 200, resp.text
    assert int(resp.headers["X-Memory-Context-Tokens"]) <= 500


async def test_message_count_limit(proxy_factory: Any) -> None:
    harness = await proxy_factory(server={"max_messages": 50})
    messages = [{"role": "user", "content": "x"}] * 51
    resp = await harness.chat(messages)
    assert resp.status_code == 400
    assert resp.json()["error"]["param"] == "messages"


async def test_huge_header_is_rejected(proxy: Any) -> None:
    resp = await proxy.chat(
        [{"role": "user", "content": "x"}], headers={"X-Memory-Session": "s" * 5000}
    )
    assert resp.status_code == 400
    _check(resp)


async def test_lone_surrogates_in_json_escapes(proxy: Any) -> None:
    payload = '{"model": "stub", "messages": [{"role": "user", "content": "bad \\ud800 text"}]}'
    resp = await proxy.client.post(
        "/v1/chat/completions", content=payload, headers={"content-type": "application/json"}
    )
    _check(resp)


async def test_empty_and_huge_contents(proxy: Any) -> None:
    for content in ("", " ", "长" * 200_000):
        resp = await proxy.chat(
            [{"role": "user", "content": content}], headers={"X-Memory-Budget": "1000"}
        )
        _check(resp)


# --- conversations with tool calls: answered, unanswered, orphaned, duplicated ----------

# One step of a conversation. A tool step is an assistant message with calls,
# then what came back for them: "all" answered in order, "shuffled", "missing"
# one, an "orphan" result for a call never made, or a "duplicate" result.
step = st.one_of(
    st.tuples(st.just("user"), text),
    st.tuples(st.just("assistant"), text),
    st.tuples(
        st.just("tools"),
        st.integers(1, 3),
        st.sampled_from(["all", "all", "shuffled", "missing", "orphan", "duplicate"]),
        text,
    ),
)


def _conversation(steps: list[Any]) -> tuple[list[dict[str, Any]], bool]:
    """Messages from steps, and whether every tool call is answered and every result paired."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You may call tools."}]
    well_formed = True
    for n, item in enumerate(steps):
        if item[0] in ("user", "assistant"):
            messages.append({"role": item[0], "content": item[1]})
            continue
        _, calls, answered, result = item
        ids = [f"call_{n}_{i}" for i in range(calls)]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                    for i in ids
                ],
            }
        )
        replies = list(ids)
        if answered == "shuffled":
            replies.reverse()
        elif answered == "missing":
            replies.pop()
        elif answered == "orphan":
            replies.append(f"call_never_made_{n}")
        elif answered == "duplicate":
            replies.append(ids[0])
        well_formed &= answered in ("all", "shuffled")
        messages += [{"role": "tool", "tool_call_id": i, "content": result} for i in replies]
    messages.append({"role": "user", "content": "and now?"})
    return messages, well_formed


def _pairs_intact(messages: list[dict[str, Any]]) -> bool:
    """Every tool result follows the call it answers; every call is answered."""
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in open_calls:
                return False
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return False  # a call left unanswered before the conversation went on
        open_calls = {c["id"] for c in message.get("tool_calls") or []}
    return not open_calls


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=1, max_size=10), budget=st.integers(60, 3000))
async def test_tool_conversations_never_split_a_pair_nor_cause_a_5xx(
    proxy: Any, stub_upstream: Any, steps: list[Any], budget: int
) -> None:
    messages, well_formed = _conversation(steps)
    calls = len(stub_upstream.received)
    resp = await proxy.chat(messages, headers={"X-Memory-Budget": str(budget)})
    _check(resp)
    if resp.status_code == 200 and well_formed:
        assert len(stub_upstream.received) == calls + 1
        sent = stub_upstream.received[-1].body["messages"]
        assert _pairs_intact(sent), sent
        assert sent[-1] == messages[-1]  # the current input is never cut


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(junk=st.binary(min_size=1, max_size=40))
async def test_invalid_utf8_in_a_body_is_a_400(proxy: Any, junk: bytes) -> None:
    body = b'{"model": "stub", "messages": [{"role": "user", "content": "a' + junk + b'"}]}'
    resp = await proxy.client.post(
        "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
    )
    _check(resp)
    try:
        json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == "invalid_json"


@pytest.mark.parametrize(
    "name", ["X-Memory-Session", "X-Memory-Mode", "X-Memory-Budget", "X-Memory-Policy"]
)
async def test_every_memory_header_has_a_size_limit(proxy_factory: Any, name: str) -> None:
    harness = await proxy_factory(server={"max_header_bytes": 64})
    resp = await harness.chat([{"role": "user", "content": "x"}], headers={name: "7" * 65})
    assert resp.status_code == 400
    _check(resp)
    assert resp.json()["error"]["param"] == name.lower()


async def test_header_bytes_outside_ascii_are_no_5xx(proxy: Any) -> None:
    for value in (b"caf\xe9", b"\xff\xfe", "会话".encode()):
        resp = await proxy.client.post(
            "/v1/chat/completions",
            json={"model": "stub", "messages": [{"role": "user", "content": "x"}]},
            headers=[(b"X-Memory-Session", value)],
        )
        _check(resp)


async def test_a_chunked_body_over_the_limit_is_a_413(proxy_factory: Any) -> None:
    """No Content-Length to trust: the limit holds while the body is read."""
    harness = await proxy_factory(server={"max_body_bytes": 10_000})

    async def body() -> Any:
        yield b'{"model": "stub", "messages": [{"role": "user", "content": "'
        for _ in range(50):
            yield b"x" * 1000
        yield b'"}]}'

    resp = await harness.client.post(
        "/v1/chat/completions", content=body(), headers={"content-type": "application/json"}
    )
    assert resp.status_code == 413
    _check(resp)
