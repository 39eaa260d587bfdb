"""Revisions the plain value reader missed (zh + en, our own sentences): a date shift
on a date written with its weekday ("Monday, September 8"), more room added to a
capped count ("add 20 more seats" after "max 60 guests"), a rule on someone else
with "shouldn't" / "不应该", and a new split of a shared cost ("let's do 70/30"
after "split 50/50"). Each with look-alikes that must leave memory alone."""

from __future__ import annotations

import pytest

from policies.language.cues import read_cues
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _after(lines: list[str]) -> str:
    return "\n".join(active_values(lines))


# -- a date written with its weekday is still shifted ---------------------------------


def test_weekday_written_date_is_pushed_a_week() -> None:
    memory = _after([
        "Move-in day is Saturday, June 7.",
        "The painters will not be done by move-in day. So push it a week.",
    ])  # fmt: skip
    assert "June 14" in memory
    assert "June 7" not in memory
    assert "Move-in day" in memory  # the words saying what the date is stay with it


def test_shift_by_days_drops_the_weekday_that_no_longer_holds() -> None:
    memory = _after(["Launch party Friday, May 9.", "Push the launch party three days."])
    assert "May 12" in memory
    assert "Friday, May 12" not in memory


def test_weekday_date_is_not_shifted_by_a_story_about_last_year() -> None:
    memory = _after(["Move-in day is Saturday, June 7.", "Last year we moved on a Sunday."])
    assert "June 7" in memory


# -- room added to a capped count ----------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "current", "old"),
    [
        (["Max 60 guests at the reception.", "The caterer found room, add 20 more seats."],
         "80 guests", "60 guests"),
        (["We'll limit the workshop to 12 kids, two per table.",
          "Bigger classroom, so ten more spots."],
         "22 kids", "12 kids"),
        (["讲座最多招40人。", "换了大教室，再加20个名额。"], "60人", "40人"),
    ],
)  # fmt: skip
def test_more_room_raises_the_cap(lines: list[str], current: str, old: str) -> None:
    memory = _after(lines)
    assert current in memory
    assert old not in memory.replace(current, "")


def test_more_room_keeps_the_rest_of_the_capped_sentence() -> None:
    memory = _after(["We'll cap it at 90 runners, relay teams of up to three.",
                     "The park allows more, so add ten more spots."])  # fmt: skip
    assert "100 runners" in memory
    assert "up to three" in memory


def test_more_seats_do_not_change_an_uncapped_count() -> None:
    # 150 is how many signed up, not a limit: "more spots" says nothing about it.
    memory = _after(["We have 150 volunteers signed up so far.", "Add thirty more seats."])
    assert "150 volunteers" in memory
    assert "180" not in memory


# -- "shouldn't" as a rule -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The dog walker shouldn't let him off the leash near the road.",
        "Guests should not bring glass bottles to the beach.",
        "司机不应该在高速上开超过一百。",
        "孩子们不该在午睡时间看平板。",
    ],
)
def test_shouldnt_binds_as_a_constraint(text: str) -> None:
    assert read_cues(text).constraint >= 3


@pytest.mark.parametrize(
    "text",
    [
        "I shouldn't have eaten that second slice.",
        "It shouldn't take long to set up.",
        "That shouldn't be a problem.",
        "You shouldn't worry about the weather.",
        "我不该吃那么多的。",
        "这不应该是问题吧。",
    ],
)
def test_regret_and_forecast_are_not_rules(text: str) -> None:
    assert read_cues(text).constraint < 3


def test_rule_on_the_sitter_is_remembered() -> None:
    memory = _after(["Pay her gas at the usual rate. But she shouldn't take the kids "
                     "on the highway, back roads only."])  # fmt: skip
    assert "highway" in memory


# -- splits of a shared cost -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "share"),
    [("We split it 70/30.", 70.0), ("Gas is fifty-fifty.", 50.0), ("房租按四六分。", 40.0)],
)
def test_two_party_shares_are_values(text: str, share: float) -> None:
    shares = [v for v in extract_values(text) if v.kind == "percent"]
    assert [v.number for v in shares] == [share]


