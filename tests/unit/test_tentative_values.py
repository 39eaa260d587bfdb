"""A provisional value ("暂定", "先定", "tentatively", "pencil in", "for now") replaced by a
later value of the same kind for the same event, even without a change cue and inside a
request; a firm value, another event, or a question leaves it alone (zh + en)."""

from __future__ import annotations

from itertools import count

from policies.extract.tentative import tentative_replacements
from policies.types import MemoryItem, Supersede
from tests.unit.extraction_support import active_values as _active


def _item(value: str) -> MemoryItem:
    return MemoryItem(id="m1", type="fact", value=value, source="user", source_ordinal=2, slot="")


def _replaced(old: str, later: str) -> list[str]:
    ids = count(1)
    ops = tentative_replacements(later, [_item(old)], 6, lambda: f"n{next(ids)}").ops
    return [op.item.value for op in ops if isinstance(op, Supersede) and op.old_id == "m1"]


def test_zh_provisional_date_replaced_by_a_later_request() -> None:
    active = _active(
        [
            "我们中秋想带爸妈去厦门玩几天。",
            "返程暂定9月18日吧，到时候再看。",
            "住的地方要离海边近一点。",
            "9月19日返程的机票你帮我比比价，晚上的就行。",
        ]
    )
    assert any("9月19日返程" in v for v in active)
    assert not any("9月18日" in v for v in active)


def test_en_provisional_date_replaced_by_a_booking() -> None:
    active = _active(
        [
            "I'm organising a cheese and cider evening for the allotment society.",
            "Let's pencil in May 9 for the cider evening for now.",
            "We'll need folding tables too.",
            "Please book the cider evening for May 16.",
        ]
    )
    assert any("May 16" in v for v in active)
    assert not any("May 9" in v for v in active)


def test_en_and_zh_provisional_time_and_amount() -> None:
    assert _replaced("The kickoff call is tentatively at 3pm.", "Set up the kickoff call at 4pm.")
    assert _replaced("场地费先定3000元，回头再谈。", "场地费2800元的合同你帮我起草一下。")


def test_look_alikes_are_not_replaced() -> None:
    # A later value for another event.
    assert not _replaced("返程暂定9月18日吧。", "9月19日的酒店你帮我订一下。")
    assert not _replaced(
        "Let's pencil in May 9 for the cider evening.", "Book the plumber for May 16."
    )
    # Another clause of the item shares the word, the value's own clause does not.
    assert not _replaced("年会的场地在苏州，日期先定12月20日吧。", "12月27日苏州的酒店你帮我看看。")
    # A firm value is not replaced by a request without a change cue.
    assert not _replaced("返程定在9月18日。", "9月19日返程的机票你帮我看看。")
    assert not _replaced("The cider evening is on May 9.", "Book the cider evening for May 16.")
    # A question only asks.
    assert not _replaced("返程暂定9月18日吧。", "9月19日返程会不会更便宜？")
    assert not _replaced(
        "Let's pencil in May 9 for the cider evening.", "Would the cider evening work on May 16?"
    )
    # The same value restated is no replacement.
    assert not _replaced("返程暂定9月18日吧。", "9月18日返程的机票你帮我看看。")
