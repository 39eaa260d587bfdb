"""The recorded prefix share: tokens of a prompt that repeat the previous prompt's start."""

from __future__ import annotations

from typing import Any

from proxy.records import prefix_share, serialised
from proxy.tokens import TokenCounter

COUNT = TokenCounter()


def msg(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


def tokens(messages: list[dict[str, Any]]) -> int:
    return sum(COUNT(serialised(m)) for m in messages)


SYSTEM = msg("system", "You help a family plan meals for the week.")
FIRST = msg("user", "My son cannot eat peanuts, and we cook for four people on weekdays.")
ANSWER = msg("assistant", "Noted: no peanuts, four servings on weekdays. What about weekends?")
SECOND = msg("user", "Weekends we are six, grandparents join us on Saturday and Sunday.")


def test_a_prompt_that_extends_the_previous_one_shares_all_of_it() -> None:
    before = [SYSTEM, FIRST]
    now = [SYSTEM, FIRST, ANSWER, SECOND]
    assert prefix_share(before, now, COUNT) == tokens(before) / tokens(now)


def test_nothing_is_shared_without_a_previous_prompt_or_with_a_new_start() -> None:
    assert prefix_share(None, [SYSTEM, FIRST], COUNT) == 0.0
    other = msg("system", "Different instructions entirely, nothing in common here.")
    assert prefix_share([other, FIRST], [SYSTEM, FIRST], COUNT) < 0.1


def test_a_message_that_only_grew_at_its_end_counts_its_common_start() -> None:
    memory = msg("system", "Memory:\n- no peanuts\n- four servings on weekdays")
    grown = msg("system", memory["content"] + "\n- six on weekends")
    share = prefix_share([SYSTEM, memory, FIRST], [SYSTEM, grown, FIRST], COUNT)
    whole_messages_only = COUNT(serialised(SYSTEM)) / tokens([SYSTEM, grown, FIRST])
    assert share > whole_messages_only
    assert share < tokens([SYSTEM, grown]) / tokens([SYSTEM, grown, FIRST])


def test_a_change_early_in_a_message_breaks_the_prefix_there() -> None:
    late_edit = msg("user", FIRST["content"].replace("weekdays", "weekends"))
    early_edit = msg("user", FIRST["content"].replace("My son", "Our son"))
    late = prefix_share([SYSTEM, FIRST, ANSWER], [SYSTEM, late_edit, ANSWER], COUNT)
    early = prefix_share([SYSTEM, FIRST, ANSWER], [SYSTEM, early_edit, ANSWER], COUNT)
    assert late > early


def test_the_role_and_tool_calls_are_part_of_the_prefix() -> None:
    as_user = msg("user", "Plan Monday.")
    as_assistant = msg("assistant", "Plan Monday.")
    same_text = prefix_share([SYSTEM, as_user], [SYSTEM, as_assistant], COUNT)
    assert same_text < 1.0
    call = {"id": "c1", "type": "function", "function": {"name": "menu", "arguments": "{}"}}
    other = {**call, "function": {"name": "shop", "arguments": "{}"}}
    with_call = {"role": "assistant", "content": None, "tool_calls": [call]}
    with_other = {"role": "assistant", "content": None, "tool_calls": [other]}
    assert prefix_share([SYSTEM, with_call], [SYSTEM, with_other], COUNT) < 1.0
    assert prefix_share([SYSTEM, with_call], [SYSTEM, with_call], COUNT) == 1.0
