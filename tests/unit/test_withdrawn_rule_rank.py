"""A withdrawn rule ("no need to list the hours any more", "感叹号随便用吧") is what
holds now in that rule's place (`policies.extract.revision` keeps it as a state): under a
tight budget it ranks like a rule of the same weight, above a plain fact. Our own
sentences."""

from __future__ import annotations

from dataclasses import replace

from policies.memory.scoring import ScoringParams, score_item
from policies.types import MemoryItem
from tests.unit.extraction_support import fold_messages


def item(value: str, type_: str) -> MemoryItem:
    return MemoryItem(
        id=type_, type=type_, slot="format", value=value, source="user",  # type: ignore[arg-type]
        source_ordinal=10, importance=0.85,
    )  # fmt: skip


def score(it: MemoryItem) -> float:
    return score_item(it, current_ordinal=30, query_terms=(), params=ScoringParams())


def test_a_withdrawal_weighs_like_the_rule() -> None:
    rule = item("Always end each reply with a short recap.", "directive")
    gone = item("You can stop adding the recap.", "state")
    fact = item("The workshop smells of chain oil.", "fact")
    assert score(gone) == score(rule)
    assert score(gone) > score(fact)


def test_zh_withdrawal_is_kept_as_what_holds_now() -> None:
    chat = [
        ("user", "以后每份通知都不要写具体金额。"),
        ("assistant", "好的。"),
        ("user", "金额随便写吧，大家都问。"),
        ("assistant", "好的。"),
    ]
    items, _ = fold_messages(chat, "你是帮社区写通知的助手。")
    states = [it for it in items if it.status == "active" and it.type == "state"]
    assert states
    assert "随便写" in states[0].value
    remark = replace(states[0], type="fact", value="活动室旁边有个小花园。")
    assert score(states[0]) > score(remark)
