"""End to end: the Responses API (openai SDK) and Anthropic Messages (anthropic SDK)
against `memproxy serve` and the stub: memory is managed on both, as on chat."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
import yaml

from proxy.eval_scoring import format_tokens
from proxy.tokens import TokenCounter
from tests.conftest import make_config
from tests.e2e.serving import free_port, serve

pytestmark = pytest.mark.e2e

KEY = "sk-wire-client"
WEATHER_FN = {
    "name": "weather",
    "description": "current weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
# The early constraint of the long histories below (written for these tests).
CONSTRAINT = "Never book any ferry that leaves before 9 a.m.; I get seasick at dawn."


@pytest.fixture(scope="module")
def served(stub: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("wire")
    config = make_config(
        stub.url, tmp / "memproxy.db", server={"request_timeout_s": 5, "api_keys": [KEY]}
    )
    config["model_list"].append(
        {
            "model_name": "claude-stub",
            "litellm_params": {
                "model": "anthropic/claude-sonnet-4-5",
                "api_base": f"http://127.0.0.1:{stub.port}",
                "api_key": "sk-ant-provider-secret",
            },
            "model_info": {"max_input_tokens": 16000},
        }
    )
    config_path = tmp / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_port()
    proc = serve(config_path, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def oai(served: str, stub: Any) -> openai.OpenAI:
    stub.reset()
    return openai.OpenAI(base_url=f"{served}/v1", api_key=KEY, max_retries=0)


@pytest.fixture
def claude(served: str, stub: Any) -> anthropic.Anthropic:
    stub.reset()
    return anthropic.Anthropic(base_url=served, api_key=KEY, max_retries=0)


def assert_valid_roles(messages: list[dict[str, Any]]) -> None:
    """Chat order a provider accepts: a user turn first and last; each tool call answered
    right after it (system messages may stand between turns on chat completions)."""
    roles = [m["role"] for m in messages if m["role"] != "system"]
    assert roles[0] == "user", roles
    assert roles[-1] in ("user", "tool"), roles
    pending: set[str] = set()
    for msg in messages:
        if msg["role"] == "system":
            continue
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in pending, roles
            pending.discard(msg["tool_call_id"])
            continue
        assert not pending, f"tool calls left unanswered before {msg['role']}: {roles}"
        pending = {c["id"] for c in msg.get("tool_calls") or ()}


def _block_texts(content: Any) -> str:
    if isinstance(content, str) or content is None:
        return content or ""
    texts = []
    for block in content:
        inner = block.get("content")
        texts.append(block.get("text") or (_block_texts(inner) if inner is not None else ""))
    return "\n".join(texts)


def _long_history(rounds: int) -> list[dict[str, Any]]:
    history = [{"role": "user", "content": f"Plan my island trip. {CONSTRAINT}"}]
    history.append({"role": "assistant", "content": "Noted: no ferry before 9 a.m."})
    for n in range(1, rounds):
        history.append({"role": "user", "content": f"Day {n}: what could we see on island {n}?"})
        filler = " ".join(
            f"Island {n} has a harbour walk, a market and cove {k}." for k in range(8)
        )
        history.append({"role": "assistant", "content": filler})
    return history


# --- Responses (openai SDK) ---------------------------------------------------------------


def test_responses_plain(oai: openai.OpenAI, stub: Any) -> None:
    raw = oai.responses.with_raw_response.create(
        model="stub", instructions="Answer briefly.", input="hello from responses"
    )
    response = raw.parse()
    assert response.output_text == "echo: hello from responses"
    assert response.id.startswith("resp_")
    assert response.usage is not None
    assert response.usage.total_tokens > 0
    assert raw.headers["x-memory-mode"] == "managed"
    assert raw.headers["x-memory-session"]
    assert stub.received[-1].body["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "hello from responses"},
    ]


def test_responses_streamed_events_in_order(oai: openai.OpenAI) -> None:
    stream = oai.responses.create(model="stub", input="stream these words", stream=True)
    kinds, text, final = [], "", None
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.output_text.delta":
            text += event.delta
        if event.type == "response.completed":
            final = event.response
    assert text == "echo: stream these words"
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert final is not None
    assert final.output_text == text


def test_responses_tool_round_trip_stateless_and_by_previous_id(
    oai: openai.OpenAI, stub: Any
) -> None:
    tools: Any = [{"type": "function", **WEATHER_FN}]
    first = oai.responses.create(model="stub", input="weather in Lisbon?", tools=tools)
    call = next(item for item in first.output if item.type == "function_call")
    assert call.name == "weather"
    assert stub.received[-1].body["tools"][0]["function"]["name"] == "weather"
    # The client keeps the history itself ...
    history: Any = [
        {"role": "user", "content": "weather in Lisbon?"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": "18C, windy"},
    ]
    second = oai.responses.create(model="stub", input=history, tools=tools)
    assert second.output_text == "echo: 18C, windy"
    forwarded = stub.received[-1].body["messages"]
    assert_valid_roles(forwarded)
    assert forwarded[-2]["tool_calls"][0]["id"] == call.call_id
    assert forwarded[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "18C, windy"}
    # ... or sends only the tool output and lets the proxy supply the rest.
    output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "19C"}]
    third = oai.responses.create(
        model="stub", previous_response_id=first.id, input=output, tools=tools
    )
    assert third.output_text == "echo: 19C"
    assert third.previous_response_id == first.id
    forwarded = stub.received[-1].body["messages"]
    assert_valid_roles(forwarded)
    assert [m["role"] for m in forwarded] == ["user", "assistant", "tool"]


def test_previous_response_id_supplies_the_conversation(oai: openai.OpenAI, stub: Any) -> None:
    first = oai.responses.create(model="stub", input="my locker code is 4471")
    second = oai.responses.create(
        model="stub", previous_response_id=first.id, input="what is my locker code?"
    )
    assert second.output_text == "echo: what is my locker code?"
    assert stub.received[-1].body["messages"] == [
        {"role": "user", "content": "my locker code is 4471"},
        {"role": "assistant", "content": "echo: my locker code is 4471"},
        {"role": "user", "content": "what is my locker code?"},
    ]
    assert oai.responses.retrieve(second.id).output_text == second.output_text
    items = oai.responses.input_items.list(second.id)
    assert next(i.type for i in items.data) == "message"
    oai.responses.delete(second.id)
    with pytest.raises(openai.NotFoundError) as caught:
        oai.responses.retrieve(second.id)
    assert caught.value.body["message"].startswith("Response with id")  # type: ignore[index]
    unstored = oai.responses.create(model="stub", input="forget me", store=False)
    with pytest.raises(openai.NotFoundError):
        oai.responses.retrieve(unstored.id)
    with pytest.raises(openai.NotFoundError):
        oai.responses.create(model="stub", previous_response_id=unstored.id, input="and?")


def test_responses_long_history_within_budget_keeps_the_constraint(
    oai: openai.OpenAI, stub: Any
) -> None:
    history = _long_history(32)
    items: Any = [*history, {"role": "user", "content": "Which ferry for the last island?"}]
    raw = oai.responses.with_raw_response.create(
        model="stub",
        instructions="You are a travel planner.",
        input=items,
        extra_headers={"X-Memory-Budget": "700"},
    )
    raw.parse()
    forwarded = stub.received[-1].body["messages"]
    assert int(raw.headers["x-memory-context-tokens"]) <= 700
    assert format_tokens(TokenCounter("cl100k_base"), forwarded) <= 700 * 1.05
    assert int(raw.headers["x-memory-raw-tokens"]) > 2000
    assert any(CONSTRAINT in json.dumps(m["content"]) for m in forwarded)
    assert forwarded[-1]["content"] == "Which ferry for the last island?"
    assert_valid_roles(forwarded)


def test_responses_to_claude_keep_its_thinking_for_the_next_turn(
    oai: openai.OpenAI, stub: Any
) -> None:
    first = oai.responses.create(
        model="claude-stub",
        input="ponder the tides",
        reasoning={"effort": "low"},
        max_output_tokens=3000,
    )
    reasoning = next(item for item in first.output if item.type == "reasoning")
    assert reasoning.encrypted_content
    assert stub.received[-1].path == "/v1/messages"  # Claude's native API
    oai.responses.create(
        model="claude-stub",
        input="go on",
        previous_response_id=first.id,
        reasoning={"effort": "low"},
        max_output_tokens=3000,
    )
    sent = stub.received[-1].body["messages"]
    assert sent[1]["role"] == "assistant"
    thinking = sent[1]["content"][0]
    assert thinking["type"] == "thinking"
    assert thinking["signature"].startswith("sig-")
    assert thinking["signature"] in reasoning.encrypted_content


def test_langchain_chat_openai_on_the_responses_api(served: str, stub: Any) -> None:
    # langchain-openai is in the dev extras (added with the pass-through routes).
    langchain_openai = pytest.importorskip("langchain_openai")
    stub.reset()
    llm = langchain_openai.ChatOpenAI(
        model="stub", base_url=f"{served}/v1", api_key=KEY, use_responses_api=True, max_retries=0
    )
    answer = llm.invoke("hello from langchain")
    assert "echo: hello from langchain" in str(answer.content)
    assert stub.received[-1].body["messages"][-1]["content"] == "hello from langchain"


# --- Anthropic Messages (anthropic SDK) ---------------------------------------------------


def test_messages_plain_to_an_anthropic_model(claude: anthropic.Anthropic, stub: Any) -> None:
    raw = claude.messages.with_raw_response.create(
        model="claude-stub",
        max_tokens=200,
        system=[{"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "hello claude"}],
        extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
    )
    message = raw.parse()
    assert message.content[0].type == "text"
    assert message.content[0].text == "echo: hello claude"
    assert message.stop_reason == "end_turn"
    assert raw.headers["x-memory-mode"] == "managed"
    sent = stub.received[-1]
    assert sent.path == "/v1/messages"
    assert sent.body["system"] == [
        {"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert "interleaved-thinking-2025-05-14" in sent.headers.get("anthropic-beta", "")
    assert sent.headers["x-api-key"] == "sk-ant-provider-secret"  # the provider's, not ours


def test_messages_to_an_openai_model_go_through_chat(
    claude: anthropic.Anthropic, stub: Any
) -> None:
    message = claude.messages.create(
        model="stub",
        max_tokens=50,
        system="Be terse.",
        messages=[{"role": "user", "content": "hello openai model"}],
    )
    assert message.content[0].type == "text"
    assert message.content[0].text == "echo: hello openai model"
    assert stub.received[-1].path == "/v1/chat/completions"
    assert stub.received[-1].body["messages"][0] == {"role": "system", "content": "Be terse."}


def test_messages_streamed(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(
        model="claude-stub", max_tokens=100, messages=[{"role": "user", "content": "stream it"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "echo: stream it"
    assert final.content[0].type == "text"
    assert final.stop_reason == "end_turn"
    kinds = []
    for event in claude.messages.create(
        model="claude-stub",
        max_tokens=100,
        stream=True,
        messages=[{"role": "user", "content": "events please"}],
    ):
        kinds.append(event.type)
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "content_block_delta" in kinds
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    with claude.messages.stream(
        model="claude-stub",
        max_tokens=2000,
        thinking=thinking,
        messages=[{"role": "user", "content": "think while streaming"}],
    ) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text"]
    block = final.content[0]
    assert block.type == "thinking"
    assert block.signature.startswith("sig-")


def test_messages_tool_use_round_trip(claude: anthropic.Anthropic, stub: Any) -> None:
    tools: Any = [
        {"name": "weather", "description": "weather", "input_schema": WEATHER_FN["parameters"]}
    ]
    question: Any = {"role": "user", "content": "weather in Porto?"}
    first = claude.messages.create(
        model="claude-stub", max_tokens=100, tools=tools, messages=[question]
    )
    use = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use"
    result: Any = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "21C, sunny"}],
    }
    assistant: Any = {"role": "assistant", "content": [b.model_dump() for b in first.content]}
    second = claude.messages.create(
        model="claude-stub", max_tokens=100, tools=tools, messages=[question, assistant, result]
    )
    assert second.content[0].type == "text"
    assert second.content[0].text == "echo: 21C, sunny"
    sent = stub.received[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][-1]["type"] == "tool_use"
    assert sent[1]["content"][-1]["id"] == use.id
    assert sent[2]["content"][0]["tool_use_id"] == use.id


def test_thinking_blocks_reach_the_anthropic_upstream_byte_for_byte(
    claude: anthropic.Anthropic, stub: Any
) -> None:
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    question: Any = {"role": "user", "content": "think about tides"}
    first = claude.messages.create(
        model="claude-stub", max_tokens=2000, thinking=thinking, messages=[question]
    )
    assert first.content[0].type == "thinking"
    returned = first.content[0].model_dump()
    # A block as a client may hold it: non-ASCII text, escapes, base64 signature.
    crafted = {
        "type": "thinking",
        "thinking": 'tides: "spring" vs neap — 潮汐\n\ttab \\ slash',
        "signature": "EpQBCkYIBRgCKkB+/=z09",
    }
    redacted = {"type": "redacted_thinking", "data": "RW5jcnlwdGVkIHRoaW5raW5n+/=="}
    history: Any = [
        question,
        {"role": "assistant", "content": [crafted, redacted, {"type": "text", "text": "Hm."}]},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": "go on"},
    ]
    claude.messages.create(
        model="claude-stub", max_tokens=2000, thinking=thinking, messages=history
    )
    sent = stub.received[-1]
    blocks = [b for m in sent.body["messages"] if m["role"] == "assistant" for b in m["content"]]
    kept = [b for b in blocks if b["type"] in ("thinking", "redacted_thinking")]
    assert kept == [crafted, redacted, returned]
    for block in (crafted, returned):
        for key in ("thinking", "signature"):
            encodings = {json.dumps(block[key], ensure_ascii=a).encode() for a in (True, False)}
            assert any(e in sent.raw for e in encodings), key
    assert sent.body["thinking"] == thinking


def test_count_tokens_and_errors_in_anthropics_shape(
    claude: anthropic.Anthropic, served: str
) -> None:
    counted = claude.messages.count_tokens(
        model="claude-stub",
        system="Be terse.",
        messages=[{"role": "user", "content": "how many tokens is this sentence?"}],
    )
    assert 5 < counted.input_tokens < 60
    with pytest.raises(anthropic.AuthenticationError) as caught:
        anthropic.Anthropic(base_url=served, api_key="sk-wrong", max_retries=0).messages.create(
            model="claude-stub", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
    assert caught.value.body["type"] == "error"  # type: ignore[index]
    assert caught.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
    missing = httpx.post(
        f"{served}/v1/messages",
        headers={"x-api-key": KEY},
        json={"model": "claude-stub", "messages": [{"role": "user", "content": "x"}]},
    )
    assert missing.status_code == 400
    assert missing.json() == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "max_tokens: Field required (a positive integer)",
        },
    }
    with pytest.raises(anthropic.NotFoundError):
        claude.messages.create(
            model="no-such-model", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )


def test_messages_long_history_within_budget_keeps_the_constraint(
    claude: anthropic.Anthropic, stub: Any
) -> None:
    history: Any = [*_long_history(32), {"role": "user", "content": "Which ferry home?"}]
    raw = claude.messages.with_raw_response.create(
        model="claude-stub",
        max_tokens=300,
        system="You are a travel planner.",
        messages=history,
        extra_headers={"X-Memory-Budget": "700"},
    )
    raw.parse()
    assert int(raw.headers["x-memory-context-tokens"]) <= 700
    assert int(raw.headers["x-memory-raw-tokens"]) > 2000
    sent = stub.received[-1].body
    # What the upstream reads, message by message: the texts of its blocks.
    as_chat = [{"role": "system", "content": _block_texts(sent.get("system"))}]
    as_chat += [
        {"role": m["role"], "content": _block_texts(m["content"])} for m in sent["messages"]
    ]
    text = json.dumps(sent, ensure_ascii=False)
    assert CONSTRAINT in text
    assert format_tokens(TokenCounter("cl100k_base"), as_chat) <= 700 * 1.05
    roles = [m["role"] for m in sent["messages"]]
    assert roles[0] == "user"
    assert roles[-1] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert sent["messages"][-1]["content"][-1]["text"] == "Which ferry home?"
