"""Revision linking on conversations the rules were not written for.

Each test is one phenomenon of how people revise what they said, in English
and Chinese: a value written another way ("$14k" / "$14,000", "9 to 6" as a
span of hours, "每周2次" as a count), a cue with little word overlap, a value
fixed mid-sentence, a revocation that names one clause of a multi-rule
sentence, a revision split over two sentences. And the reverse: sharing one
word or one kind of value does not make two statements about the same thing.
"""

from __future__ import annotations

from policies.language.segment import clauses
from policies.language.values import extract_values, value_signature
from policies.memory.reducer import active_items
from policies.memory.staleness import StaleFilter
from policies.types import MemoryItem
from tests.unit.extraction_support import fold_messages

SYSTEM_EN = "You are a helpful assistant for planning, writing and everyday tasks."
SYSTEM_ZH = "你是一个贴心的生活助手，帮用户做计划、写东西、安排日常事务。"
OPEN_EN = "Hi! We're renovating our flat this spring and I'd like help keeping track of it."
OPEN_ZH = "你好，我们家今年要装修房子，想请你帮我一起记着各种安排。"


def fold(*user_turns: str, zh: bool = False) -> list[MemoryItem]:
    messages: list[tuple[str, str]] = []
    for text in (OPEN_ZH if zh else OPEN_EN, *user_turns):
        messages += [("user", text), ("assistant", "好的。" if zh else "Noted.")]
    items, _ = fold_messages(messages, SYSTEM_ZH if zh else SYSTEM_EN)
    return items


def live(items: list[MemoryItem]) -> list[str]:
    return [it.value for it in active_items(items)]


def has(items: list[MemoryItem], phrase: str) -> bool:
    return any(phrase in value for value in live(items))


def stale_live(items: list[MemoryItem], old: str, new: str) -> bool:
    """Is `old` presented as current: on a live item that does not also hold `new`?"""
    return any(old in v and new not in v for v in live(items))


# -- values written another way -------------------------------------------------


def test_thousands_shorthand_is_the_same_amount() -> None:
    short, long = extract_values("$14k"), extract_values("$14,000")
    assert value_signature(short[0]) == value_signature(long[0])


def test_number_then_max_is_a_cap_that_revises_a_negated_over() -> None:
    items = fold(
        "We don't want to go over $12,000 for the kitchen, appliances included.",
        "Talked it through with Sam: we can go to $14,500 all in max, that's final.",
    )
    assert has(items, "$14,500")
    assert stale_live(items, "$12,000", "$14,500") is False


def test_zh_cap_raised_with_zuiduo() -> None:
    items = fold(
        "装修预算不超过8万元，包括家电。", "跟老婆商量了，最多10万元吧，不能再多了。", zh=True
    )
    assert has(items, "10万元")
    assert stale_live(items, "8万元", "10万元") is False


def test_span_of_hours_is_one_value_and_is_revised() -> None:
    values = extract_values("the hotline is staffed 10 to 6 Pacific on weekdays")
    assert [v.kind for v in values][:1] == ["time"]
    assert values[0].text == "10 to 6"
    items = fold(
        "Our hotline is open 10 to 6 Pacific, mention that in every answer.",
        "Good news, we hired two more agents so the hotline now runs 7am to 9pm Pacific.",
    )
    assert has(items, "7am to 9pm")
    assert stale_live(items, "10 to 6", "7am to 9pm") is False


def test_zh_span_of_hours() -> None:
    values = extract_values("工人每天早上8点到下午5点干活")
    assert [(v.kind, v.text) for v in values if v.kind == "time"] == [("time", "早上8点到下午5点")]


def test_frequency_counts_per_week() -> None:
    numbers = [v.number for v in extract_values("我每周游泳2次，他一周三次，她daily")]
    assert numbers[:2] == [2.0, 3.0]
    items = fold("我现在每周游泳2次，周二和周四晚上。", "教练说可以加量，改成每周3次吧。", zh=True)
    assert has(items, "每周3次")
    assert stale_live(items, "每周游泳2次", "每周3次") is False


def test_en_frequency_revised_by_a_count() -> None:
    items = fold(
        "The cleaner comes twice a week, Mondays and Thursdays.",
        "Actually let's have her come three times a week from now on.",
    )
    assert has(items, "three times a week")
    assert stale_live(items, "twice a week", "three times a week") is False


