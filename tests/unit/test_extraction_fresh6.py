"""Phenomena of the fresh6 probe, with sentences of our own (zh and en): values
revised in words that share neither wording nor unit with the old ones."""

from __future__ import annotations

import pytest

from policies.language.questions import recap_request
from policies.language.segment import drop_retracted
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values

SYSTEM_EN = "You are an assistant for someone organising a community event."
SYSTEM_ZH = "你是帮用户筹备活动的助手。"


def numbers(text: str) -> list[tuple[str, float | None]]:
    return [(v.kind, v.number) for v in extract_values(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("一共要六十三份", ("qty", 63.0)),
        ("每桌八百五以内", ("bound", 850.0)),  # spoken short form: 八百五 is 850
        ("每人两千五封顶", ("bound", 2500.0)),
        ("押金一百零八块", ("money", 108.0)),  # 零: the digit stays a unit
        ("场租四万五左右", ("money", 45000.0)),
        ("经费按1.2万来算吧", ("money", 12000.0)),
        ("人数调到六百吧", ("number", 600.0)),
    ],
)
def test_zh_amounts_in_spoken_numerals(text: str, expected: tuple[str, float]) -> None:
    assert expected in numbers(text)


@pytest.mark.parametrize(
    "text",
    [
        "千万别迟到",
        "万一下雨怎么办",
        "十分感谢",
        "我们十二月出发",
        "二十多个人报了名",
        "一下子就满了",
    ],
)
def test_zh_words_made_of_numerals_are_no_numbers(text: str) -> None:
    assert not any(kind in ("number", "money", "bound") for kind, _ in numbers(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We expect seventy-two runners", ("qty", 72.0)),
        ("we're up to eighty-one volunteers", ("qty", 81.0)),
        ("Book nineteen rooms", ("qty", 19.0)),
    ],
)
def test_en_compound_number_words(text: str, expected: tuple[str, float]) -> None:
    assert expected in numbers(text)


@pytest.mark.parametrize(
    ("text", "mbps"),
    [
        ("The plan has to give us at least 300 Mbps down.", 300.0),
        ("Ask them for 2 Gbps on the office line.", 2000.0),
        ("Let's get a gig symmetrical for the studio.", 1000.0),
        ("we'd take one gig fibre if it's cheap", 1000.0),
    ],
)
def test_connection_speeds_are_one_measure(text: str, mbps: float) -> None:
    rates = [v for v in extract_values(text) if v.unit.endswith("mbps")]
    assert [v.number for v in rates] == [mbps]


@pytest.mark.parametrize(
    "text", ["We have a gig at the pub on Friday.", "She played two gigs this weekend."]
)
def test_a_music_gig_is_no_speed(text: str) -> None:
    assert not any(v.unit.endswith("mbps") for v in extract_values(text))


def test_a_grouped_national_phone_number_is_one_id_and_its_fix_reads_clean() -> None:
    text = "The caterer's number is 0398 221 764 — sorry, 0398 212 764, I always flip them."
    assert [v.text for v in extract_values(text) if v.kind == "id"] == [
        "0398 221 764",
        "0398 212 764",
    ]
    assert drop_retracted(text) == ("The caterer's number is 0398 212 764, I always flip them.")


def test_a_value_span_holds_no_trailing_space() -> None:
    text = "The hall fee is $420 — no wait, $240."
    first = extract_values(text)[0]
    assert text[first.start : first.end] == "$420"


@pytest.mark.parametrize(
    "text",
    [
        "再提一点：你给我的所有报价和对比都用列表，方便我转给同事。",
        "还有一条：你帮我的所有整理都写成三段以内。",
    ],
)
def test_zh_a_rule_about_everything_you_give_me_is_no_recap(text: str) -> None:
    assert not recap_request(text)


def test_zh_a_recap_request_is_still_one() -> None:
    assert recap_request("请你把我们定下来的所有事项整理成清单给我。")


def test_a_fix_inside_one_message_revises_nothing_said_before() -> None:
    active = active_values(
        [
            "I'm organising the street party for our block.",
            "The council gave us $1,500 for the whole thing.",
            "The DJ wants a deposit of $250 — no wait, $205, I misread the invoice.",
        ],
        SYSTEM_EN,
    )
    assert any("$1,500" in v for v in active)
    assert any("$205" in v for v in active)


def test_zh_a_fix_inside_one_message_revises_nothing_said_before() -> None:
    active = active_values(
        [
            "我在筹备小区的中秋游园会。",
            "街道给了我们8000元经费。",
            "舞狮队要付定金600元——不对，是650元，我看错了。",
        ],
        SYSTEM_ZH,
    )
    assert any("8000元" in v for v in active)
    assert any("650元" in v for v in active)


