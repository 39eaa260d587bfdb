"""What a withdrawn rule leaves behind, and what a withdrawal itself says. Sentences of
our own, zh and en: a list the withdrawn clause began, a step sequenced after it and the
bare frame of the rule are not kept as rules of their own; a standing withdrawal and a
withdrawal that names the alternative are remembered in the old rule's place."""

from __future__ import annotations

from tests.unit.extraction_support import active_values

SYSTEM_EN = "You are an assistant for a small bakery's back office."
SYSTEM_ZH = "你是一个帮小书店老板处理日常事务的助手。"


def test_items_of_a_withdrawn_list_are_no_rule() -> None:
    active = active_values(
        [
            "We're sorting out the bakery's supplier invoices this month.",
            "Whenever you summarise invoices, always lay them out as a grid with supplier,"
            " date, amount and due date.",
            "You can stop doing the grid now, short paragraphs are easier to read on my tablet.",
        ],
        SYSTEM_EN,
    )
    assert not any(v.startswith(("date", "supplier")) for v in active)
    assert any("short paragraphs" in v for v in active)
    assert not any("as a grid" in v and "stop" not in v for v in active)


def test_zh_step_sequenced_after_a_withdrawn_one_goes_with_it() -> None:
    active = active_values(
        [
            "我开了一家二手书店，想请你帮我打理日常。",
            "你以后回复我，都先写一句总结，再展开细节，我眼神不太好。",
            "以后不用先写总结了，直接讲细节就行。",
        ],
        SYSTEM_ZH,
    )
    assert any("直接讲细节" in v for v in active)
    assert not any(v.startswith("你以后回复我") for v in active)
    assert not any("再展开细节" in v and "不用" not in v for v in active)


def test_siblings_that_stand_alone_are_still_kept() -> None:
    active = active_values(
        [
            "We're sorting out the bakery's supplier invoices this month.",
            "For every invoice note: put the total first, flag late fees in bold, and sign"
            " it as 'Back Office'.",
            "You can drop the bold late fees now, the accountant handles those.",
        ],
        SYSTEM_EN,
    )
    assert any("total first" in v for v in active)
    assert any("Back Office" in v for v in active)


def test_zh_standing_withdrawal_is_remembered() -> None:
    active = active_values(
        [
            "我开了一家二手书店，想请你帮我打理日常。",
            "你每次给我写进货单，都在后面附上预估利润。",
            "进货单的预估利润以后不用附了，我自己会算。",
        ],
        SYSTEM_ZH,
    )
    assert any("以后不用附了" in v for v in active)
    assert not any("都在后面附上预估利润" in v for v in active)


def test_en_standing_withdrawal_is_remembered() -> None:
    active = active_values(
        [
            "We're sorting out the bakery's supplier invoices this month.",
            "Always end your replies with a list of open questions.",
            "From now on, no need to add the open questions list, it's just noise.",
        ],
        SYSTEM_EN,
    )
    assert any("no need to add the open questions" in v for v in active)
    assert not any(v.startswith("Always end your replies") for v in active)