@pytest.mark.parametrize("text", ["Due 3/7 at noon.", "I'd rate it 9/10.", "24/7 support.",
                                  "三点三七分到。"])  # fmt: skip
def test_dates_scores_and_clock_times_are_not_shares(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind == "percent"]


def test_new_split_replaces_the_only_earlier_one_in_other_words() -> None:
    memory = _after([
        "Rent: we pay $2,400 a month, split 50/50 between the two of us.",
        "About the rent: my room is bigger, so I'll cover more. Let's do 60/40.",
    ])  # fmt: skip
    assert "60/40" in memory
    assert "50/50" not in memory
    assert "$2,400" in memory  # the rest of the old sentence still holds


def test_new_split_in_chinese() -> None:
    memory = _after(["水电费我们两家五五分。", "我家人多，改成六四分吧。"])
    assert "六四分" in memory
    assert "五五分" not in memory


def test_two_live_splits_are_not_guessed_between() -> None:
    memory = _after([
        "Rent is split 50/50.",
        "Groceries are split 50/50 too.",
        "Let's do 60/40.",
    ])  # fmt: skip
    # Which of the two the new split revises is unclear: both stay.
    assert memory.count("50/50") == 2


# -- someone's ask, taken up by the user ----------------------------------------------


@pytest.mark.parametrize(
    ("lines", "current", "old"),
    [
        (["Our dog walker charges $20 a walk.",
          "She emailed and asked for $25 a walk from March; fair enough, we'll pay it."],
         "$25", "$20"),
        (["The tutor gets $40 a session.",
          "He asked for $45 a session. He's great with her, so we'll do 45."],
         "$45", "$40"),
        (["阿姨每月工资5000元。", "阿姨说想要涨到6000元。就按她说的来吧，她带孩子很用心。"],
         "6000元", "5000元"),
    ],
)  # fmt: skip
def test_accepted_ask_replaces_the_old_value(lines: list[str], current: str, old: str) -> None:
    memory = _after(lines)
    assert current in memory
    assert old not in memory


@pytest.mark.parametrize(
    ("lines", "old"),
    [
        (["Our dog walker charges $20 a walk.",
          "She emailed and asked for $25 a walk from March. We're still thinking about it."],
         "$20"),
        (["阿姨每月工资5000元。", "阿姨说想要涨到6000元。我们还在商量。"], "5000元"),
    ],
)  # fmt: skip
def test_an_ask_not_taken_up_leaves_the_value(lines: list[str], old: str) -> None:
    assert old in _after(lines)


# -- examples name nothing to revise ---------------------------------------------------


def test_example_words_do_not_pick_the_item_revised() -> None:
    memory = _after([
        "Health notes: Leo has a peanut allergy.",
        "Stop numbering the paragraphs. Switch to little titled blocks, for "
        'example "Meals", "Naps", "Health".',
    ])  # fmt: skip
    assert "peanut allergy" in memory
    assert "titled blocks" in memory


# -- a value proposed inside a question --------------------------------------------------

_OPENING = "Hi, I need help planning our school fair."


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("Is it okay to set the raffle draw for 3pm Saturday, or is that too late?", "3pm"),
        ('Pets: would a rule like "dogs on a leash shorter than two metres" be too fussy?',
         "leash"),
        ("抽奖定在周六下午3点可以吗？会不会太晚？", "下午3点"),
        ("像“家长必须陪同十岁以下孩子”这样的规定会不会太严？", "家长必须陪同"),
    ],
)  # fmt: skip
def test_value_proposed_in_a_question_is_kept(question: str, kept: str) -> None:
    assert kept in _after([_OPENING, question])


@pytest.mark.parametrize(
    "question",
    [
        "Is it okay to eat sushi at 3am?",
        "Would it be okay if I call you at 9pm?",
        "凌晨3点吃火锅可以吗？",
        "Is it okay to make it bigger?",  # nothing concrete is proposed
    ],
)
def test_questions_that_propose_no_plan_value_are_not_kept(question: str) -> None:
    assert _after([_OPENING, question]).strip() == _after([_OPENING]).strip()


