"""Long-term memory policies: what is consolidated, how rows merge, what is backfilled."""

from __future__ import annotations

from itertools import count
from typing import Any

from policies.assemble.generated import REPLAY_HEADER
from policies.longterm.backfill import BACKFILL_HEADER, Backfill, place_backfill, plan_backfill
from policies.longterm.candidates import Pick, consolidation_candidates
from policies.longterm.items import LongTermItem
from policies.longterm.merge import merge_items
from policies.longterm.params import LongTermParams
from policies.longterm.relevance import BackfillQuery
from policies.longterm.retire import retire_revoked
from policies.memory.reducer import rollback
from policies.types import AssembledContext, MemoryItem, Section, Turn
from tests.unit.extraction_support import fold_messages

SYSTEM = "You are a helpful assistant."
DAY = 1_790_000_000.0  # 2026-09-21 UTC


def turns_of(messages: list[tuple[str, str]]) -> list[Turn]:
    return [
        Turn(i, role, text, {"role": role, "content": text}, len(text) // 4)
        for i, (role, text) in enumerate(messages)
    ]


def consolidate(
    messages: list[tuple[str, str]],
    existing: list[LongTermItem] | None = None,
    session: str = "s1",
    now: float = DAY,
) -> tuple[list[LongTermItem], list[MemoryItem]]:
    """Fold a conversation, consolidate it; returns every row after, and the session items."""
    items, _ = fold_messages(messages, SYSTEM)
    turns = turns_of(messages)
    ids = count(1)
    rows = {r.id: r for r in existing or []}
    for r in retire_revoked(
        list(rows.values()),
        session_id=session,
        items=items,
        new_user_turns=[t for t in turns if t.role == "user"],
        since=0,
        now=now,
    ):
        rows[r.id] = r
    picks = consolidation_candidates(items, turns)
    for r in merge_items(
        [r for r in rows.values() if r.status == "active"],
        picks,
        session_id=session,
        items=items,
        now=now,
        new_id=lambda: f"{session}-lt{next(ids)}",
    ):
        rows[r.id] = r
    return list(rows.values()), items


def active_values(rows: list[LongTermItem]) -> list[str]:
    return sorted(r.value for r in rows if r.status == "active")


def test_user_rules_and_resolved_changes_are_kept_goals_and_chat_are_not() -> None:
    rows, _ = consolidate(
        [
            ("user", "I'm planning a weekend in Lisbon next month."),
            ("assistant", "Lovely! Lisbon is great in spring."),
            ("user", "Always book non-smoking rooms for me."),
            ("user", "周三前送达"),
            ("user", "不用周三前了，改成周五"),
            ("user", "Thanks!"),
        ]
    )
    kinds = {r.value: r.kind for r in rows}
    assert kinds == {
        "Always book non-smoking rooms for me.": "rule",
        "不用周三前了，改成周五": "rule",
    }
    friday = next(r for r in rows if "周五" in r.value)
    assert [v.value for v in friday.history] == ["周三前送达"]  # the resolved conflict


def test_a_fact_is_kept_once_the_user_repeats_it() -> None:
    said_once = [
        ("user", "I need a desk lamp delivered."),
        ("user", "My order number is HK-55817."),
    ]
    rows, _ = consolidate(said_once)
    assert rows == []
    rows, _ = consolidate([*said_once, ("user", "Any news on HK-55817?")])
    assert [(r.kind, r.value) for r in rows] == [("entity", "My order number is HK-55817.")]


def test_assistant_conclusions_need_the_users_confirmation() -> None:
    item = MemoryItem("a1", "inferred", "inferred:ship", "Express suits you.", "assistant", 1)
    chat = [("user", "Which shipping?"), ("assistant", "Express suits you.")]
    assert consolidation_candidates([item], turns_of(chat)) == []
    picks = consolidation_candidates([item], turns_of([*chat, ("user", "Yes, sounds good.")]))
    assert [(p.item.id, p.kind) for p in picks] == [("a1", "confirmed")]


def test_a_restatement_elsewhere_confirms_the_row_and_a_new_value_replaces_it() -> None:
    rows, _ = consolidate([("user", "Hi."), ("user", "From now on, reply in French.")])
    again, _ = consolidate(
        [("user", "Hello."), ("user", "From now on, reply in French.")], rows, "s2", DAY + 60
    )
    assert len(again) == 1
    assert again[0].confirmations == 2
    assert again[0].source_session_id == "s2"
    assert again[0].last_confirmed == DAY + 60
    assert again[0].first_seen == DAY
    german, _ = consolidate(
        [("user", "Hey."), ("user", "Reply in German from now on.")], again, "s3", DAY + 120
    )
    assert active_values(german) == ["Reply in German from now on."]
    assert [v.value for v in german[0].history] == ["From now on, reply in French."]


def test_a_revocation_in_a_later_conversation_retires_the_rule_only() -> None:
    rows, _ = consolidate(
        [("user", "Hi."), ("user", "From now on, reply in French."), ("user", "I'm vegetarian.")]
    )
    after, _ = consolidate([("user", "Hello."), ("user", "Stop replying in French.")], rows, "s2")
    assert active_values(after) == ["I'm vegetarian."]
    retired = next(r for r in after if r.status == "revoked")
    assert retired.history[-1].note.startswith("revoked in conversation s2")


def test_a_rule_revoked_in_its_own_conversation_is_retired_and_not_kept() -> None:
    first = [("user", "Hi."), ("user", "From now on, end every answer with a packing tip.")]
    rows, _ = consolidate(first)
    assert active_values(rows) == ["From now on, end every answer with a packing tip."]
    rows, _ = consolidate([*first, ("user", "You can stop adding packing tips now.")], rows)
    assert active_values(rows) == []


# --- backfill -------------------------------------------------------------------------


def row(rid: str, value: str, *, kind: Any = "rule", type_: Any = "directive", slot: str = "x",
        session: str = "old") -> LongTermItem:  # fmt: skip
    return LongTermItem(rid, kind, type_, slot, value, session, "i1", session, DAY, DAY)


def words(text: str) -> int:
    return len(text.split()) + len(text) // 8


def plan(rows: list[LongTermItem], text: str, *, cap: int = 500, items: Any = (),
         session: str = "now", **params: Any) -> Backfill:  # fmt: skip
    query = BackfillQuery(text=text, items=items, system=SYSTEM, session_id=session)
    return plan_backfill(rows, query, cap, LongTermParams(**params), words)


STORE = [
    row("r1", "Always book non-smoking rooms for me."),
    row("r2", "I'm vegetarian.", type_="constraint", slot="diet"),
    row("r3", "以后订酒店都选无烟房。"),
    row("r4", "From now on, reply in French.", slot="language"),
]


def test_only_items_relevant_to_the_input_are_backfilled_and_labelled() -> None:
    out = plan(STORE[:3], "Please book a hotel room in Porto.")
    assert out.item_ids == ["r1"]
    assert out.contents == [
        f"{BACKFILL_HEADER}\n- long-term rule, from an earlier conversation on 2026-09-21: "
        "Always book non-smoking rooms for me."
    ]
    assert plan(STORE[:3], "帮我订一下杭州的酒店").item_ids == ["r3"]
    nothing = plan(STORE[:3], "How do Python list comprehensions work?")
    assert nothing.contents == []
    assert nothing.tokens == 0
    assert [c.reason for c in nothing.candidates] == ["no term in common"]


def test_threshold_max_items_and_cap_bound_the_block() -> None:
    menu = "Suggest a vegetarian dinner near our rooms."  # all of r2, a third of r1
    both = plan(STORE[:2], menu)
    assert both.item_ids == ["r2", "r1"]  # best first
    assert plan(STORE[:2], menu, max_items=1).item_ids == ["r2"]
    strict = plan(STORE[:2], menu, min_score=0.5)
    assert strict.item_ids == ["r2"]
    assert [c.reason[:15] for c in strict.candidates if c.decision == "dropped"] == [
        "below min_score"
    ]
    assert plan(STORE[:2], menu, cap=10).contents == []


def test_reply_language_applies_to_any_conversation() -> None:
    assert plan(STORE, "How do Python list comprehensions work?").item_ids == ["r4"]
    assert plan(STORE, "Python list comprehensions?", global_slots=()).item_ids == []


def test_rows_from_this_conversation_or_already_in_its_memory_are_not_repeated() -> None:
    assert plan(STORE[:1], "Book a hotel room.", session="old").item_ids == []
    said = [("user", "Hi."), ("user", "Always book non-smoking rooms for me.")]
    items, _ = fold_messages(said, "")
    out = plan(STORE[:1], "Book a hotel room.", items=items)
    assert out.item_ids == []
    assert [c.reason for c in out.candidates] == ["already in this conversation's memory"]


def test_the_current_conversation_wins_and_both_are_shown_in_order() -> None:
    standard = row("r5", "Please always ship my orders by standard shipping, never express.")
    items, _ = fold_messages([("user", "Use express shipping instead for this order.")], "")
    out = plan([standard], "Use express shipping instead for this order.", items=items)
    assert out.conflicts == {"r5": "Use express shipping instead for this order."}
    assert out.contents[0].endswith(
        "usually: Please always ship my orders by standard shipping, never express.; "
        "this conversation: Use express shipping instead for this order."
    )
    # A request on the same subject that says nothing else about it is no conflict.
    porto = "Book a hotel room in Porto for two nights."
    items, _ = fold_messages([("user", porto)], "")
    assert plan(STORE[:1], porto, items=items).conflicts == {}


def test_a_rule_the_current_input_revokes_is_not_shown() -> None:
    out = plan(STORE[:1], "No need for non-smoking rooms this time, book any room.")
    assert out.item_ids == []
    assert [c.reason for c in out.candidates] == ["revoked by the current input"]


def test_place_backfill_goes_before_the_replay_and_counts_within_the_budget() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "earlier"},
        {"role": "system", "content": f"{REPLAY_HEADER}\n- rule"},
        {"role": "user", "content": "now"},
    ]
    ctx = AssembledContext(
        messages=list(messages),
        tokens=40,
        budget=80,
        sections=[
            Section("system", 10),
            Section("recent", 10),
            Section("replay", 10),
            Section("tail", 10),
        ],
        passthrough=True,
    )
    block = Backfill(contents=["background"], tokens=15, item_ids=["r1"])
    out = place_backfill(ctx, block, tail_count=1, budget=100)
    assert [m["content"] for m in out.messages][2:4] == ["background", messages[2]["content"]]
    assert [s.name for s in out.sections] == ["system", "recent", "longterm", "replay", "tail"]
    assert (out.tokens, out.budget, out.passthrough) == (55, 100, False)


