"""The wire adapters' pure translations: Responses and Anthropic Messages ↔ chat form."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.errors import ProxyError
from proxy.messages_answer import chat_to_message, error_body
from proxy.messages_stream import MessagesStream
from proxy.responses_answer import ResponseRequest, answer_items, unpack_thinking
from proxy.responses_request import chat_to_items, items_to_chat, request_params
from proxy.responses_store import ResponseStore
from proxy.responses_stream import ResponsesStream
from proxy.wire_messages import chat_to_anthropic, messages_to_chat
from proxy.wire_responses import ResponsesWire

CHAT_HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You plan garden work."},
    {"role": "user", "content": "Which beds need water? Never use the hose on the ferns."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "soil", "arguments": '{"bed": "north"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "soil", "arguments": '{"bed": "south"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": "north bed: dry"},
    {"role": "tool", "tool_call_id": "call_b", "content": "south bed: moist"},
    {"role": "assistant", "content": "The north bed needs water."},
    {"role": "user", "content": "Thanks, and the roses?"},
]


def _events(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


# --- Anthropic Messages -------------------------------------------------------------------


def test_anthropic_round_trip_gives_back_the_same_chat_messages() -> None:
    body = {"model": "m", "max_tokens": 10, **chat_to_anthropic(CHAT_HISTORY)}
    _, chat, _ = messages_to_chat(body, anthropic_upstream=False)
    assert chat == CHAT_HISTORY


def test_tool_results_come_before_the_users_text_as_tool_messages() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "find my keys"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"room": "hall"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "also check the car"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "tu_1",
                        "content": [{"type": "text", "text": "not in the hall"}],
                    },
                ],
            },
        ],
    }
    _, chat, _ = messages_to_chat(body, anthropic_upstream=False)
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "user"]
    assert chat[1]["tool_calls"][0]["function"] == {
        "name": "search",
        "arguments": '{"room": "hall"}',
    }
    assert chat[2] == {"role": "tool", "tool_call_id": "tu_1", "content": "not in the hall"}
    assert chat[3] == {"role": "user", "content": "also check the car"}


def test_thinking_blocks_are_kept_verbatim_for_anthropic_and_dropped_elsewhere() -> None:
    thinking = {"type": "thinking", "thinking": "weigh it é\n", "signature": "c2ln/+=="}
    redacted = {"type": "redacted_thinking", "data": "b3BhcXVl"}
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [thinking, redacted, {"type": "text", "text": "ok"}]},
            {"role": "user", "content": "next"},
        ],
    }
    _, kept, _ = messages_to_chat(body, anthropic_upstream=True)
    assert kept[0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert kept[2]["thinking_blocks"] == [thinking, redacted]
    assert kept[2]["thinking_blocks"][0] is not thinking  # a copy, equal field for field
    _, dropped, _ = messages_to_chat(body, anthropic_upstream=False)
    assert dropped[0] == {"role": "system", "content": "stable"}
    assert "thinking_blocks" not in dropped[2]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "m", "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        ({"model": "m", "max_tokens": 5, "messages": []}, "messages"),
        (
            {"model": "m", "max_tokens": 5, "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].role",
        ),
        (
            {
                "model": "m",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": [{"type": "video"}]}],
            },
            "messages[0].content[0].type",
        ),
    ],
)
def test_bad_anthropic_bodies_name_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(ProxyError) as caught:
        messages_to_chat(body, anthropic_upstream=False)
    assert caught.value.status == 400
    assert caught.value.param == param
    assert error_body(caught.value)["error"]["type"] == "invalid_request_error"


def test_chat_answer_becomes_an_anthropic_message_with_thinking_first() -> None:
    block = {"type": "thinking", "thinking": "t", "signature": "s", "index": 0}
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": "Checking.",
                    "thinking_blocks": [block],
                    "tool_calls": [
                        {"id": "tu_9", "function": {"name": "search", "arguments": '{"q": 1}'}}
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }
    message = chat_to_message(body, "claude-x", "msg_1")
    assert [b["type"] for b in message["content"]] == ["thinking", "text", "tool_use"]
    assert message["content"][0] == {"type": "thinking", "thinking": "t", "signature": "s"}
    assert message["content"][2]["input"] == {"q": 1}
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 7, "output_tokens": 3}


def test_messages_stream_opens_and_closes_each_block_in_order() -> None:
    stream = MessagesStream("m", "msg_1")
    raw = stream.chunk({"choices": [{"delta": {"role": "assistant", "content": "Hel"}}]})
    raw += stream.chunk({"choices": [{"delta": {"content": "lo"}}]})
    raw += stream.chunk(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "tu_1",
                                "function": {"name": "f", "arguments": '{"a"'},
                            }
                        ]
                    }
                }
            ]
        }
    )
    raw += stream.chunk(
        {
            "choices": [
                {
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 2}"}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    raw += stream.end({})
    kinds = [e["type"] for e in _events(raw)]
    assert kinds == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    events = _events(raw)
    assert events[6]["content_block"]["type"] == "tool_use"
    assert events[6]["index"] == 1
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


# --- Responses ------------------------------------------------------------------------------


def test_responses_round_trip_gives_back_the_same_chat_messages() -> None:
    instructions, items = chat_to_items(CHAT_HISTORY)
    assert [i["type"] for i in items][:4] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
    ]
    assert items_to_chat(items, instructions) == CHAT_HISTORY


def test_function_calls_join_the_assistant_message_before_them() -> None:
    items = [
        {"role": "user", "content": "weather in two cities"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking both."}],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "rain"},
    ]
    chat = items_to_chat(items)
    assert [m["role"] for m in chat] == ["user", "assistant", "tool"]
    assert chat[1]["content"] == "Checking both."
    assert chat[1]["tool_calls"][0]["id"] == "c1"


def test_responses_params_translate_tools_and_refuse_built_in_ones() -> None:
    params = request_params(
        {
            "max_output_tokens": 50,
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
            "tool_choice": {"type": "function", "name": "f"},
            "text": {"format": {"type": "json_schema", "name": "s", "schema": {}}},
        }
    )
    assert params["max_tokens"] == 50
    assert params["tools"] == [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    ]
    assert params["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    assert params["response_format"]["json_schema"]["name"] == "s"
    with pytest.raises(ProxyError) as caught:
        request_params({"tools": [{"type": "web_search"}]})
    assert caught.value.param == "tools[0].type"


def test_responses_stream_events_follow_openais_order_and_store_the_response() -> None:
    store = ResponseStore()
    request = ResponseRequest({"model": "m"}, "resp_abc", history=[])
    wire = ResponsesWire(request, store, "tenant", [{"role": "user", "content": "hi"}])
    stream = ResponsesStream(wire)
    raw = stream.chunk({"choices": [{"delta": {"content": "Hi "}}]})
    raw += stream.chunk({"choices": [{"delta": {"content": "there"}}]})
    raw += stream.chunk(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}
                        ]
                    }
                }
            ]
        }
    )
    raw += stream.chunk(
        {
            "choices": [{"delta": {}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 2},
        }
    )
    raw += stream.end({})
    events = _events(raw)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    done = events[-1]["response"]
    assert [i["type"] for i in done["output"]] == ["message", "function_call"]
    assert done["output"][0]["content"][0]["text"] == "Hi there"
    assert done["usage"]["total_tokens"] == 6
    stored = store.get("tenant", "resp_abc")
    assert stored.conversation[0] == {"role": "user", "content": "hi"}
    assert len(stored.conversation) == 3
    with pytest.raises(ProxyError) as caught:
        store.get("another tenant", "resp_abc")
    assert caught.value.status == 404


def test_claude_thinking_rides_in_the_reasoning_item_and_goes_back_to_claude_only() -> None:
    block = {"type": "thinking", "thinking": "tide tables first", "signature": "c2lnbmVk+/="}
    message = {
        "content": "High tide at six.",
        "reasoning_content": "tide tables first",
        "thinking_blocks": [{**block, "index": 0}],
    }
    output = answer_items(message, "resp_x")
    assert [i["type"] for i in output] == ["reasoning", "message"]
    assert unpack_thinking(output[0]) == [block]
    items = [{"role": "user", "content": "tides?"}, *output, {"role": "user", "content": "and?"}]
    to_claude = items_to_chat(items, keep_thinking=True)
    assert to_claude[1]["thinking_blocks"] == [block]
    assert to_claude[1]["content"] == "High tide at six."
    assert "thinking_blocks" not in items_to_chat(items)[1]
    foreign = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
    assert unpack_thinking(foreign) == []
