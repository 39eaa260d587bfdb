"""Recall: incremental BM25 over a session's turns (en words, CJK bigrams), dated snippets."""

from __future__ import annotations

from policies.assemble.generated import RECALL_HEADER
from policies.assemble.quoted_turns import plan_recall
from policies.assemble.recall import RecallIndex
from policies.assemble.recall_snippets import companion, snippet
from policies.language.dates import DateLabels, day_label, marker_date, strip_markers
from policies.language.text import term_set
from policies.types import RecallHit, Turn

FILLER = [
    "How was your weekend? Mine was quiet, we went for a walk.",
    "The weather has been lovely, lots of sun and a bit of wind.",
    "I watched a film yesterday, it was fine but too long.",
]


def filled_index(n: int = 300) -> RecallIndex:
    index = RecallIndex()
    for i in range(n):
        index.add(i, FILLER[i % 3] + f" (note {i})")
    return index


def test_a_rare_term_finds_the_old_turn_among_hundreds() -> None:
    index = filled_index()
    index.add(300, "The booking reference for the Kanra hotel is HK-55817.")
    for i in range(301, 600):
        index.add(i, FILLER[i % 3])
    hits = index.search(term_set("what was the Kanra booking reference?"), limit=3)
    assert hits[0][0] == 300
    assert hits[0][1] > 2 * (hits[1][1] if len(hits) > 1 else 0)
    assert index.search(term_set("HK-55817"), limit=1)[0][0] == 300


def test_cjk_bigrams_are_searchable() -> None:
    index = filled_index(50)
    index.add(50, "孩子对花生过敏，所有菜谱都不能有花生酱。")
    index.add(51, "今天天气不错，我们去公园散步了。")
    hits = index.search(term_set("花生酱能吃吗"), limit=2)
    assert hits
    assert hits[0][0] == 50


def test_index_is_incremental_and_cut_back_on_a_rewind() -> None:
    index = RecallIndex()
    index.add(0, "alpha bravo")
    index.add(1, "charlie delta")
    index.add(2, "alpha echo")
    assert index.next_ordinal == 3
    assert {o for o, _ in index.search(["alpha"], limit=5)} == {0, 2}
    assert [o for o, _ in index.search(["alpha"], limit=5, before=2)] == [0]
    index.truncate(1)
    assert index.next_ordinal == 1
    assert len(index) == 1
    assert index.search(["charlie"], limit=5) == []
    index.add(1, "foxtrot")
    assert index.search(["foxtrot"], limit=1)[0][0] == 1


def test_dates_come_from_session_markers_else_the_stored_day() -> None:
    assert marker_date("[date: 1:56 pm on 8 May, 2023] Hey Mel!") == "8 May, 2023"
    assert marker_date("[2023-05-08] hi") == "2023-05-08"
    assert marker_date("I met her on 8 May 2023") is None
    labels = DateLabels()
    day = 1_700_000_000.0
    assert labels.add("hello", day) == day_label(day) == "2023-11-14"
    assert labels.add("[date: 8 May, 2023] new session", day) == "8 May, 2023"
    assert labels.add("a later turn of that session", day) == "8 May, 2023"
    labels.truncate(1)
    assert len(labels) == 1
    assert labels.get(1) == ""


