"""Recall: incremental BM25 over a session's turns (en words, CJK bigrams), dated snippets."""

from __future__ import annotations

from policies.dates import DateLabels, day_label, marker_date
from policies.layers import RECALL_HEADER, plan_recall
from policies.recall import RecallIndex, snippet
from policies.text import term_set
from policies.types import RecallHit

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
    assert marker_date("[date: 1:56 pm on 8 May, 2023] Hey Mel!") == "8 May 2023"
    assert marker_date("[2023-05-08] hi") == "2023-05-08"
    assert marker_date("I met her on 8 May 2023") is None
    labels = DateLabels()
    day = 1_700_000_000.0
    assert labels.add("hello", day) == day_label(day) == "2023-11-14"
    assert labels.add("[date: 8 May, 2023] new session", day) == "8 May 2023"
    assert labels.add("a later turn of that session", day) == "8 May 2023"
    labels.truncate(1)
    assert len(labels) == 1
    assert labels.get(1) == ""


def test_recalled_turns_are_dated_and_shown_in_conversation_order() -> None:
    hits = [
        RecallHit(40, "user", "8 May 2023", "We adopted a cat named Oscar last week.", 9.0),
        RecallHit(12, "assistant", "2 May 2023", "Oscar? I thought the cat was called Luna.", 5.0),
    ]
    gen = plan_recall(hits, term_set("cat name"), 200, 400, lambda t: len(t) // 4 + 1, None)
    (content,) = gen.contents
    lines = content.splitlines()
    assert lines[0] == RECALL_HEADER
    assert lines[1].startswith("[2 May 2023] assistant: Oscar?")
    assert lines[2].startswith("[8 May 2023] user: We adopted")
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