def test_interest_rate_with_and_without_apr() -> None:
    items = fold(
        "The bank quoted us 4.5% APR on the renovation loan, 10 years.",
        "The broker called back: if we open a salary account the rate they offer is 4.1%.",
    )
    assert has(items, "4.1%")
    assert stale_live(items, "4.5%", "4.1%") is False


def test_renamed_title_that_extends_the_old_one() -> None:
    items = fold(
        "我在写一本回忆录，书名暂定《旧巷》，写我外婆那条街。",
        "出版社的编辑来信了，封面上印的是《旧巷人家》，我挺喜欢。",
        zh=True,
    )
    assert has(items, "《旧巷人家》")
    assert stale_live(items, "《旧巷》", "《旧巷人家》") is False


# -- wrong targets ----------------------------------------------------------------


def test_one_shared_word_does_not_revise_a_rule_about_another_measure() -> None:
    items = fold(
        "For the guide, keep each chapter under 20 pages, readers skim.",
        "My editor signed off on the outline, so the guide has twelve chapters now.",
    )
    assert has(items, "under 20 pages")


def test_money_far_apart_is_not_the_same_thing() -> None:
    items = fold(
        "The electrician charges $120 for the site visit.",
        "We went with the oak floor in the end, parking near the shop is almost $6 though.",
    )
    assert has(items, "$120")


def test_weekday_does_not_implicitly_move_a_dated_appointment() -> None:
    items = fold(
        "We're meeting the architect on May 14, she wants the floor plan by then.",
        "The plumber wants to come by on a Thursday morning, is that a good idea?",
    )
    assert has(items, "May 14")


# -- self-corrections inside one message ------------------------------------------------


def test_self_correction_keeps_the_clause_whole() -> None:
    parts = clauses("The tiles arrive on June 3 — sorry, June 5, the supplier moved it.")
    assert parts[0] == "The tiles arrive on June 3 — sorry, June 5"


def test_self_correction_does_not_revise_an_unrelated_item() -> None:
    items = fold(
        "The painter starts on May 2, first the bedroom.",
        "The tiles arrive on June 3 — no wait, June 5, the supplier moved it.",
    )
    assert has(items, "May 2")
    assert has(items, "June 5")


def test_zh_self_correction_does_not_revise_an_unrelated_rule() -> None:
    items = fold(
        "以后所有清单都用表格，别用大段文字。",
        "橱柜定在第3周安装——不对，第3周太赶了，放到第5周。",
        zh=True,
    )
    assert has(items, "都用表格")
    assert has(items, "第5周")


def test_self_correction_revises_the_item_holding_the_taken_back_value() -> None:
    items = fold(
        "The inspection is on March 10.",
        "About the inspection: I said March 10 — sorry, March 12, the inspector is away.",
    )
    assert has(items, "March 12")
    assert stale_live(items, "March 10", "March 12") is False


# -- revocations that name one clause ------------------------------------------------------


def test_revocation_keeps_the_sibling_rules_of_its_sentence() -> None:
    items = fold(
        'House style for the listings: every post opens with "Bright and airy", '
        'ends with "Call Mara on 555-0142", and stays under 90 words.',
        'Please stop opening the posts with "Bright and airy", buyers find it cheesy.',
    )
    assert has(items, "Call Mara")
    assert not any("Bright and airy" in v and "stop" not in v for v in live(items))


def test_revocation_reasons_are_no_new_value() -> None:
    items = fold(
        'For the newsletter: keep it under 300 words, and always end with the "Buy me a'
        ' coffee" link.',
        "Drop the coffee link from now on, we're closing that account, it only made $20 a month.",
    )
    assert has(items, "300 words")
    assert not any("always end with" in v for v in live(items))


def test_zh_revoked_choice_replaced_by_the_next_sentence() -> None:
    items = fold(
        "聚餐地点我想就定在小区门口的海底捞。",
        "算了，海底捞排队太久了，孩子们等不了。我们改去楼下的川菜馆吧，有包间，人均80块。",
        zh=True,
    )
    assert has(items, "川菜馆")
    assert stale_live(items, "海底捞", "川菜馆") is False


# -- a revision over two sentences ----------------------------------------------------------


def test_old_value_judged_in_one_sentence_new_value_in_the_next() -> None:
    items = fold(
        "We don't want to spend more than $2,000 on the garden.",
        "Honestly $2k is too tight for decent plants. We can go up to $2,600 max.",
    )
    assert has(items, "$2,600")
    assert stale_live(items, "$2k", "$2,600") is False
    assert stale_live(items, "$2,000", "$2,600") is False