# -- a plan adjusted, with one live value it can adjust -----------------------


@pytest.mark.parametrize(
    ("old", "new", "gone"),
    [
        (
            "Our choir concert is on Friday May 8 at the library.",
            "The tuner is away that week. Reserve the stage for Friday May 15 then.",
            "May 8",
        ),
        (
            "The garage sale is set for June 6.",
            "Rain all weekend, ugh. Print June 13 on the flyers then.",
            "June 6",
        ),
        (
            "We're printing 120 booklets.",
            "Eleven more families signed up, 140 booklets in total.",
            "120 booklets",
        ),
    ],
)
def test_a_plan_adjusted_revises_the_one_value_of_its_kind(old: str, new: str, gone: str) -> None:
    active = active_values(["I'm organising events for our neighbourhood group.", old, new])
    assert any(new.split(". ")[-1] in v for v in active)
    assert not any(gone in v for v in active)


@pytest.mark.parametrize(
    ("old", "new", "gone"),
    [
        (
            "游园会定在9月14号，地点在小区广场。",
            "广场那天要搞消杀，那就按9月21号来吧。",
            "9月14号，",
        ),
        ("年货节先准备80份礼包。", "又有几户报名了，一共要九十五份。", "80份"),
        (
            "义卖会初步定在5月9号。",
            "场地那边说5月9号要检修，那就按5月16号报上去吧。",
            "初步定在5月9号",
        ),
    ],
)
def test_zh_a_plan_adjusted_revises_the_one_value_of_its_kind(
    old: str, new: str, gone: str
) -> None:
    active = active_values(["我在帮社区筹备活动。", old, new], SYSTEM_ZH)
    assert any(v == new for v in active)
    assert not any(gone in v and v != new for v in active)


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        # two live values of the kind: the words must say which one
        (
            [
                "We stay 3 nights in Lisbon first.",
                "After that 2 nights in Porto.",
                "Let's do 4 nights in Sintra then.",
            ],
            ["We stay 3 nights in Lisbon first.", "After that 2 nights in Porto."],
        ),
        # a breakdown of a total revises no total
        (
            [
                "We need 18 tables for the banquet.",
                "Family gets 6 tables, friends 5 tables and colleagues 7 tables in total.",
            ],
            ["We need 18 tables for the banquet."],
        ),
        # no adjustment marked: a new event on its own date
        (
            ["The move is on March 7.", "The ISP install is on March 10."],
            ["The move is on March 7."],
        ),
    ],
)
def test_no_sole_rival_without_one_value_and_an_adjustment(
    lines: list[str], kept: list[str]
) -> None:
    active = active_values(["I'm organising things for our office.", *lines])
    assert all(line in active for line in kept)


def test_zh_a_breakdown_and_a_generic_count_revise_nothing() -> None:
    active = active_values(
        [
            "我在帮社区筹备活动。",
            "一共18桌，每桌10个人。",
            "居委会加起来3桌，志愿者2桌，其余都是居民。",
            "我们是个小社区，3个楼长管事。",
            "现在报名表要录两遍，太麻烦了。",
        ],
        SYSTEM_ZH,
    )
    assert "一共18桌，每桌10个人。" in active
    assert "我们是个小社区，3个楼长管事。" in active


def test_zh_a_deadline_reset_as_a_new_condition() -> None:
    active = active_values(
        [
            "我在帮社区筹备活动。",
            "先说下情况：横幅做3条，5月30号前送到。",
            "开幕式提前了，得5月25号前拿到才行。",
        ],
        SYSTEM_ZH,
    )
    assert any("5月25号" in v for v in active)
    assert not any("5月30号" in v and "5月25号" not in v for v in active)
    assert any("横幅做3条" in v for v in active)  # the rest of the old item holds


def test_a_connection_speed_revises_the_speed_asked_before() -> None:
    active = active_values(
        [
            "I'm setting up the new office for our design team.",
            "We need at least 300 Mbps fibre for the video uploads.",
            "For the line, ask the ISP to quote a gig symmetrical, editors hate waiting.",
        ]
    )
    assert any("a gig symmetrical" in v for v in active)
    assert not any("300 Mbps" in v and "a gig" not in v for v in active)


def test_a_music_gig_revises_no_speed() -> None:
    active = active_values(
        [
            "I'm setting up the new office for our design team.",
            "We need at least 300 Mbps fibre for the video uploads.",
            "The team has a gig at the pub on Friday, we'll close at four then.",
        ]
    )
    assert "We need at least 300 Mbps fibre for the video uploads." in active


# -- an amount adjusted, near one old value and far from the others ---------------


