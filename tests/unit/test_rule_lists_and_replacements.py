"""Several standing rules said in one message as a list after a header ("几个格式要求：
A；B；C"), and a revoked rule followed by what replaces it in the next sentence
("字数不用限制了。不过每段开头加个小标题。"), with sentences of our own (zh and en)
and look-alikes that must not become rules."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements
from tests.unit.extraction_support import active_values

SYSTEM_ZH = "你是帮用户写报告的助手。"
SYSTEM_EN = "You are an assistant helping someone write reports."


def rules(message: str) -> list[str]:
    return [
        st.text for st in read_statements(message, set(), False)
        if st.type in ("directive", "constraint", "preference") and not st.revoke
    ]  # fmt: skip


# -- a list of rules after a header -----------------------------------------------


@pytest.mark.parametrize(
    ("message", "items"),
    [
        (
            "三点写作要求：段落不要太长；先给结论；引用数据的地方注明出处。",
            ["段落不要太长", "先给结论", "注明出处"],
        ),
        (
            "排版规则：正文用宋体；表格加边框。",
            ["正文用宋体", "表格加边框"],
        ),
        (
            "Some rules for the minutes: numbered items only; put decisions first; "
            "name the owner of every action.",
            ["numbered items only", "put decisions first", "name the owner"],
        ),
        (
            "Guidelines for the slides: dark background; one chart per slide.",
            ["dark background", "one chart per slide"],
        ),
    ],
)
def test_each_rule_of_a_list_after_its_header_is_kept(message: str, items: list[str]) -> None:
    kept = rules(message)
    for item in items:
        assert sum(item in k for k in kept) == 1, (item, kept)


def test_listed_rules_stay_separate_and_survive_a_restatement_zh() -> None:
    active = active_values(
        [
            "我在帮公司准备一份年度采购报告。",
            "几个写作要求：回答控制在两百字以内；每次先给结论；提到合同的地方都写上合同编号。",
            "先把供应商情况梳理一下吧。",
            "合同编号和先给结论照旧。",
        ],
        SYSTEM_ZH,
    )
    assert any("两百字以内" in v for v in active)
    assert any("先给结论" in v and "合同编号" not in v for v in active)
    assert any("写上合同编号" in v for v in active)


def test_listed_rules_stay_separate_and_survive_a_restatement_en() -> None:
    active = active_values(
        [
            "I'm writing the quarterly report for our team.",
            "A few rules for the drafts: keep it under 300 words; put the recommendation "
            "first; give the ticket number whenever you mention a bug.",
            "Let's start with the budget section.",
            "Ticket numbers and recommendation first, same as before.",
        ],
        SYSTEM_EN,
    )
    assert any("under 300 words" in v for v in active)
    assert any("recommendation first" in v for v in active)
    assert any("ticket number whenever" in v for v in active)


@pytest.mark.parametrize(
    "message",
    [
        "我们有三个仓库：北京、上海、广州。",
        "几个问题：预算怎么定？合同签几年？",
        "We have three warehouses: Leeds, York and Hull.",
        "A few questions: how long is the contract? who signs it?",
    ],
)
def test_a_list_of_facts_or_questions_sets_no_rule(message: str) -> None:
    assert rules(message) == []


def test_a_rule_header_reaches_only_its_own_chain() -> None:
    # After the list ends, a plain fact is no rule just because a header came before.
    kept = rules(
        "Rules for the slides: dark background; one chart per slide. Our office is in York."
    )
    assert not any("York" in k for k in kept)


# -- a revoked rule and what replaces it --------------------------------------------


@pytest.mark.parametrize(
    ("lines", "new", "old"),
    [
        (
            ["回答里都加上英文翻译。", "英文翻译不用加了。不过每段最后加一句总结。"],
            "每段最后加一句总结",
            "都加上英文翻译",
        ),
        (
            ["回复请尽量正式一些。", "不用那么正式了。口语一点就行，句子短一些。"],
            "口语一点就行",
            "尽量正式",
        ),
    ],
)
def test_zh_the_rule_after_a_revocation_replaces_it(lines: list[str], new: str, old: str) -> None:
    active = active_values(["我在帮公司准备一份年度采购报告。", *lines], SYSTEM_ZH)
    assert any(new in v for v in active)
    assert not any(old in v for v in active)


@pytest.mark.parametrize(
    ("lines", "new", "old"),
    [
        (
            [
                "Please write in a formal tone.",
                "You can drop the formal tone. Casual is fine, short sentences.",
            ],
            "Casual is fine",
            "formal tone.",
        ),
        (
            [
                "Add a weekly summary to every update.",
                "No need for the weekly summary anymore. But add a line on risks to each update.",
            ],
            "add a line on risks",
            "Add a weekly summary",
        ),
    ],
)  # fmt: skip
def test_the_rule_after_a_revocation_replaces_it(lines: list[str], new: str, old: str) -> None:
    active = active_values(["I'm writing the quarterly report for our team.", *lines], SYSTEM_EN)
    assert any(new in v for v in active)
    assert not any(v.startswith(old) for v in active)


@pytest.mark.parametrize(
    "message",
    [
        "You can drop me off at 5. Casual dinner is fine.",
        "字数不用限制了。不过我今天有点累。",
        "You can drop the formal tone. That's fine.",
        "You can drop the formal tone. But I'm tired today.",
    ],
)
def test_chatter_after_a_revocation_is_no_new_rule(message: str) -> None:
    kept = rules(message)
    assert not any(("累" in k or "tired" in k or "dinner" in k or "fine" in k) for k in kept)


@pytest.mark.parametrize(
    ("message", "whole"),
    [
        ("The venue holds 80. House rule: no food in the gallery.", "House rule: no food"),
        ("场地能坐八十人。先说个规矩：报价都写含税价。", "先说个规矩：报价都写含税价"),
    ],
)
def test_a_single_rule_after_its_header_reads_whole(message: str, whole: str) -> None:
    assert any(k.startswith(whole) for k in rules(message))
