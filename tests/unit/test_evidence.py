"""Room for the evidence a question about the past needs (`policies.assemble.evidence`),
through the backbone assembler, with a real recall index (zh + en)."""

from __future__ import annotations

from typing import Any

import pytest

from policies.assemble.assembly import BackboneAssembler
from policies.assemble.backbone import EVIDENCE_CUT, BackboneParams
from policies.assemble.evidence import frozen_cut, order_hits
from policies.assemble.question import read_question
from policies.assemble.recall import RecallIndex
from policies.language.clip import clip_sentence
from policies.language.dates import DateLabels
from policies.language.text import term_set
from policies.types import RecallHit
from tests.unit.test_assembly import item, make_input

FILLER_EN = [
    "My sister is visiting next month with her two boys, they love the zoo.",
    "Work has been hectic, we are moving the whole team to the new office on the river.",
    "I started running again, three short loops around the park before breakfast.",
    "The basil on the windowsill finally survived a winter, I water it every second day.",
    "Our neighbour lent us his ladder so we could clear the gutters before the storm.",
    "I signed up for a pottery class on Thursday evenings at the community centre.",
]
FILLER_ZH = [
    "下个月我姐姐带两个儿子来玩，他们很喜欢动物园。",
    "最近工作特别忙，整个团队要搬到江边的新办公室。",
    "我又开始跑步了，每天早饭前绕公园跑三小圈。",
    "窗台上的罗勒终于熬过了冬天，我隔一天浇一次水。",
    "邻居借给我们梯子，暴雨前把排水槽清理干净了。",
    "我报了社区中心周四晚上的陶艺课。",
]