def test_consolidating_the_same_conversation_again_changes_nothing() -> None:
    chat = [
        ("user", "Hi."),
        ("user", "From now on, reply in French."),
        ("user", "Also, from now on use tables for comparisons."),
        ("user", "My order number is HK-55817."),
        ("user", "Any news on HK-55817?"),
    ]
    older = [row("o1", "From now on, answer in French please.", slot="language")]
    rows, items = consolidate(chat, older)
    assert rows
    turns = turns_of(chat)
    again = merge_items(
        [r for r in rows if r.status == "active"],
        consolidation_candidates(items, turns),
        session_id="s1",
        items=items,
        now=DAY + 5,
        new_id=lambda: "never",
    )
    assert again == []


def test_a_fact_on_a_rules_slot_neither_replaces_nor_contradicts_it() -> None:
    french = row("r6", "From now on, reply in French.", slot="language")
    fact = MemoryItem("f1", "fact", "language", "I'm learning Japanese.", "user", 0)
    picks = [Pick(fact, "entity")]
    merged = merge_items(
        [french], picks, session_id="s9", items=[fact], now=DAY, new_id=lambda: "n1"
    )
    assert [(r.id, r.value) for r in merged] == [("n1", "I'm learning Japanese.")]
    out = plan([french], "Any tips for learning Japanese?", items=[fact])
    assert out.item_ids == ["r6"]
    assert out.conflicts == {}


def test_a_rule_whose_turn_was_rolled_back_is_retired() -> None:
    chat = [("user", "Hi."), ("user", "From now on, reply in French.")]
    rows, items = consolidate(chat)
    assert active_values(rows) == ["From now on, reply in French."]
    kept = rollback(items, 1)  # the client went back to before its turn
    retired = retire_revoked(
        rows, session_id="s1", items=kept, new_user_turns=[], since=1, now=DAY + 1
    )
    assert [(r.status, r.history[-1].note) for r in retired] == [
        ("revoked", "its turn was discarded in its conversation")
    ]


def test_a_chinese_request_overrides_a_long_term_rule_and_both_are_shown() -> None:
    standard = row("z1", "以后寄快递都用普通快递，不要加急。")
    now = "这次寄快递用加急吧。"
    items, _ = fold_messages([("user", now)], "")
    out = plan([standard], now, items=items)
    assert out.contents[0].endswith(f"usually: {standard.value}; this conversation: {now}")
