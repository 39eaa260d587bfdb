"""Token accounting, atomic groups, the mandatory split and budget resolution."""

from __future__ import annotations

import json
from typing import Any

import pytest

from policies.assemble.budget import (
    MIN_DERIVED_BUDGET,
    NON_TEXT_PART_TOKENS,
    group_turns,
    is_forwardable,
    message_text,
    message_tokens,
    resolve_budget,
    select_recent_groups,
    split_mandatory,
)
from policies.types import MESSAGE_OVERHEAD_TOKENS, Turn


def count(text: str) -> int:
    return len(text) // 4 + 1


def turns_from(messages: list[dict[str, Any]]) -> list[Turn]:
    return [
        Turn(
            ordinal=i,
            role=m["role"],
            text=message_text(m)[0],
            raw=m,
            tokens=message_tokens(m, count),
            tool_call_ids=tuple(c["id"] for c in m.get("tool_calls") or ()),
            tool_call_id=m.get("tool_call_id"),
        )
        for i, m in enumerate(messages)
    ]


def call(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


def result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str = "hello") -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def roles(turns: list[Turn]) -> list[str]:
    return [t.role for t in turns]


# --- message_tokens ----------------------------------------------------------


def test_message_tokens_of_text_adds_overhead() -> None:
    assert message_tokens("abcdefgh", count) == count("abcdefgh") + MESSAGE_OVERHEAD_TOKENS


def test_message_tokens_counts_tool_calls_json() -> None:
    msg = call("a", "b")
    expected = count(json.dumps(msg["tool_calls"], ensure_ascii=False)) + MESSAGE_OVERHEAD_TOKENS
    assert message_tokens(msg, count) == expected


def test_message_tokens_content_parts_and_empty_content() -> None:
    parts = {
        "role": "user",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 9999}},
            {"type": "text", "text": "efgh"},
        ],
    }
    assert message_tokens(parts, count) == count("abcdefgh") + NON_TEXT_PART_TOKENS + 4
    assert message_tokens({"role": "assistant", "content": None}, count) == 4


def test_message_tokens_of_turn_is_precomputed() -> None:
    turn = Turn(0, "user", "x" * 400, {"role": "user", "content": "x"}, tokens=7)
    assert message_tokens(turn, count) == 7


# --- group_turns ---------------------------------------------------------------


def test_parallel_tool_calls_form_one_group() -> None:
    turns = turns_from(
        [user(), call("a", "b", "c"), result("b"), result("a"), result("c"), assistant()]
    )
    groups = group_turns(turns)
    assert [len(g) for g in groups] == [1, 4, 1]
    assert all(is_forwardable(g) for g in groups)


def test_orphan_and_incomplete_groups_are_not_forwardable() -> None:
    turns = turns_from([result("x"), call("a", "b"), result("a"), result("a"), user()])
    groups = group_turns(turns)
    assert [roles(g) for g in groups] == [["tool"], ["assistant", "tool"], ["tool"], ["user"]]
    assert [is_forwardable(g) for g in groups] == [False, False, False, True]


def test_legacy_function_call_pairs() -> None:
    fcall = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": ""}}
    turns = turns_from([fcall, {"role": "function", "name": "f", "content": "1"}, user()])
    groups = group_turns(turns)
    assert [len(g) for g in groups] == [2, 1]
    assert is_forwardable(groups[0])


# --- split_mandatory -------------------------------------------------------------


def test_split_last_user_message_and_after() -> None:
    sys_msg = {"role": "system", "content": "s"}
    dev = {"role": "developer", "content": "d"}
    turns = turns_from([sys_msg, dev, user("1"), assistant(), user("2"), assistant("prefill")])
    system, history, tail = split_mandatory(turns)
    assert roles(system) == ["system", "developer"]
    assert [t.ordinal for t in history] == [2, 3]
    assert [t.ordinal for t in tail] == [4, 5]


