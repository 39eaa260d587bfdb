"""Asides built from rule words that state no rule: exasperation ("don't even",
"don't get me started"), helplessness ("I don't even know where to start"), a topic
announced before the question ("Budget question."), and "得要命 / 得要死" as a degree
("terribly"), not a must. Look-alikes that do state a rule keep it. Our own sentences."""

from __future__ import annotations

import pytest

from policies.language.cues import read_cues
from tests.unit.extraction_support import active_values, fold_messages

SYSTEM_EN = "You help a volunteer run a neighbourhood bike repair day."
SYSTEM_ZH = "你是帮社区志愿者筹办修车活动的助手。"


def rules(line: str, system: str) -> list[str]:
    """Values of the rules (directives, constraints) left active after `line`."""
    items, _ = fold_messages([("user", line), ("assistant", "OK.")], system)
    return [
        it.value for it in items
        if it.status == "active" and it.type in ("directive", "constraint")
    ]  # fmt: skip


@pytest.mark.parametrize(
    "line",
    [
        "Parking at the old depot, don't even.",
        "Ugh, the insurance forms. Don't get me started.",
        "How do people usually price spare parts? I don't even know where to begin.",
        "Honestly I don't know what to say about the turnout last year.",
        "Deadline question.",
        "Quick budget question!",
    ],
)
def test_en_asides_leave_no_rule(line: str) -> None:
    assert rules(line, SYSTEM_EN) == []


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Don't even mention the sponsor in the poster.", "sponsor"),
        ("Don't get the cheap tubes, they burst.", "cheap tubes"),
        ("I don't know the venue well, so include a map link in every email.", "map link"),
        ("The budget question is settled: no more than $300 on parts.", "$300"),
    ],
)
def test_en_look_alikes_keep_their_rule(line: str, kept: str) -> None:
    assert any(kept in v for v in active_values([line], SYSTEM_EN))


def test_zh_degree_is_no_must() -> None:
    assert read_cues("这两天忙得要命，晚上都没空。").constraint == 0
    assert read_cues("那天热得要死，大家都没精神。").constraint == 0
    assert rules("我老婆最近加班，累得要命，家里都是我在管。", SYSTEM_ZH) == []


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("报名表得要家长签字才算数。", "家长签字"),
        ("所有工具都得要登记编号。", "登记编号"),
        ("打气筒要两个，一个放门口。", "打气筒"),
    ],
)
def test_zh_look_alikes_keep_their_rule(line: str, kept: str) -> None:
    assert read_cues(line).constraint > 0 or read_cues(line).requirement > 0
    assert any(kept in v for v in active_values([line], SYSTEM_ZH))