def conversation(first: str, fact: str, filler: list[str], reply: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful friend."}]
    messages += [{"role": "user", "content": first}, {"role": "assistant", "content": reply}]
    for text in [*filler, fact, *filler, *filler]:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    return messages


def assemble(
    messages: list[dict[str, Any]],
    question: str,
    budget: int,
    items: Any = (),
    params: BackboneParams | None = None,
) -> Any:
    messages = [*messages, {"role": "user", "content": question}]
    probe = make_input(messages, budget)
    index, labels = RecallIndex.for_conversation(), DateLabels()
    for t in probe.history:
        index.add(t.ordinal, t.text, t.role, labels.add(t.text, None))
    upto = probe.tail[0].ordinal
    by_ordinal = {t.ordinal: t for t in probe.history}
    hits = [
        RecallHit(o, by_ordinal[o].role, labels.get(o), by_ordinal[o].text, score)
        for o, score in index.search(term_set(question), limit=40, before=upto)
        if o in by_ordinal and score >= 2.0
    ]
    inp = make_input(
        messages,
        budget,
        summary_upto=upto,
        recalled=hits,
        items=items,
        names_speaker=index.speakers.names_any(question),
    )
    return BackboneAssembler(params or BackboneParams()).assemble(inp)


def text_of(ctx: Any) -> str:
    return "\n".join(str(m.get("content") or "") for m in ctx.messages)


@pytest.mark.parametrize(
    ("first", "fact", "filler", "question", "found", "date"),
    [
        (
            "[date: 3 March, 2024] Hi! Long week here.",
            "We adopted a grey kitten called Pixel yesterday, she hides under the sofa.",
            FILLER_EN,
            "When did we adopt the kitten?",
            "Pixel",
            "2 March 2024",
        ),
        (
            "[date: 2024年3月3日] 你好，这周好累。",
            "我们昨天领养了一只灰色小猫，叫芝麻，一直躲在沙发底下。",
            FILLER_ZH,
            "我们是什么时候领养的小猫？",
            "芝麻",
            "2024年3月2日",
        ),
    ],
)
def test_a_question_about_the_past_gets_its_evidence_with_its_date(
    first: str, fact: str, filler: list[str], question: str, found: str, date: str
) -> None:
    messages = conversation(first, fact, filler, "Sure, happy to help with that.")
    ctx = assemble(messages, question, 200)
    assert ctx.tokens <= 200
    sent = text_of(ctx)
    assert found in sent
    assert date in sent  # "yesterday" read against the session's own date
    # The record names the rule by which the question points back.
    assert any(c.reason == f"{EVIDENCE_CUT} (past_reference)" for c in ctx.candidates)


@pytest.mark.parametrize(
    ("first", "fact", "filler", "asked"),
    [
        (
            "[date: 3 March, 2024] Hi! Long week here.",
            "We adopted a grey kitten called Pixel yesterday, she hides under the sofa.",
            FILLER_EN,
            "Give me the complete list of everything we settled so far.",
        ),
        (
            "[date: 2024年3月3日] 你好，这周好累。",
            "我们昨天领养了一只灰色小猫，叫芝麻，一直躲在沙发底下。",
            FILLER_ZH,
            "你帮我把目前定下来的所有事情完整列一遍。",
        ),
    ],
)
def test_work_on_the_task_keeps_the_backbone(
    first: str, fact: str, filler: list[str], asked: str
) -> None:
    messages = conversation(first, fact, filler, "Sure, happy to help with that.")
    ctx = assemble(messages, asked, 200)
    assert not any(c.reason.startswith(EVIDENCE_CUT) for c in ctx.candidates)


def hit(ordinal: int, role: str, text: str, score: float) -> RecallHit:
    return RecallHit(ordinal, role, "", text, score)


def test_own_words_first_for_what_did_i_say() -> None:
    hits = [
        hit(5, "assistant", "The greenhouse should face south for the light.", 9.0),
        hit(3, "user", "I want the greenhouse behind the shed.", 6.0),
    ]
    for question in ("What did I say about the greenhouse?", "我之前说过温室放哪儿？"):
        q = read_question(question)
        ordered = order_hits(hits, q, term_set("greenhouse 温室"))
        assert ordered[0].ordinal == 3


def test_a_bridging_question_covers_each_thing_named() -> None:
    hits = [
        hit(1, "user", "Lena plays the cello in a quartet.", 9.0),
        hit(2, "user", "Lena plays the cello on Sundays too.", 8.5),
        hit(3, "user", "Marco plays drums in a garage band.", 5.0),
    ]
    q = read_question("What instruments do Lena and Marco both play?")
    ordered = order_hits(hits, q, term_set("What instruments do Lena and Marco both play?"))
    assert [h.ordinal for h in ordered[:2]] == [1, 3]
    q = read_question("莉娜和马可分别演奏什么乐器？")
    zh = [
        hit(1, "user", "莉娜在四重奏里拉大提琴。", 9.0),
        hit(2, "user", "莉娜周日也拉大提琴。", 8.5),
        hit(3, "user", "马可在车库乐队打鼓。", 5.0),
    ]
    ordered = order_hits(zh, q, term_set("莉娜和马可分别演奏什么乐器？"))
    assert [h.ordinal for h in ordered[:2]] == [1, 3]


def test_the_frozen_part_gives_way_from_its_end() -> None:
    assert frozen_cut([50, 40, 30, 20], 45) == {2, 3}
    assert frozen_cut([50, 40, 30, 20], 0) == set()
    assert frozen_cut([50, 40, 30, 20], 10_000) == {1, 2, 3}  # the first exchange stays
    assert frozen_cut([50, 40, 30, 20], 45, keep={3}) == {1, 2}  # a standing rule stays


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        (
            "The parser's test coverage, which sat at seventy-one before the long refactor "
            "that took most of the sprint and plenty of review, is now at 84%.",
            "84%",
        ),
        (
            "We looked at the flat on Friday, the agent says the owner is in a hurry and "
            "the price can move, but we will not go above 2,400 a month.",
            "not go above 2,400",
        ),
        (
            "周五去看了那套房子，中介说业主很着急，价格还可以再谈，不过最低不能低于三百万。",
            "不能低于三百万",
        ),
    ],
)
def test_a_cut_sentence_keeps_its_numbers_and_negations(sentence: str, kept: str) -> None:
    clipped = clip_sentence(sentence, 70 if sentence.isascii() else 30)
    assert kept in clipped
    assert len(clipped) <= (70 if sentence.isascii() else 30) + 1


