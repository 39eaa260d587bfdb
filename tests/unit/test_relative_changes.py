"""Relative changes to a quantity stated earlier ("add ten more", "再加两个", "push it back
a week"): the item holding the quantity is restated at its new value, with our own
sentences (zh + en), and look-alikes that must leave memory alone."""

from __future__ import annotations

import pytest

from policies.extract.relative import read_changes, relative_changes
from policies.types import MemoryItem, Supersede
from tests.unit.extraction_support import active_values, fold_messages


def _after(lines: list[str]) -> str:
    """Every active item after the user says `lines` (one line per message), joined."""
    return "\n".join(active_values(lines))


# -- each direction, each kind of quantity ------------------------------------------


@pytest.mark.parametrize(
    ("lines", "current", "old"),
    [
        # a count, the noun named by the topic of the sentence
        (
            ["For the street fair we need 6 volunteers at the grill.",
             "Grill crew: let's have three more than I said."],
            "9 volunteers", "6 volunteers",
        ),
        # a count, the noun named by the change itself
        (
            ["We rented 40 folding chairs for the hall.", "Add ten chairs to the order."],
            "50 folding chairs", "40 folding chairs",
        ),
        (
            ["We need 5 drivers for the airport shuttle.", "One fewer driver, please."],
            "4 drivers", "5 drivers",
        ),
        # money, added and cut by a percentage
        (
            ["The catering budget is $2,000 for the whole weekend.",
             "Add another $400 to the catering budget."],
            "$2,400", "$2,000",
        ),
        (
            ["The venue quote came in at $5,000 for the day.",
             "Ask them to cut the venue quote by 10%."],
            "$4,500", "$5,000",
        ),
        # a clock time and a date, shifted
        (
            ["The pottery workshop runs from 9am to 1pm on Saturdays.",
             "Move the pottery workshop an hour earlier."],
            "8am to 12pm", "9am to 1pm",
        ),
        (
            ["The app launch is planned for March 3.", "Push the launch back two weeks."],
            "March 17", "March 3",
        ),
    ],
)  # fmt: skip
def test_english_relative_changes(lines: list[str], current: str, old: str) -> None:
    memory = _after(lines)
    assert current in memory
    assert old not in memory


@pytest.mark.parametrize(
    ("lines", "current", "old"),
    [
        # 数量：上一句说了是哪一项
        (
            ["前台至少安排3名接待员，要会说英语。", "接待那块人手还是紧。再加两个。"],
            "5名接待员", "3名接待员",
        ),
        # 数量：量词说了是哪一项
        (["这次活动订了60箱矿泉水，周五送到。", "少订15箱。"], "45箱", "60箱"),
        # 金额：加，和不带单位的减
        (["门票定价80元，学生半价。", "门票再涨10块吧。"], "90元", "80元"),
        (["装修预算定在5万元，不能超。", "预算砍掉一万。"], "4万元", "5万元"),
        # 百分点
        (["定金比例是30%，签约时付。", "定金比例再加5个百分点。"], "35%", "30%"),
        # 日期、时间
        (["开学典礼定在9月3号，在大礼堂。", "开学典礼往后推一周。"], "9月10号", "9月3号"),
        (["年会晚上7点开始，地点在酒店二楼。", "年会提前半小时吧。"], "晚上6点半", "晚上7点"),
    ],
)  # fmt: skip
def test_chinese_relative_changes(lines: list[str], current: str, old: str) -> None:
    memory = _after(lines)
    assert current in memory
    assert old not in memory


def test_the_new_line_shows_how_it_was_derived() -> None:
    memory = _after(["We rented 40 folding chairs for the hall.", "Add ten chairs to the order."])
    line = next(v for v in memory.splitlines() if "50 folding chairs" in v)
    assert "40 + 10" in line
    assert "Add ten chairs" in line


def test_the_old_value_is_superseded_by_the_new_one() -> None:
    chat = [("user", "门票定价80元，学生半价。"), ("assistant", "好的。"),
            ("user", "门票再涨10块吧。")]  # fmt: skip
    items, _ = fold_messages(chat, "你是活动策划助手。")
    old = next(it for it in items if "80元" in it.value)
    new = next(it for it in items if "90元" in it.value)
    assert old.status == "superseded"
    assert old.superseded_by == new.id
    # what else the old sentence said still holds
    assert any("学生半价" in it.value and it.status == "active" for it in items)


