"""RuleExtractor on the phenomena found by the held-out scenarios (bench/scenarios).

Each test names a way people state, revise or revoke requirements that the
extractor used to miss, and checks it on phrasings written for this file
(zh and en), not copied from any scenario: the point is the phenomenon.
"""

from __future__ import annotations

from policies.language.cues import contrast_terms, read_cues
from policies.language.matching import weighted_terms
from policies.language.questions import is_question, recap_request
from policies.language.values import extract_values
from policies.memory.reducer import active_items
from policies.types import Extraction, MemoryItem
from tests.unit.extraction_support import fold_messages

SYSTEM_EN = "You are a helpful assistant for planning, writing and everyday tasks."
SYSTEM_ZH = "你是一个贴心的生活助手，帮用户做计划、写东西、安排日常事务。"


def fold(
    messages: list[tuple[str, str]], system: str = SYSTEM_EN
) -> tuple[list[MemoryItem], list[Extraction]]:
    return fold_messages(messages, system)


def live(items: list[MemoryItem]) -> list[str]:
    return [it.value for it in active_items(items)]


def has(items: list[MemoryItem], phrase: str) -> bool:
    return any(phrase in value for value in live(items))


def chat(*user_turns: str) -> list[tuple[str, str]]:
    """User turns with a short assistant reply after each (the shape of a real session)."""
    out: list[tuple[str, str]] = []
    for text in user_turns:
        out += [("user", text), ("assistant", "Noted.")]
    return out


OPEN_EN = "Hi! I'm planning a week-long family trip to Lisbon and could use a hand."
OPEN_ZH = "你好，我在准备下个月全家去云南玩一周，想请你帮忙一起规划。"


# -- self-corrections ---------------------------------------------------------


def test_correction_naming_the_wrong_value_replaces_the_item_that_holds_it() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "The pet sitter is Margot, she comes by twice a day.",
            "Unrelated: what's a good pastel de nata place near Alfama?",
            "Oops, I meant Odile, not Margot. Margot moved away last spring.",
        )
    )
    assert has(items, "Odile")
    assert not any("Margot" in v and "Odile" not in v for v in live(items))


def test_zh_correction_with_old_value_called_last_years() -> None:
    items, _ = fold(
        chat(
            OPEN_ZH,
            "我妈的身高是158厘米，体重60公斤，买票要用。",
            "顺便问一下，昆明现在天气怎么样？",
            "刚才说错了，体重是56公斤，60是她前年的数。",
        ),
        SYSTEM_ZH,
    )
    assert has(items, "56公斤")
    assert not any("60公斤" in v and "56公斤" not in v for v in live(items))


def test_bare_admission_of_a_mistake_is_not_an_item() -> None:
    items, _ = fold(chat(OPEN_EN, "We land on Monday, June 9.", "I misread the booking page."))
    assert not has(items, "misread")


def test_correction_cue_then_value_in_the_next_sentence() -> None:
    items, _ = fold(chat(OPEN_EN, "Dinner for 6 people on Saturday.", "My mistake. 8 people."))
    assert has(items, "8 people")
    assert not any("6 people" in v and "8 people" not in v for v in live(items))


# -- revisions that name no subject -------------------------------------------


def test_date_revision_with_no_shared_words_picks_the_nearby_date() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Our flight leaves on June 4 from Heathrow.",
            "Annoying: the airline moved us to June 11.",
        )
    )
    assert has(items, "June 11")
    assert not any("June 4" in v and "June 11" not in v for v in live(items))


def test_zh_date_revision_without_the_subject() -> None:
    items, _ = fold(
        chat(OPEN_ZH, "我们打算5月3号从上海出发。", "票没抢到，只能换成5月6号的了。"), SYSTEM_ZH
    )
    assert has(items, "5月6号")
    assert not any("5月3号" in v and "5月6号" not in v for v in live(items))