@pytest.mark.parametrize(
    ("first", "old", "later", "new", "question", "old_date", "new_date"),
    [
        (
            "[date: 3 March, 2024] Hi! Long week here.",
            "We will paint the bedroom sage green.",
            "[date: 10 March, 2024] Back again.",
            "Let's do the bedroom in navy instead.",
            "Did I change my mind about the bedroom colour?",
            "3 March, 2024",
            "10 March, 2024",
        ),
        (
            "[date: 2024年3月3日] 你好，这周好累。",
            "卧室刷成浅绿色。",
            "[date: 2024年3月10日] 我又来了。",
            "卧室还是改成深蓝色吧。",
            "卧室的颜色一开始是怎么说的？",
            "2024年3月3日",
            "2024年3月10日",
        ),
    ],
)
def test_a_change_of_mind_shows_both_statements_with_their_dates(
    first: str, old: str, later: str, new: str, question: str, old_date: str, new_date: str
) -> None:
    filler = FILLER_ZH if "卧室" in old else FILLER_EN
    reply = "Sure, happy to help with that."
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful friend."}]
    for text in [first, old, *filler, later, *filler, new, *filler]:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    o_old = 1 + 2 * 1
    o_new = 1 + 2 * (3 + 2 * len(filler))
    assert messages[o_old]["content"] == old
    assert messages[o_new]["content"] == new
    items = [
        item("a", old, o_old, "preference", status="superseded", superseded_by="b"),
        item("b", new, o_new, "preference"),
    ]
    ctx = assemble(messages, question, 260, items)
    recalled = next(str(m["content"]) for m in ctx.messages if "Earlier turns" in str(m["content"]))
    assert f"[{old_date}] user: {old}" in recalled
    assert f"[{new_date}] user: {new}" in recalled


@pytest.mark.parametrize(
    ("rule", "fact", "filler", "question"),
    [
        (
            "From now on, always answer me in short bullet points.",
            "We adopted a kitten yesterday.",
            FILLER_EN,
            "When did we adopt the kitten?",
        ),
        (
            "以后回答我都用简短的要点列出来。",
            "我们昨天领养了一只灰色小猫，叫芝麻，一直躲在沙发底下。",
            FILLER_ZH,
            "我们是什么时候领养的小猫？",
        ),
    ],
)
def test_a_standing_rule_stays_when_the_frozen_part_gives_way(
    rule: str, fact: str, filler: list[str], question: str
) -> None:
    messages = conversation("Hi!", fact, filler, "Sure.")
    at = len(messages) - 2  # the last frozen exchange: the first to give way
    assert messages[at]["role"] == "user"
    messages[at] = {"role": "user", "content": rule}
    plain = assemble(messages, question, 200)
    kept = assemble(messages, question, 200, [item("r", rule, at, "directive")])
    assert any(c.reason.startswith(EVIDENCE_CUT) for c in kept.candidates)
    assert rule not in text_of(plain)
    assert rule in text_of(kept)


def _between_two(fact: str) -> list[dict[str, Any]]:
    """A chat between two friends, the second replayed as the assistant, who
    is addressed by name; `fact` is one of the second friend's turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Two friends catch up."}]
    turns = [
        ("user", "Hey Robin, how was your week?"),
        ("assistant", fact),
        *[(role, text) for text in FILLER_EN for role in ("user", "assistant")],
        ("user", "Thanks, Robin! Talk soon."),
        ("assistant", "Anytime, see you soon."),
        *[(role, text) for text in FILLER_EN for role in ("user", "assistant")],
    ]
    return messages + [{"role": role, "content": text} for role, text in turns]


@pytest.mark.parametrize(
    ("question", "points_back"),
    [
        # Present tense, but about a speaker of the conversation: what they said.
        ("What does Robin carve in the workshop?", True),
        # The same shape about someone nobody was addressed as: advice or a
        # fact of the task, the backbone serves it.
        ("What does Morgan carve in the workshop?", False),
        # Addressing the speaker is not asking about them.
        ("Robin, what should I carve next in the workshop?", False),
        ("Thanks, Robin! What should I carve next in the workshop?", False),
    ],
)
def test_a_question_about_a_speaker_points_back(question: str, points_back: bool) -> None:
    fact = "I carve little wooden owls in the workshop on Saturdays, they sell at the market."
    ctx = assemble(_between_two(fact), question, 220)
    assert ctx.tokens <= 220
    cut = {c.reason for c in ctx.candidates if c.reason.startswith(EVIDENCE_CUT)}
    assert cut == ({f"{EVIDENCE_CUT} (names_speaker)"} if points_back else set())
    if points_back:
        assert "wooden owls" in text_of(ctx)