def test_an_amount_adjusted_revises_the_one_near_it() -> None:
    active = active_values(
        [
            "I'm organising the street party for our block.",
            "The council gave us $3,000 for the whole day.",
            "The face painter wants $400 up front.",
            "Sponsors pulled out, so let's plan around 2.6k then, all costs in.",
        ],
        SYSTEM_EN,
    )
    assert not any("$3,000" in v and "2.6k" not in v for v in active)
    assert any("$400" in v for v in active)


def test_an_amount_between_two_old_ones_revises_neither() -> None:
    active = active_values(
        [
            "I'm organising the street party for our block.",
            "The council gave us $3,000 for the whole day.",
            "The stage hire is $1,800.",
            "Let's plan around 2.4k then.",
        ],
        SYSTEM_EN,
    )
    assert any("$3,000" in v for v in active)
    assert any("$1,800" in v for v in active)


# -- rules: revoked, replaced, relaxed, stated while rejecting ---------------------


@pytest.mark.parametrize(
    ("rule", "revocation", "new"),
    [
        (
            "For the newsletter, always write it in both English and Spanish.",
            "Actually skip the bilingual newsletter — English only, translation costs too much.",
            "English only",
        ),
        (
            "Every email to parents: always use numbered lists, they skim.",
            "Drop the numbered lists, just write it as two short paragraphs, it reads warmer.",
            "two short paragraphs",
        ),
    ],
)
def test_a_rule_replaced_leaves_no_clause_about_what_the_new_rule_settles(
    rule: str, revocation: str, new: str
) -> None:
    active = active_values(["I run the parents' association newsletter.", rule, revocation])
    assert any(new in v for v in active)
    assert not any("always" in v for v in active)


@pytest.mark.parametrize(
    ("ban", "lifted", "shown"),
    [
        (
            "另外海报这块有个规矩：所有的标题都不要用英文，显得洋气过头",
            "海报那边，英文随便用吧，年轻人喜欢。",
            "英文随便用",
        ),
        ("菜单上不要出现英文。", "菜单那边英文随便写吧，外国来宾也多。", "英文随便写"),
    ],
)
def test_zh_a_ban_lifted_is_remembered_as_what_holds_now(ban: str, lifted: str, shown: str) -> None:
    active = active_values(["我在帮社区筹备活动。", ban, lifted], SYSTEM_ZH)
    assert any(shown in v for v in active)
    assert ban not in active


def test_a_ban_lifted_is_remembered_as_what_holds_now() -> None:
    active = active_values(
        [
            "I run the parents' association newsletter.",
            "Never use emojis in the newsletter.",
            "You can use emojis now, the kids love them.",
        ]
    )
    assert any("You can use emojis now" in v for v in active)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "No — nobody but the curators handles the paintings, ever. Some are on loan.",
            "nobody but the curators handles the paintings",
        ),
        ("No one except the two of us opens the safe.", "No one except the two of us"),
    ],
)
def test_a_rule_on_who_may_do_it_is_kept(text: str, kept: str) -> None:
    active = active_values(["We're moving the gallery to a new building.", text])
    assert any(kept in v for v in active)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("不行，摊位里绝对不能卖烟，出了事谁负责？", "绝对不能卖烟"),
        ("不要，奖品一律不能是现金，被家长投诉了怎么办？", "一律不能是现金"),
    ],
)
def test_zh_a_rule_with_a_rhetorical_question_fused_on_is_kept(text: str, kept: str) -> None:
    active = active_values(["我在帮社区筹备游园会。", text], SYSTEM_ZH)
    assert any(kept in v for v in active)


def test_zh_a_plain_question_keeps_no_rule() -> None:
    active = active_values(["我在帮社区筹备游园会。", "摊位能不能卖饮料，你觉得呢？"], SYSTEM_ZH)
    assert not any("饮料" in v for v in active)


# -- someone else's wish; a reminder is no continuation ------------------------------


def test_zh_someone_elses_wish_the_user_declines_revises_nothing() -> None:
    active = active_values(
        [
            "我在帮社区筹备游园会。",
            "奖品不要买塑料玩具，孩子们已经被塑料玩具包围三年了。",
            "居委会李主任说想让孩子们都写一张十年后的愿望卡，不过这个得看孩子们自己，我不打算强求。",
        ],
        SYSTEM_ZH,
    )
    assert "奖品不要买塑料玩具，孩子们已经被塑料玩具包围三年了。" in active
    assert not any("愿望卡" in v for v in active)


def test_zh_a_reminder_is_not_the_previous_sentences_next_step() -> None:
    active = active_values(
        [
            "我在帮社区筹备游园会。",
            "所有摊位都必须有灭火器。",
            "开场曲就《歌唱祖国》吧。再强调一下消防的事：没有灭火器的摊位一律不许开。",
        ],
        SYSTEM_ZH,
    )
    assert not any("歌唱祖国" in v and "灭火器" in v for v in active)