def test_a_relative_change_after_an_absolute_revision() -> None:
    memory = _after(
        ["Cap the guest list at 30 guests.", "Actually, make it 35 guests.",
         "Let's allow five more guests."]
    )  # fmt: skip
    assert "40 guests" in memory
    assert "35 guests" not in memory.replace("35 + 5", "")
    assert "30 guests" not in memory


def test_two_changes_in_a_row() -> None:
    memory = _after(
        ["We need 5 drivers for the airport shuttle.", "Add two more drivers.",
         "One fewer driver."]
    )  # fmt: skip
    assert "6 drivers" in memory
    assert "7 drivers" not in memory
    assert "5 drivers" not in memory


# -- look-alikes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "I have two more questions about parking.",
        "One more thing: the caterer needs the final menu.",
        "Add a note about wheelchair access.",
        "Should we add two more chairs?",
        "Don't add two more chairs.",
        "If we add ten chairs, will it fit?",
        "That's two more than the other venue offered.",
        "Two weeks later we moved into the new office.",
        "Make it 45 chairs.",
        "再说一下，我们周五到。",
        "再加点盐。",
        "提前两天告诉我。",
        "要不要再加两个？",
        "比去年多了十几个人。",
    ],
)
def test_look_alikes_read_no_relative_change(sentence: str) -> None:
    assert read_changes(sentence) == []


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        # a change of something never quantified
        (["We rented 40 folding chairs for the hall.", "Add two more songs to the playlist."],
         "40 folding chairs"),
        # a quantity of another noun
        (["We rented 40 folding chairs for the hall.", "Add ten tables."], "40 folding chairs"),
        # money of another subject
        (["The catering budget is $2,000 for the whole weekend.",
          "My brother owes me another $50."], "$2,000"),
        # 别的名词
        (["这次活动订了60箱矿泉水，周五送到。", "再加两个菜。"], "60箱矿泉水"),
        # 没说是哪一项，上一句也没说
        (["前台至少安排3名接待员，要会说英语。", "天气预报说周末下雨。再加两个。"], "3名接待员"),
    ],
)  # fmt: skip
def test_look_alikes_leave_the_quantity_alone(lines: list[str], kept: str) -> None:
    chat: list[tuple[str, str]] = []
    for text in lines:
        chat += [("user", text), ("assistant", "OK.")]
    items, _ = fold_messages(chat, "You are a helpful assistant.")
    holder = next(it for it in items if kept in it.value)
    assert holder.status == "active"
    assert not any(it.status == "active" and "(" in it.value and " + " in it.value for it in items)


def test_a_quantity_a_supersession_did_not_restate_can_still_change() -> None:
    """The cap on cats was replaced by a sentence about something else (a wrong link
    or a reworded rule): it is still the cap the user changes."""
    cap = MemoryItem("a", "constraint", "pets", "No more than 4 cats in the flat.", "user", 1,
                     status="superseded", superseded_by="b")  # fmt: skip
    other = MemoryItem("b", "constraint", "pets", "The landlord wants pets under 20 kg.", "user", 3)
    ids = iter(["n1", "n2"])
    out = relative_changes("On the cats: let's allow two more.", [other], 5, lambda: next(ids),
                           history=[cap, other])  # fmt: skip
    assert [op.old_id for op in out.ops if isinstance(op, Supersede)] == ["a"]
    assert "6 cats" in out.ops[0].item.value  # type: ignore[union-attr]


def test_a_restated_quantity_is_not_revived() -> None:
    old = MemoryItem("a", "constraint", "pets", "No more than 4 cats in the flat.", "user", 1,
                     status="superseded", superseded_by="b")  # fmt: skip
    new = MemoryItem("b", "constraint", "pets", "No more than 3 cats in the flat.", "user", 3)
    ids = iter(["n1", "n2"])
    out = relative_changes("On the cats: let's allow two more.", [new], 5, lambda: next(ids),
                           history=[old, new])  # fmt: skip
    assert [op.old_id for op in out.ops if isinstance(op, Supersede)] == ["b"]
    assert "5 cats" in out.ops[0].item.value  # type: ignore[union-attr]