def test_recalled_turns_are_dated_and_shown_in_conversation_order() -> None:
    hits = [
        RecallHit(40, "user", "8 May, 2023", "We adopted a cat named Oscar last week.", 9.0),
        RecallHit(12, "assistant", "2 May 2023", "Oscar? I thought the cat was called Luna.", 5.0),
    ]
    gen = plan_recall(hits, term_set("cat name"), 200, 400, lambda t: len(t) // 4 + 1, None)
    (content,) = gen.contents
    lines = content.splitlines()
    assert lines[0] == RECALL_HEADER
    assert lines[1].startswith("[2 May 2023] assistant: Oscar?")
    assert lines[2].startswith("[8 May, 2023] user: We adopted")
    assert {c.decision for c in gen.candidates} == {"recalled"}
    tight = plan_recall(hits, term_set("cat"), 25, 400, lambda t: len(t) // 4 + 1, None)
    assert tight.tokens <= 25


def test_snippet_keeps_the_sentences_that_match_the_input() -> None:
    text = " ".join(
        [f"Sentence {i} is about nothing in particular." for i in range(20)]
        + ["The wifi password is swordfish."]
    )
    cut = snippet(text, term_set("wifi password"), 120)
    assert "The wifi password is swordfish." in cut
    assert sum(len(s) + 1 for s in cut) <= 120


def count(text: str) -> int:
    return len(text) // 4 + 1


def test_word_forms_match_plurals_and_tenses() -> None:
    index = filled_index(50)
    index.add(50, "She adopted two puppies and started painting again.")
    for query in ("adopt puppy", "paintings", "who paints?", "adopting"):
        assert index.search(term_set(query), limit=1)[0][0] == 50, query


def test_a_name_used_to_address_the_listener_is_not_indexed() -> None:
    index = RecallIndex()
    for i in range(20):
        index.add(i, f"Thanks, Melanie! That's lovely, see you soon. ({i})")
    index.add(20, "Melanie finally finished her pottery course.")
    hits = index.search(term_set("What did Melanie finish?"), limit=3)
    assert [o for o, _ in hits] == [20]


def test_session_date_carries_over_from_a_marker_inside_a_turn() -> None:
    labels = DateLabels()
    labels.add("[date: 8 May, 2023] first session", 0)
    # A client merged the last turn of one session with the first of the next.
    assert labels.add("see you!\n[date: 20 May, 2023] back again", 0) == "8 May, 2023"
    assert labels.add("a turn of the second session", 0) == "20 May, 2023"
    labels.truncate(1)  # the merged turn is rolled back: its marker goes with it
    assert labels.add("a turn of the first session", 0) == "8 May, 2023"
    text = "[date: 8 May, 2023] Hi!\n[date: 9 May, 2023] Hello again"
    assert strip_markers(text) == "Hi!\nHello again"


def test_recalled_question_brings_its_reply_and_an_answer_its_question() -> None:
    q = (4, "assistant", "[date: 1 June, 2023] Nice. What do you do to relax?")
    a = (5, "user", "I play the violin every evening. It calms me down. Also, long story.")
    got = companion(q[2], None, a, 40)
    assert got is not None
    assert got.ordinal == 5
    assert got.sentences == ["I play the violin every evening."]
    back = companion(a[2], q, None, 200)
    assert back is not None
    assert (back.ordinal, back.sentences) == (4, ["What do you do to relax?"])
    assert companion("I like tea.", None, a, 100) is None  # no question: nothing to complete

    turns = {o: Turn(o, r, t, {"role": r, "content": t}, count(t)) for o, r, t in (q, a)}
    hit = RecallHit(4, "assistant", "1 June 2023", q[2], 6.0)
    gen = plan_recall([hit], term_set("relax"), 200, 400, count, None, turns.get)
    lines = gen.contents[0].splitlines()
    assert lines[1] == "[1 June 2023] assistant: Nice. What do you do to relax?"
    assert lines[2].startswith("[1 June 2023] user: I play the violin every evening.")
    assert {c.ref: c.decision for c in gen.candidates} == {"4": "recalled", "5": "recalled"}
    alone = plan_recall([hit], term_set("relax"), 200, 400, count, None)
    assert len(alone.contents[0].splitlines()) == 2


def conversation(turns: list[tuple[str, str]]) -> RecallIndex:
    index = RecallIndex.for_conversation()
    for i, (role, text) in enumerate(turns):
        index.add(i, text, role)
    return index


def test_a_reply_is_found_by_the_question_it_answers() -> None:
    turns = [("user", FILLER[i % 3]) for i in range(40)]
    turns += [
        ("user", "So what does your brother do for a living these days?"),
        ("assistant", "He repairs harpsichords, mostly for churches and music schools."),
    ]
    turns += [("user", FILLER[i % 3]) for i in range(40)]
    index = conversation(turns)
    # The reply never says "brother" or "living"; the question before it does.
    hits = index.search(term_set("What does the brother do for a living?"), limit=3)
    assert 41 in [o for o, _ in hits[:2]]
    without = RecallIndex()
    for i, (_, text) in enumerate(turns):
        without.add(i, text)
    assert 41 not in [o for o, _ in without.search(term_set("brother living"), limit=3)]


def test_a_turn_is_read_with_the_one_after_it_less_than_with_the_one_before() -> None:
    index = conversation(
        [
            ("user", "We planted tomatoes."),
            ("assistant", "Nice, how about basil?"),
            ("user", "Basil too, by the porch."),
        ]
    )
    # Turn 1 holds "basil" itself; turn 2 too; turn 0 only through turn 1 (after).
    scores = dict(index.search(term_set("tomatoes"), limit=3))
    assert scores[0] > scores[1] > 0  # turn 1 has it through the turn before it
    assert 2 not in scores  # two turns away: not part of the turn's context


def test_a_query_naming_a_speaker_prefers_that_speakers_turns() -> None:
    turns = [
        ("user", "Thanks, Priya! I went kayaking on the lake last weekend."),
        ("assistant", "Fun, Tom! I went kayaking on the river with my cousins."),
        ("user", "Sounds great, Priya."),
        ("assistant", "It was."),
    ]
    index = conversation(turns)
    # Tom calls the assistant Priya, so Priya's kayaking is the assistant's turn.
    assert index.speakers.role_named(term_set("Where did Priya go kayaking?")) == "assistant"
    assert index.speakers.role_named(term_set("Where did Tom go kayaking?")) == "user"
    assert index.search(term_set("Where did Priya go kayaking?"), limit=1)[0][0] == 1
    assert index.search(term_set("Where did Tom go kayaking?"), limit=1)[0][0] == 0
    # A name both sides are addressed by says nothing about who spoke.
    both = [("user", "Morning, Sam."), ("assistant", "Morning, Sam.")] * 2
    assert conversation(both).speakers.role_named(term_set("Sam")) is None


def test_a_rewind_takes_back_neighbour_weights_and_speaker_names() -> None:
    turns = [
        ("user", "Hi Sam! The cabin is booked for June."),
        ("assistant", "Great, Alex. Which lake?"),
        ("user", "Lake Tahoe, the north shore."),
        ("assistant", "Lovely, Alex, bring a kayak."),
    ]
    full = conversation(turns)
    full.truncate(2)
    fresh = conversation(turns[:2])
    for query in ("cabin June", "lake Tahoe", "kayak", "Which lake Alex", "Sam"):
        assert rounded(full, query) == rounded(fresh, query)
        named = term_set(query)
        assert full.speakers.role_named(named) == fresh.speakers.role_named(named)
    full.add(2, "Lake Tahoe, the north shore.", "user")
    assert rounded(full, "lake shore") == rounded(conversation(turns[:3]), "lake shore")


def rounded(index: RecallIndex, query: str) -> list[tuple[int, float]]:
    return [(o, round(s, 9)) for o, s in index.search(term_set(query), limit=5)]


def test_a_turn_is_found_by_the_day_it_was_said() -> None:
    index = RecallIndex.for_conversation()
    for i in range(30):
        date = "3 March, 2023" if i < 15 else "9 June, 2023"
        index.add(i, FILLER[i % 3] + " We talked about the garden.", "user", date)
    # Only the day tells these turns apart.
    hits = index.search(term_set("What did we say about the garden in June 2023?"), limit=5)
    assert hits
    assert all(o >= 15 for o, _ in hits)
    hits = index.search(term_set("the garden in March"), limit=5)
    assert hits
    assert all(o < 15 for o, _ in hits)
    # A date alone is not a turn: a text with no terms is not indexed.
    index.add(30, "!!", "user", "9 June, 2023")
    assert len(index) == 30
