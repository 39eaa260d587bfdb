"""Rolling summary: incremental chunks, protected content verbatim, dates, stale values."""

from __future__ import annotations

import itertools
from typing import Any

from policies.assemble.summary import (
    SUMMARY_HEADER,
    DatedTurn,
    RuleSummarizer,
    fit_chunks,
    render_chunks,
    summary_tokens,
    trim_chunks,
)
from policies.memory.staleness import StaleFilter
from policies.types import ItemVersion, MemoryItem, SummaryChunk, Turn


def count(text: str) -> int:
    return len(text) // 4 + 1


def turn(ordinal: int, role: str, text: str) -> Turn:
    return Turn(ordinal, role, text, {"role": role, "content": text}, count(text) + 4)


def dated(turns: list[Turn], date: str = "2024-05-08") -> list[DatedTurn]:
    return [DatedTurn(t, date) for t in turns]


def item(id_: str, value: str, ordinal: int, **kw: Any) -> MemoryItem:
    kw.setdefault("type", "constraint")
    return MemoryItem(id=id_, slot=id_, value=value, source="user", source_ordinal=ordinal, **kw)


CHAT = [
    turn(
        0, "user", "Hi! Thanks so much, haha. We land at Kansai on April 3 and fly home April 17."
    ),
    turn(1, "assistant", "Great, that gives you 14 nights. Exciting!"),
    turn(2, "user", "Tell me a joke please."),
    turn(3, "assistant", "Why did the train stop? It was tired."),
    turn(4, "user", "Our budget is capped at 2400 euros. Never book ferries, Lena gets seasick."),
]


def test_protected_sentences_are_kept_verbatim_and_chitchat_dropped() -> None:
    chunk = RuleSummarizer().summarize([], dated(CHAT), 0, 5)
    text = "\n".join(render_chunks([chunk]))
    assert "We land at Kansai on April 3 and fly home April 17." in text
    assert "Our budget is capped at 2400 euros." in text
    assert "Never book ferries, Lena gets seasick." in text
    assert "joke" not in text
    assert "haha" not in text.lower()
    assert all(line.protected for line in chunk.lines if line.role == "user")
    assert text.startswith(f"{SUMMARY_HEADER}\n[2024-05-08] user:")


def test_summary_is_incremental_earlier_chunks_stay_byte_identical() -> None:
    summarizer = RuleSummarizer()
    first = summarizer.summarize([], dated(CHAT[:3]), 0, 3)
    second = summarizer.summarize([first], dated(CHAT[3:], "2024-05-09"), 3, 5)
    assert (second.start, second.upto) == (3, 5)
    assert {ln.ordinal for ln in second.lines} <= {3, 4}
    one = render_chunks([first])
    both = render_chunks([first, second])
    assert both[0] == one[0]  # the old chunk's message is untouched
    assert both[1].startswith("[2024-05-09] user: Our budget")


def test_superseded_value_is_annotated_with_the_current_one_on_the_same_line() -> None:
    old = item("old", "We're planning a 12-month lease, mostly to keep the rent fixed.", 0)
    new = item("new", "So we'll take a 6-month lease instead.", 6, replaces="12-month lease")
    old.status, old.superseded_by = "superseded", "new"
    turns = [
        turn(0, "user", "We're planning a 12-month lease, mostly to keep the rent fixed."),
        turn(1, "assistant", "Noted: a 12-month lease keeps the rent fixed for longer."),
    ]
    chunk = RuleSummarizer().summarize([], dated(turns), 0, 2)
    lines = "\n".join(render_chunks([chunk], StaleFilter([old, new]))).splitlines()
    stale = [ln for ln in lines if "12-month" in ln]
    assert stale, lines
    assert all("6-month lease" in ln for ln in stale)
    # The assistant's restatement is dropped rather than annotated.
    assert not any(ln.startswith("assistant:") for ln in lines)


def test_every_old_value_of_a_long_revision_chain_names_the_current_one() -> None:
    # A slot revised many times: each old value points at the next, the last is live.
    values = [f"The venue holds {100 + 10 * k} guests." for k in range(30)]
    items = [item(f"v{k}", v, k) for k, v in enumerate(values)]
    for older, newer in itertools.pairwise(items):
        older.status, older.superseded_by = "superseded", newer.id
    cycle = [item("a", "The caterer is Bianchi.", 40), item("b", "The caterer is Rossi.", 41)]
    cycle[0].status, cycle[0].superseded_by = "superseded", "b"
    cycle[1].status, cycle[1].superseded_by = "superseded", "a"  # corrupt: no live end
    for _ in range(2):  # a filter rebuilt from the same items answers the same
        stale = StaleFilter([*reversed(items), *cycle])
        for value in values[:-1]:
            assert stale.clean([value]) == [f"{value} (later changed: {values[-1]})"]
        assert stale.clean([values[-1]]) == [values[-1]]
        assert stale.clean(["The caterer is Bianchi."]) == []


def test_revoked_rule_and_its_withdrawal_leave_the_summary() -> None:
    rule = item("r", "From now on, end every answer with a packing tip.", 1, type="directive")
    rule.status = "revoked"
    rule.versions.append(ItemVersion(3, "active", rule.value, "revoked: stop"))
    turns = [
        turn(1, "user", "From now on, end every answer with a packing tip."),
        turn(3, "user", "You can stop adding packing tips now. The budget is 900 euros."),
    ]
    chunk = RuleSummarizer().summarize([], dated(turns), 0, 4)
    text = "\n".join(render_chunks([chunk], StaleFilter([rule])))
    assert "packing" not in text
    assert "The budget is 900 euros." in text


def test_trim_keeps_the_highest_scoring_lines_within_target() -> None:
    turns = [
        turn(i, "user", f"Requirement {i}: the limit is {100 + i} euros, never more.")
        for i in range(30)
    ]
    chunk = RuleSummarizer().summarize([], dated(turns), 0, 30)
    full = summary_tokens(render_chunks([chunk]), count)
    (merged,) = trim_chunks([chunk], full // 3, count)
    assert summary_tokens(render_chunks([merged]), count) <= full // 3
    assert 0 < len(merged.lines) < len(chunk.lines)
    assert [ln.ordinal for ln in merged.lines] == sorted(ln.ordinal for ln in merged.lines)
    texts, tokens, dropped = fit_chunks([chunk], full // 2, count)
    assert tokens <= full // 2
    assert dropped > 0
    assert fit_chunks([chunk], full // 2, count) == (texts, tokens, dropped)  # deterministic


def test_summary_chunk_round_trips_through_store_rows() -> None:
    from proxy.store.repo import chunk_from_row, chunk_to_row

    chunk = RuleSummarizer().summarize([], dated(CHAT), 0, 5)

    class Row:
        def __init__(self, data: dict[str, Any]) -> None:
            self.__dict__.update(data)

    row = Row(chunk_to_row("S", chunk, "text", 10, 0.0))
    assert chunk_from_row(row) == chunk


def test_empty_input_gives_an_empty_chunk() -> None:
    assert RuleSummarizer().summarize([], [], 4, 4) == SummaryChunk(4, 4, (), "rules")