def test_value_in_a_multi_fact_sentence_revised_by_its_neighbouring_word() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "The hotel is near the river, breakfast is included, and it's a 40-minute walk"
            " to the old town.",
            "Checked the map again: it's really a 25-minute walk.",
        )
    )
    assert has(items, "25-minute walk")
    assert not any("40-minute" in v for v in live(items))
    assert has(items, "breakfast is included")


def test_budget_revised_without_the_word_budget() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Our budget is $6,000 for the whole trip.",
            "Good news, with the tax refund we can afford $7,500 now.",
        )
    )
    assert has(items, "$7,500")
    assert not any("$6,000" in v and "$7,500" not in v for v in live(items))


def test_zh_threshold_restated_without_a_unit() -> None:
    items, _ = fold(
        chat(
            OPEN_ZH,
            "超过200块的开销都要先跟我说一声。",
            "我老公说了，现在150以上的都得先问他。",
        ),
        SYSTEM_ZH,
    )
    assert has(items, "150以上")
    assert not any("200块" in v and "150" not in v for v in live(items))


def test_counted_plural_noun_is_a_quantity_and_is_revised() -> None:
    (value,) = [v for v in extract_values("we expect 12 volunteers") if v.kind == "qty"]
    assert value.unit == "person"  # people, however they are named
    items, _ = fold(
        chat(
            OPEN_EN,
            "For the beach clean-up we expect 12 volunteers.",
            "Two friends signed up, so 14 volunteers now.",
        )
    )
    assert has(items, "14 volunteers")
    assert not any("12 volunteers" in v for v in live(items))


def test_frequency_is_a_value_a_revision_changes() -> None:
    kinds = [v.kind for v in extract_values("stretch twice a day, then every other day")]
    assert kinds == ["freq", "freq"]
    items, _ = fold(
        chat(
            OPEN_ZH,
            "医生让我爸每天吃两次降压药。",
            "复诊完医生说降压药改成每天一次。",
        ),
        SYSTEM_ZH,
    )
    assert has(items, "改成每天一次")
    assert not any("每天吃两次" in v for v in live(items))


# -- standing rules phrased with any noun ---------------------------------------


def test_quantified_object_makes_a_standing_rule() -> None:
    items, _ = fold(chat(OPEN_EN, "For each day plan, add the walking distance at the top."))
    (item,) = [it for it in active_items(items) if "walking distance" in it.value]
    assert item.type == "directive"


def test_generic_whatever_you_clause_makes_a_standing_rule() -> None:
    items, _ = fold(chat(OPEN_EN, "Anything you translate should keep street names in Portuguese."))
    (item,) = [it for it in active_items(items) if "street names" in it.value]
    assert item.type == "directive"


def test_zh_requirement_marker_and_whenever_clause() -> None:
    items, _ = fold(chat(OPEN_ZH, "另外提个要求：推荐餐馆的时候，都标一下人均多少钱。"), SYSTEM_ZH)
    (item,) = [it for it in active_items(items) if "人均" in it.value]
    assert item.type == "directive"


def test_on_demand_rule_replaces_an_every_time_rule() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Whenever you suggest a day plan, attach a packing list.",
            "You can stop attaching packing lists. Only give me one when I ask.",
        )
    )
    assert not has(items, "attach a packing list")
    assert has(items, "when I ask")


# -- revocations ----------------------------------------------------------------


def test_quit_doing_revokes_a_rule() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Whenever you mention a museum, give me the opening hours.",
            "Honestly you can quit listing opening hours, I'll check them on the day.",
        )
    )
    assert not has(items, "give me the opening hours")


def test_revocation_with_its_replacement_in_the_same_sentence() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Please add a fun fact for every stop on the itinerary.",
            "Ditch the fun facts, keep the itinerary short and practical.",
        )
    )
    assert not any("fun fact for every stop" in v for v in live(items))
    assert has(items, "short and practical")


def test_zh_revocation_by_waiving() -> None:
    items, _ = fold(
        chat(
            OPEN_ZH,
            "以后每次推荐景点都附上门票价格。",
            "门票价格就免了，我们买了通票。",
        ),
        SYSTEM_ZH,
    )
    assert not has(items, "附上门票价格")