# -- a revision bringing a date revises the item holding one ------------------------------


def test_date_revision_skips_an_item_that_only_shares_a_word() -> None:
    memory = _after([
        "Hi! Can you help me get the venue, catering and schedule sorted?",
        "Date: Friday–Saturday, May 8–9, with setup the evening before.",
        "Schedule change: move it to May 15–16 instead. The hall double-booked us.",
    ])  # fmt: skip
    assert "May 15" in memory
    assert "May 8" not in memory
    assert "venue, catering and schedule" in memory  # the request is not a date


# -- a bare hour with a verb of starting or clearing out is a clock time ------------------


@pytest.mark.parametrize(
    ("text", "hour"),
    [("Let's start the auction at 7 instead.", "7"), ("We have to be out by 11.", "11"),
     ("The workshop begins promptly at 9.", "9")],
)  # fmt: skip
def test_bare_hour_after_a_start_verb_is_a_time(text: str, hour: str) -> None:
    assert [v.text for v in extract_values(text) if v.kind == "time"] == [hour]


@pytest.mark.parametrize(
    "text", ["Start the count at 10.", "Start the race at 10 laps.", "We are out by 2 goals."]
)
def test_counts_after_a_start_verb_are_not_times(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind == "time"]


def test_new_start_hour_replaces_the_old_time_clause_only() -> None:
    memory = _after([
        "I'm running a science fair.",
        "Awards: Saturday, awards start at 3pm, in the gym, then photos outside.",
        "About the awards. The gym closes early, so let's start the awards at 2 instead.",
    ])  # fmt: skip
    assert "at 2 instead" in memory
    assert "3pm" not in memory
    assert "photos outside" in memory


# -- a street address is a value ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "address"),
    [("Meet at 12 Orchard Lane.", "12 Orchard Lane"),
     ("Pickup is from 440 Cedar Park Blvd every morning.", "440 Cedar Park Blvd"),
     ("体检中心在文三路478号。", "文三路478号"),
     ("他住在滨江区江南大道588号。", "江南大道588号")],
)  # fmt: skip
def test_street_address_is_a_value(text: str, address: str) -> None:
    assert [v.text for v in extract_values(text) if v.kind == "id"] == [address]


@pytest.mark.parametrize("text", ["We walked 12 blocks down the lane.", "走了三条路才到。"])
def test_roads_without_a_house_number_are_not_addresses(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind == "id"]


def test_decision_naming_an_address_is_kept() -> None:
    memory = _after([_OPENING, "We'll hold it all at the church hall, 77 Willow Road; the "
                     "school gym is booked for exams."])  # fmt: skip
    assert "77 Willow Road" in memory


# -- a header naming content for the work covers the rest of its message -------------------


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        (["Hi, I need help drafting our pet-sitting agreement.",
          "Medical stuff you need to put in: Biscuit is diabetic. His insulin pen lives in "
          "the butter compartment of the fridge."],
         "butter compartment"),
        (["Hi, I need help drafting our lease addendum.",
          "Things to include in the addendum: the dog is a 20-pound beagle. She sleeps in "
          "a crate in the laundry room."],
         "crate in the laundry room"),
        (["你好，帮我起草一份保姆合同。",
          "合同里要写进去的：孩子对花生过敏。急救药放在书包的红色小袋里，出门都要带上。"],
         "红色小袋"),
    ],
)  # fmt: skip
def test_sentences_under_a_content_header_are_kept(lines: list[str], kept: str) -> None:
    assert kept in _after(lines)


def test_plain_label_is_no_content_header() -> None:
    memory = _after(["Hi, I need help drafting our lease addendum.",
                     "Quick question: my sister lives in Ohio. She sleeps a lot."])  # fmt: skip
    assert "sleeps" not in memory
