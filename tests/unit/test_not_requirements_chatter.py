"""Sentences that carry a number or a rule word and still set nothing for the task:
how the speaker themself is doing ("I got five hours of sleep"), a private errand
for family or friends ("I have to call my brother back"), the announcement of
material about to be handed over ("我先把合同贴给你"). Each look-alike below sets a
limit or a rule and must stay a requirement. Our own sentences."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements


def kept(text: str, opening: bool = False) -> list[str]:
    return [st.text for st in read_statements(text, set(), opening)]


@pytest.mark.parametrize(
    "text",
    [
        "Honestly I'm running on about five hours of sleep this week.",
        "I only slept three hours last night.",
        "I've been itching to repaint that fence for two years.",
        "昨晚只睡了四个小时。",
        "这个想法我都惦记两年了。",
    ],
)
def test_the_speakers_own_condition_is_no_requirement(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("I only have four hours a day for this, plan around it.", "four hours a day"),
        ("I slept three hours, so keep today's answers short.", "keep today's answers short"),
        ("I'm running on five hours of sleep, so no calls before 10am.", "no calls before 10am"),
        ("我每天最多只能抽出两个小时，计划按这个排。", "两个小时"),
    ],
)
def test_a_limit_on_the_speakers_time_is_kept(text: str, value: str) -> None:
    assert any(value in t for t in kept(text))


@pytest.mark.parametrize(
    "text",
    [
        "I need to reply to my cousin about the reunion, she keeps asking.",
        "I have to call my dad back about his car.",
        "我得给我姐回个电话，她催好几次了。",
        "我还得去接孩子。",
    ],
)
def test_a_private_errand_is_no_requirement(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("I need to pick up my son at 4, so book nothing after 3:30.", "3:30"),
        ("We have to seat my grandparents near the exit.", "near the exit"),
        ("My brother is allergic to nuts, so no nuts on the menu.", "no nuts"),
    ],
)
def test_a_requirement_about_family_is_kept(text: str, value: str) -> None:
    assert any(value in t for t in kept(text))


@pytest.mark.parametrize(
    "message",
    [
        "你好，我在做一份租房合同的审核，帮我看看有没有坑。我先把合同条款贴给你。",
        "I run a small bakery in Leeds and I am reworking our wholesale prices for cafes. Let me "
        "paste our current price list.",
    ],
)
def test_announcing_material_to_paste_is_no_requirement(message: str) -> None:
    texts = kept(message, opening=True)
    assert not any("贴给你" in t or "paste" in t for t in texts)


def test_material_announced_with_a_limit_keeps_the_limit() -> None:
    assert any("两万" in t for t in kept("我先把预算表发你，预算不能超过两万。"))
    assert any("$900" in t for t in kept("I'll send you the quote now; we can't go over $900."))