def test_revocation_cue_with_nothing_to_revoke_is_not_a_rule() -> None:
    items, _ = fold(chat(OPEN_ZH, "算了，这个明天再说吧。"), SYSTEM_ZH)
    assert not has(items, "明天再说")


# -- rejecting a proposal ---------------------------------------------------------


def test_rejecting_a_proposal_is_a_constraint() -> None:
    items, _ = fold(
        [
            ("user", OPEN_EN),
            ("assistant", "Day 2 could be a sunset sailing trip on the Tagus."),
            ("user", "Nope, drop the boat stuff. My dad gets horribly seasick."),
        ]
    )
    (item,) = [it for it in active_items(items) if "boat stuff" in it.value]
    assert item.type == "constraint"


def test_x_is_off_the_table() -> None:
    items, _ = fold(chat(OPEN_EN, "Camping is off the table, my back can't take it."))
    assert has(items, "Camping is off the table")


def test_correction_after_a_rhetorical_question_is_kept() -> None:
    items, _ = fold(
        [
            ("user", OPEN_EN),
            ("assistant", "I put you on the 6:05am train to Sintra."),
            ("user", "Why would you book that? Anything before 9am is out for us, we have kids."),
        ]
    )
    assert has(items, "before 9am is out")


# -- decisions and choices ----------------------------------------------------------


def test_a_new_choice_on_the_same_subject_replaces_the_old_one() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "For the living room I'm leaning towards oak floors, something light.",
            "What's the best way to clean a cast-iron pan?",
            "Update on the living room: the floors are going walnut after all.",
        )
    )
    assert has(items, "walnut")
    assert not has(items, "oak floors")


def test_zh_choice_replaced_with_haishi() -> None:
    items, _ = fold(
        chat(
            OPEN_ZH,
            "晚上住宿我们打算住古城里的民宿。",
            "题外话，大理的菌子现在能吃吗？",
            "住宿我们商量了一下，还是选洱海边的酒店吧，带老人方便。",
        ),
        SYSTEM_ZH,
    )
    assert has(items, "洱海边的酒店")
    assert not has(items, "古城里的民宿")


# -- what is not a requirement --------------------------------------------------------


def test_hedged_speculation_is_not_kept() -> None:
    items, _ = fold(chat(OPEN_EN, "Which maybe means the ferry isn't worth it anymore."))
    assert not has(items, "ferry")


def test_aside_errands_are_not_kept() -> None:
    items, _ = fold(
        chat(OPEN_EN, "On a completely different note, I need to renew my passport this week.")
    )
    assert not has(items, "passport")


def test_reported_questions_are_not_kept() -> None:
    assert read_cues("My brother asked if we could bring the dog.").question
    assert read_cues("同事问我要不要一起去爬山。").question
    items, _ = fold(chat(OPEN_ZH, "我妈问我，过年回不回家。"), SYSTEM_ZH)
    assert not has(items, "过年")


def test_zh_a_not_a_questions_are_not_prohibitions() -> None:
    assert read_cues("能不能带狗我还没想好。").constraint < 3
    assert read_cues("我们在纠结要不要租车。").constraint < 3
    assert is_question("周末过不过去看看")


def test_someone_elses_habit_is_not_a_rule() -> None:
    assert read_cues("她担心以后没人帮她遛狗。").directive == 0
    assert read_cues("以后每次都用中文回复。").directive == 3


def test_own_next_step_is_not_kept() -> None:
    items, _ = fold(chat(OPEN_ZH, "我问问我老公再说。"), SYSTEM_ZH)
    assert not has(items, "问问")


def test_pronoun_one_off_instruction_is_a_task() -> None:
    items, _ = fold(chat(OPEN_EN, "Forward it to my sister too, she handles the money."))
    assert not has(items, "Forward it")