# -- staleness notes -----------------------------------------------------------------------


def _pair(old: str, new: str) -> list[MemoryItem]:
    before = MemoryItem(
        id="a", type="fact", slot="s", value=old, source="user", source_ordinal=1,
        importance=0.7, status="superseded", superseded_by="b",
    )  # fmt: skip
    after = MemoryItem(
        id="b", type="fact", slot="s", value=new, source="user", source_ordinal=5, importance=0.7
    )
    return [before, after]


def test_no_note_on_the_sentence_that_is_the_replacement() -> None:
    new = "The tiles arrive on June 3 — sorry, June 5, the supplier moved it."
    f = StaleFilter(_pair("June 3", new))
    assert f.clean([new]) == [new]


def test_zh_glue_bigrams_do_not_tie_a_sentence_to_an_old_rule() -> None:
    f = StaleFilter(
        _pair(
            "你每次给报价的时候都帮我算一下每平米多少钱。",
            "以后不用再算每平米的价格了，我只看总价。",
        )
    )
    sentence = "今天去建材市场的时候又看了两家，一共五家了。"
    assert f.clean([sentence]) == [sentence]


def test_scratched_thing_no_item_held_reads_as_replaced() -> None:
    items = fold(
        "Do you think the $900 the rental company quoted for the skip is fair?",
        "Scratch the skip. My brother-in-law is hauling the rubble away for $250 with his truck.",
    )
    f = StaleFilter(items)
    out = f.clean(["The rental company quoted $900 for the skip."])
    assert "$250" in out[0] or not out


def test_revocation_leaves_no_bare_condition_behind() -> None:
    items = fold(
        "One more thing: whenever you compare paint brands for me, add a price table at the end.",
        "You can stop adding the price tables now, we picked the paint.",
    )
    assert not any(v.lower().startswith(("whenever", "one more thing")) for v in live(items))


def test_zh_revocation_leaves_no_bare_condition_behind() -> None:
    items = fold(
        "你每次给我推荐材料的时候，都在最后附一个价格表。",
        "以后不用再附价格表了，材料都买齐了。",
        zh=True,
    )
    assert not any(v.startswith("你每次给我推荐材料") and "价格表" not in v for v in live(items))


def test_revocation_keeps_siblings_on_both_sides_of_the_withdrawn_clause() -> None:
    items = fold(
        "For every update: use bullet points, add a cost line at the top, and sign it as"
        " 'Site Team B'.",
        "You can drop the cost line now, the client stopped asking.",
    )
    assert has(items, "bullet points")
    assert has(items, "Site Team B")
    assert not any("cost line at the top" in v for v in live(items))


def test_zh_revocation_keeps_siblings_on_both_sides() -> None:
    items = fold(
        "进度汇报的规矩：开头写今天完成的活，结尾列明天的材料清单，全文不超过300字。",
        "结尾的材料清单不用列了，工长会直接发给我。",
        zh=True,
    )
    assert has(items, "开头写今天完成的活")
    assert has(items, "不超过300字")
    assert not any("结尾列明天的材料清单" in v for v in live(items))


def test_the_counted_noun_alone_does_not_tie_a_sentence_to_the_old_count() -> None:
    f = StaleFilter(_pair("The course will have eight modules.", "The course has ten modules now."))
    sentence = "Each of the modules takes about 3 hours to record."
    assert f.clean([sentence]) == [sentence]
    assert "ten modules" in f.clean(["We planned eight modules at first."])[0]


def test_short_note_quotes_the_clause_with_the_new_value() -> None:
    f = StaleFilter(
        _pair(
            "每篇周报1500字左右，每周五下午5点发。",
            "领导说短一点大家才会看完，还是每篇1000字吧，别写1500了。",
        )
    )
    quoted: set[str] = set()
    f.clean(["每篇周报1500字左右。"], quoted)  # the first quote is in full
    second = f.clean(["我们之前说每篇周报1500字左右。"], quoted)[0]
    assert "1000字" in second


