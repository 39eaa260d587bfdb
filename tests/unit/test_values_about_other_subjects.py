"""Values of the same kind said about different subjects are not versions of one setting.

"Yoga class is Mondays at 6pm" and "Pottery class is Thursdays at 7pm" are two
classes: the same head noun with another modifier, neither sentence naming the
other's. Likewise a count per unit ("每桌10个人") and the size of one group that fits
it ("正好9个人"), an interval ("every five minutes") and a length ("took twenty
minutes"), and a story of how things were ("Back then…"). None of them silently
replaces the other; the same subject with a new value still does.
"""

from __future__ import annotations

from policies.language.value_roles import is_share
from policies.language.values import extract_values
from policies.memory.slots import different_subjects
from tests.unit.extraction_support import active_values


def test_other_modifier_of_the_same_noun_names_another_subject() -> None:
    assert different_subjects("Pottery class is Thursdays at 7pm.", "Yoga class is Mondays at 6pm.")
    assert different_subjects("哥哥的篮球课在周六上午。", "妹妹的舞蹈课在周日上午。")
    # The same modifier, or a value as the modifier, is the same subject.
    assert not different_subjects("Yoga class moves to Wednesdays.", "Yoga class is Mondays.")
    assert not different_subjects("we're on the 2 gig plan now", "our plan is the 300 Mbps plan")
    assert not different_subjects("舞蹈课改到周六上午。", "妹妹的舞蹈课在周日上午。")
    # A value between two words modifies nothing: "tested: 5.2% ABV" vs "our lager, 4.8% ABV".
    assert not different_subjects("Tests came back: 5.2% ABV.", "Our pilsner, 4.8% ABV.")


def test_two_classes_on_two_days_both_hold() -> None:
    values = active_values(
        ["Yoga class is on Mondays at 6pm.", "Pottery class is on Thursdays at 7pm."]
    )
    assert "Yoga class is on Mondays at 6pm." in values
    zh = active_values(["妹妹的舞蹈课在周日上午。", "哥哥的篮球课在周六上午。"])
    assert "妹妹的舞蹈课在周日上午。" in zh
    assert "哥哥的篮球课在周六上午。" in zh


def test_same_class_moved_still_replaces() -> None:
    values = active_values(
        ["Yoga class is on Mondays at 6pm.", "Yoga class is moving to Wednesdays at 7pm instead."]
    )
    assert "Yoga class is on Mondays at 6pm." not in values
    assert "Yoga class is moving to Wednesdays at 7pm instead." in values


def test_share_per_unit_is_read() -> None:
    def shares(text: str) -> list[bool]:
        return [is_share(text, v) for v in extract_values(text)]

    assert shares("一共12桌，每桌8个人") == [False, True]
    assert shares("The sprinkler runs every five minutes.") == [True]
    assert shares("We need 6 chairs per table.") == [True]
    assert shares("The repair took twenty minutes.") == [False]
    assert shares("姥姥家加我们正好7个人。") == [False]


def test_group_that_fits_a_table_is_no_seats_per_table() -> None:
    first = "宴会一共12桌，每桌8个人，主桌靠窗。"
    zh = active_values([first, "舅舅一家加我妈正好7个人，一桌坐得下。"])
    assert first in zh


def test_interval_is_no_length_of_time() -> None:
    first = "The plumber came this morning, $90, twenty minutes, leak fixed."
    values = active_values(
        [
            first,
            "Now I'll go make some coffee and try not to check the forecast every five minutes.",
        ]
    )
    assert first in values


def test_past_account_replaces_nothing() -> None:
    values = active_values(
        [
            "The reading group meets on Wednesday evenings.",
            "Back then, the meetings were on Friday evenings, which nobody liked.",
        ]
    )
    assert "The reading group meets on Wednesday evenings." in values
    zh = active_values(["读书会每周三晚上见面。", "以前读书会都是周五晚上，大家都嫌累。"])
    assert "读书会每周三晚上见面。" in zh


def test_past_then_present_still_revises() -> None:
    values = active_values(
        [
            "The reading group meets on Wednesday evenings.",
            "The reading group used to meet on Wednesdays, but now it meets on Thursday evenings.",
        ]
    )
    assert "The reading group meets on Wednesday evenings." not in values