def test_recap_request_and_its_qualifiers_change_nothing() -> None:
    assert recap_request("Give me the complete list of everything we agreed.")
    assert recap_request("你把我们定下来的所有要求完整列一遍。")
    assert not recap_request("每次都列一遍清单太乱了。")
    items, ex = fold(
        chat(
            OPEN_EN,
            "From now on, give me prices in euros.",
            "Great. Now give me the full, final summary of everything we settled."
            " Only what's current, skip anything we dropped.",
        )
    )
    assert has(items, "prices in euros")
    assert ex[-2].operation == "irrelevant"


# -- names, IDs, titles ---------------------------------------------------------------


def test_naming_statement_keeps_the_name() -> None:
    items, _ = fold(chat(OPEN_EN, "The guide for the walking tour is called Beatriz."))
    (item,) = [it for it in active_items(items) if "Beatriz" in it.value]
    assert item.type == "entity"


def test_zh_person_with_role_is_an_entity() -> None:
    items, _ = fold(chat(OPEN_ZH, "我们的地接导游是杨帆师傅，电话我回头发你。"), SYSTEM_ZH)
    assert has(items, "杨帆师傅")


def test_latin_name_next_to_chinese_text_is_a_name() -> None:
    items, _ = fold(chat(OPEN_ZH, "酒店那边的联系人是Maria Lopez，她会安排接机。"), SYSTEM_ZH)
    assert has(items, "Maria Lopez")


def test_id_named_by_the_word_before_it() -> None:
    assert [(v.kind, v.text) for v in extract_values("用尾号3391的卡付的")] == [("id", "3391")]
    assert [(v.kind, v.text) for v in extract_values("the card ending in 3391")] == [("id", "3391")]


def test_id_in_a_question_is_kept_as_an_entity() -> None:
    items, _ = fold(chat(OPEN_EN, "Could booking RX-20417 be the duplicate one?"))
    (item,) = [it for it in active_items(items) if "RX-20417" in it.value]
    assert item.type == "entity"


def test_quoted_title_is_named_not_said_and_a_rename_replaces_it() -> None:
    assert read_cues('The chapter is titled "Don\'t Look Back".').constraint < 3
    items, _ = fold(
        chat(
            OPEN_EN,
            'The photo book will be called "Seven Days of Tiles".',
            'We renamed it, the cover now says "Blue Doors and Custard Tarts".',
        )
    )
    assert has(items, "Blue Doors and Custard Tarts")
    assert not has(items, "Seven Days of Tiles")


# -- small building blocks ------------------------------------------------------------


def test_contractions_are_one_word() -> None:
    terms = weighted_terms("we're sure it isn't Ana's car")
    assert "re" not in terms
    assert "isn" not in terms
    assert "ana" in terms


def test_contrast_terms() -> None:
    assert contrast_terms("Sorry, it's the 21st, not the 12th.") == ("12",)
    assert contrast_terms("我说的不是红色，是蓝色。") == ("红色",)


def test_fused_statement_and_question_are_two_sentences() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "We'll be four adults and two kids.",
            "My cousin is joining, so we're five adults now, can you redo the car plan?",
        )
    )
    assert has(items, "five adults")
    assert not any("four adults" in v for v in live(items))


def test_denied_value_that_no_item_holds_is_remembered_as_superseded() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Can you forward the itinerary to Bernadette?",
            "Sorry, I meant Rosalind, not Bernadette. Bernadette is my old landlord.",
        )
    )
    (current,) = [it for it in active_items(items) if "Rosalind" in it.value]
    (denied,) = [it for it in items if it.value == "Bernadette"]
    assert denied.status == "superseded"
    assert denied.superseded_by == current.id


def test_pasted_material_is_low_ranked_data_not_rules() -> None:
    items, _ = fold(
        chat(
            OPEN_EN,
            "Here's what the caterer sent: \"Buffet for 30 guests $1,450. Must be ordered 10 days"
            ' ahead. No outside desserts allowed." What do you think?',
        )
    )
    pasted = [it for it in active_items(items) if it.source_ordinal == 2]
    assert pasted
    assert all(it.type == "fact" and it.importance < 0.5 for it in pasted)