def test_short_note_quotes_what_to_do_instead_not_the_reason() -> None:
    f = StaleFilter(
        _pair(
            "以后给我的清单都用表格。",
            "表格你以后别用了，手机上看总是显示不全，直接分条写就行。",
        )
    )
    quoted: set[str] = set()
    f.clean(["清单都用表格。"], quoted)
    second = f.clean(["我说过清单都用表格。"], quoted)[0]
    assert "直接分条写就行" in second


def test_zh_word_count_is_a_measure_and_is_revised() -> None:
    # 词 counts words (an English text written for a Chinese speaker): the same
    # measure as "300 words", so a new count of it replaces the old one.
    items = fold(
        "申请信的摘要先控制在300词左右吧。",
        "今天下午去拿了体检报告，一切正常。",
        "我查了一下，评审规定摘要不超过半页。那摘要就按250词来写吧，另外两份材料也统一用这个长度。",
        zh=True,
    )
    assert has(items, "250词")
    assert not has(items, "300词")


# -- a length of time revised in another unit ------------------------------------------


def test_a_length_of_time_is_compared_in_days_or_minutes() -> None:
    def one(text: str) -> tuple[str, float | None]:
        (v,) = [v for v in extract_values(text) if v.kind in ("qty", "bound")]
        return v.unit, v.number

    assert one("a stay of 5周") == one("a stay of 35天") == ("day", 35.0)
    assert one("off for two weeks") == ("day", 14.0)
    assert one("寄养一个月") == ("day", 30.0)
    assert one("at most 2 hours") == ("below:minute", 120.0)
    assert value_signature(extract_values("两周")[0]) == value_signature(extract_values("14天")[0])


def test_look_alikes_of_a_length_of_time_keep_their_unit() -> None:
    # an age, an ordinal day, a stretch pointed at, a shift, a rate, a year
    for text in ("女儿3周岁了", "第二天下午到货", "这两周排班排不过来", "开了三年了，2024年搬过来"):
        assert all(v.unit != "day" or text.startswith("开了") for v in extract_values(text))
    assert [v.text for v in extract_values("2024年") if v.unit == "day"] == []
    assert not [v for v in extract_values("航班改签，晚一周出发") if v.kind == "qty"]
    assert not [v for v in extract_values("房租一个月3000块") if v.kind == "qty"]
    assert [v.unit for v in extract_values("3 nights") if v.kind == "qty"] == ["night"]


def test_en_weeks_revised_as_days() -> None:
    items = fold(
        "We'll be away for two weeks in August, leaving on the 3rd.",
        "Work only lets me off for ten days in the end, so plan the trip for ten days.",
    )
    assert has(items, "ten days")
    assert not stale_live(items, "two weeks", "ten days")


def test_zh_a_month_revised_as_weeks() -> None:
    items = fold(
        "猫咪的寄养计划一个月，6月28号送过去。",
        "机票定了，算下来一共三周。",
        zh=True,
    )
    assert has(items, "一共三周")
    assert not stale_live(items, "一个月", "三周")
    assert has(items, "6月28号")  # the drop-off date beside it is not revised


def test_a_length_of_time_does_not_revise_another_measure() -> None:
    en = fold(
        "We'll be away for two weeks in August.",
        "The flight itself takes ten hours, so plan a quiet first day.",
    )
    assert has(en, "two weeks")
    zh = fold(
        "妻子被派到新加坡分部工作，合同两年。",
        "船票改了，我们一家改成11月3号的班次，晚两周。",
        zh=True,
    )
    assert has(zh, "合同两年")  # a shift of two weeks is no length of the contract


def test_a_friends_story_does_not_revise_the_plan() -> None:
    zh = fold(
        "这次寄养计划5周，6月28号送过去。",
        "我邻居前年把他的狗送到训犬基地住了两周，接回来以后瘦了一圈。",
        zh=True,
    )
    assert has(zh, "寄养计划5周")
    en = fold(
        "We're planning two weeks in Portugal in September.",
        "A friend of mine did ten days there last year and said it was plenty.",
    )
    assert has(en, "two weeks in Portugal")


# -- a headcount restated with another noun or as a settled figure ----------------------


def test_people_counted_under_another_name_are_one_headcount() -> None:
    units = {v.unit for t in ("18 volunteers", "fourteen trainees", "10 staff")
             for v in extract_values(t)}  # fmt: skip
    assert units == {"person"}
    # a possessive is no headcount: "400 children's books" counts books
    assert not [
        v for v in extract_values("a donation of 400 children's books") if v.unit == "person"
    ]


