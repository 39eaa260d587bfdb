"""Hostile and odd input: never a 5xx, every rejection in OpenAI's error shape."""

from __future__ import annotations

import json
from typing import Any

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