def test_split_ending_with_tool_results_keeps_call_and_question() -> None:
    turns = turns_from(
        [user("1"), assistant(), user("2"), call("a", "b"), result("a"), result("b")]
    )
    _, history, tail = split_mandatory(turns)
    assert [t.ordinal for t in history] == [0, 1]
    assert [t.ordinal for t in tail] == [2, 3, 4, 5]


def test_split_agent_loop_tail_is_last_round_only() -> None:
    turns = turns_from(
        [user("go"), call("a"), result("a"), call("b", "c"), result("c"), result("b")]
    )
    _, history, tail = split_mandatory(turns)
    assert [t.ordinal for t in history] == [0, 1, 2]
    assert [t.ordinal for t in tail] == [3, 4, 5]


def test_split_without_user_or_with_orphan_tool_at_end() -> None:
    _, history, tail = split_mandatory(turns_from([assistant("a"), call("x"), result("x")]))
    assert [t.ordinal for t in tail] == [1, 2]
    _, history, tail = split_mandatory(turns_from([user("q"), assistant(), result("zz")]))
    assert [t.ordinal for t in tail] == [0, 1, 2]
    assert history == []
    assert split_mandatory([]) == ([], [], [])
    system, history, tail = split_mandatory(turns_from([{"role": "system", "content": "s"}]))
    assert (len(system), history, tail) == (1, [], [])


# --- resolve_budget ----------------------------------------------------------------


def test_header_wins_over_config_and_window() -> None:
    assert resolve_budget(" 1500 ", 3000, 128_000, 1000) == 1500
    assert resolve_budget(None, 3000, 128_000, 1000) == 3000


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5", "", " ", "1e3", "10 tokens"])
def test_bad_header_raises_clear_error(value: str) -> None:
    with pytest.raises(ValueError, match="X-Memory-Budget must be a positive integer"):
        resolve_budget(value, None, None, None)


def test_derived_budget_from_window_and_output() -> None:
    assert resolve_budget(None, None, 10_000, 1000) == 8000
    assert resolve_budget(None, None, None, None) == int(8192 * 0.9)
    assert resolve_budget(None, None, 1000, 5000) == MIN_DERIVED_BUDGET
    with pytest.raises(ValueError, match="budget_tokens"):
        resolve_budget(None, 0, None, None)


# --- select_recent_groups -------------------------------------------------------------


def _chat(rounds: int, size: int = 40) -> list[Turn]:
    msgs: list[dict[str, Any]] = []
    for i in range(rounds):
        msgs += [user(f"{i}" + "u" * size), assistant(f"{i}" + "a" * size)]
    return turns_from(msgs)


def test_recent_window_is_newest_suffix_within_room() -> None:
    groups = group_turns(_chat(10))
    size = groups[0][0].tokens
    window = select_recent_groups(groups, room=size * 4 + 1)
    assert window.kept == [16, 17, 18, 19]
    assert window.tokens <= size * 4 + 1
    assert window.dropped[0] == "outside recent window"


def test_recent_window_avoids_opening_on_assistant_answer() -> None:
    groups = group_turns(_chat(10))
    size = groups[0][0].tokens
    window = select_recent_groups(groups, room=size * 3)
    assert window.kept == [18, 19]
    assert "assistant answer" in window.dropped[17]


def test_cache_step_keeps_window_start_stable_while_growing() -> None:
    starts = []
    for rounds in range(10, 20):
        groups = group_turns(_chat(rounds))
        window = select_recent_groups(groups, room=400, step=120)
        assert window.tokens <= 400
        starts.append(window.kept[0])
    # The start moves in jumps, not on every request.
    assert len(set(starts)) < len(starts) // 2 + 1


def test_pin_keeps_the_user_request_of_a_tool_loop() -> None:
    msgs = [user("please do it"), *([call("a"), result("a", "r" * 200)] * 1)]
    msgs += [call("b"), result("b", "r" * 200)]
    groups = group_turns(turns_from(msgs))
    sizes = [sum(t.tokens for t in g) for g in groups]
    window = select_recent_groups(groups, room=sizes[0] + sizes[2], pin=0)
    assert window.kept == [0, 2]
    assert window.tokens == sizes[0] + sizes[2]