def test_en_a_cap_on_volunteers_revised_by_a_settled_count_of_trainees() -> None:
    items = fold(
        "The coding club takes up to 18 volunteers, and we meet on Sunday afternoons.",
        "Keep each reply under 200 words too.",
        "The church hall seats fourteen trainees with tables for pairs, so that's our number.",
    )
    assert has(items, "fourteen trainees")
    assert not stale_live(items, "18 volunteers", "fourteen")
    assert has(items, "under 200 words")


def test_zh_a_rough_headcount_revised_by_a_confirmed_one() -> None:
    items = fold(
        "我们公司年会大概40人参加，场地定在西湖边。",
        "预算每人不超过200元。",
        "报名截止了，确定来三十五位。",
        zh=True,
    )
    assert has(items, "三十五位")
    assert not stale_live(items, "40人", "三十五位")
    assert has(items, "不超过200元")


def test_an_unsettled_or_other_count_revises_no_headcount() -> None:
    zh = fold(
        "我们公司年会大概40人参加，场地定在西湖边。", "报名还不确定，可能三十五位左右吧。", zh=True
    )
    assert has(zh, "大概40人")
    zh = fold("我们公司年会大概40人参加，场地定在西湖边。", "纪念册确定印35本。", zh=True)
    assert has(zh, "大概40人")
    en = fold(
        "We're expecting about 120 guests at the reception.",
        "The florist confirmed 14 centrepieces for the tables.",
    )
    assert has(en, "120 guests")


def test_an_amount_in_reach_is_the_sole_rival_when_others_are_far() -> None:
    items = fold(
        "Our goal is to raise $3,000 for the animal shelter.",
        "Priya thinks we should charge $30 a ticket.",
        "The animal shelter's shortfall is five grand, so that's the number to aim at.",
    )
    assert has(items, "five grand")
    assert not stale_live(items, "$3,000", "five grand")


# -- a rule replaced by naming its opposite ---------------------------------------------


def test_en_dropping_one_side_of_a_register_replaces_the_rule_that_took_it() -> None:
    items = fold(
        "Standing rule: every customer-facing post stays strictly formal, the council reposts it.",
        "The council wants its licence number on every poster and leaflet.",
        "Forget the formal tone — for anything customers see I want it warm and chatty. "
        "Redo the poster text that way.",
    )
    assert has(items, "warm and chatty")
    assert not has(items, "strictly formal")
    assert has(items, "licence number on every poster")


def test_the_opposite_choice_said_as_enough_replaces_the_rule() -> None:
    zh = fold("以后给客户写邮件都用书面语。", "给客户的邮件口语化一点就行，别太端着。", zh=True)
    assert has(zh, "口语化一点就行")
    assert not has(zh, "都用书面语")
    en = fold(
        "Always write my emails to the landlord formally.",
        "For the landlord emails, casual is fine from now on.",
    )
    assert has(en, "casual is fine")
    assert not has(en, "landlord formally")


def test_the_opposite_said_bare_stays_a_conflict_to_confirm() -> None:
    items = fold("以后给客户写邮件都用书面语。", "以后给客户的邮件写得口语化一些。", zh=True)
    old = next(it for it in items if "书面语" in it.value)
    assert old.status == "pending"
    # an opposite word about something else is no replacement
    en = fold(
        "Always write my emails to the landlord formally.",
        "The plumber is a casual guy, he's coming on Tuesday.",
    )
    assert has(en, "landlord formally")


def test_zh_a_revocation_holding_a_latin_word_revokes_the_rule() -> None:
    items = fold(
        "以后每次回答结尾都帮我列个checklist，我怕忘事。",
        "以后不用每次都列checklist了，太占地方，你正常回就好。",
        zh=True,
    )
    assert not has(items, "都帮我列个checklist")


# -- a third party's news relayed by the user -------------------------------------------


def test_news_relayed_from_someone_else_revises_the_plan() -> None:
    en = fold(
        "The report deadline is Wednesday, I'd like a first draft by Monday.",
        "My boss says the deadline is now Friday.",
    )
    assert has(en, "now Friday")
    assert not stale_live(en, "deadline is Wednesday", "Friday")
    zh = fold("租房的押金是一个月房租，合同签一年。", "房东说押金改成两个月。", zh=True)
    assert has(zh, "押金改成两个月")
    assert not stale_live(zh, "押金是一个月房租", "两个月")
