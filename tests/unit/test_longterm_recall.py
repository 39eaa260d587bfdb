"""Long-term memory: retrieval by meaning, conflicts on a kind of choice, and what
deleting a conversation takes back. Pure policies; vectors are written by hand."""

from __future__ import annotations

import math
from typing import Any

from policies.language.value_kinds import choices, other_choice
from policies.longterm.backfill import Backfill, plan_backfill
from policies.longterm.items import LongTermItem, LongTermVersion
from policies.longterm.params import LongTermParams
from policies.longterm.relevance import BackfillQuery, cosine
from policies.longterm.retire import forget_session
from tests.unit.extraction_support import fold_messages

DAY = 1_790_000_000.0  # 2026-09-21 UTC
MODEL = "embedder"


def unit(*xs: float) -> tuple[float, ...]:
    norm = math.sqrt(sum(x * x for x in xs))
    return tuple(x / norm for x in xs)


def row(rid: str, value: str, *, vector: tuple[float, ...] | None = None, model: str = MODEL,
        kind: Any = "rule", type_: Any = "directive", slot: str = "x") -> LongTermItem:  # fmt: skip
    return LongTermItem(
        rid, kind, type_, slot, value, "old", "i1", "old", DAY, DAY,
        value_sessions=["old"], embedding=vector, embedding_model=model if vector else None,
    )  # fmt: skip


def plan(rows: list[LongTermItem], text: str, *, vector: tuple[float, ...] | None = None,
         items: Any = (), **params: Any) -> Backfill:  # fmt: skip
    query = BackfillQuery(text, items, "", "now", vector=vector, vector_model=MODEL)
    return plan_backfill(rows, query, 500, LongTermParams(**params), lambda s: len(s) // 4)


# --- retrieval by meaning ---------------------------------------------------------------

GARDEN = row("g1", "Water my tomato plants only in the early morning.", vector=unit(1, 0.2, 0))
KNITTING = row("k1", "I knit with merino wool exclusively.", vector=unit(0, 0.1, 1))


def test_a_close_vector_brings_an_item_no_word_of_the_input_shares() -> None:
    ask = "When should the vegetable beds get their daily soak?"
    assert plan([GARDEN, KNITTING], ask).item_ids == []  # lexical alone: nothing in common
    found = plan([GARDEN, KNITTING], ask, vector=unit(0.9, 0.3, 0.05))
    assert found.item_ids == ["g1"]
    reason = next(c.reason for c in found.candidates if c.ref == "g1")
    assert "meaning (cosine 0.99)" in reason


def test_the_similarity_threshold_and_the_vectors_model_are_respected() -> None:
    ask = "Anything planned for the weekend?"
    between = unit(0.5, 0, 0.5)  # cosine ~0.69 with both rows
    assert (
        plan([GARDEN, KNITTING], ask, vector=between, embedding_min_similarity=0.8).item_ids == []
    )
    assert len(plan([GARDEN, KNITTING], ask, vector=between).item_ids) == 2
    other_model = row("g2", GARDEN.value, vector=GARDEN.embedding, model="another-embedder")
    assert plan([other_model], ask, vector=unit(1, 0.2, 0)).item_ids == []


def test_both_signals_together_outrank_either_alone() -> None:
    lexical_only = row("l1", "Book aisle seats when I fly long-haul.", vector=unit(0, 1, 0))
    both = row("b1", "Long-haul flights: always an aisle seat.", vector=unit(1, 0, 0))
    out = plan([lexical_only, both], "Book my long-haul flight to Lima.", vector=unit(1, 0, 0))
    assert out.item_ids == ["b1", "l1"]


def test_cosine_of_mismatched_or_zero_vectors_is_zero() -> None:
    assert cosine((1.0, 0.0), (1.0, 0.0, 0.0)) == 0.0
    assert cosine((0.0, 0.0), (1.0, 0.0)) == 0.0
    assert math.isclose(cosine((3.0, 4.0), (3.0, 4.0)), 1.0)


# --- another alternative of the same kind of choice ----------------------------------------


def test_kinds_of_choice_are_read_in_both_languages_without_word_boundaries() -> None:
    assert choices("这单改走中通快递") == {"carrier": frozenset({"zto"})}
    assert choices("Pay by Apple Pay, and ship via DHL.") == {
        "payment": frozenset({"apple-pay"}),
        "carrier": frozenset({"dhl"}),
    }
    assert other_choice("快递一律走中通。", "这回用京东快递寄吧") == "carrier"
    assert other_choice("快递一律走中通。", "还是中通，谢谢") is None


def current(text: str) -> Any:
    items, _ = fold_messages([("user", text)], "")
    return items


def test_a_chinese_request_for_another_courier_overrides_the_standing_one() -> None:
    courier = row("c1", "快递一律走中通。")
    now = "这回用京东快递寄吧"
    out = plan([courier], now, items=current(now))
    assert out.item_ids == ["c1"]
    assert out.conflicts == {"c1": now}
    assert out.contents[0].endswith(f"usually: {courier.value}; this conversation: {now}")


def test_an_english_request_for_another_payment_method_overrides_the_standing_one() -> None:
    paypal = row("p1", "Always settle my invoices through PayPal.", type_="preference")
    now = "Put this one on my debit card."
    out = plan([paypal], now, items=current(now))
    assert out.conflicts == {"p1": now}
    # The same method again is a restatement, not a conflict.
    again = "Use PayPal for this one as well."
    assert plan([paypal], again, items=current(again)).conflicts == {}


def test_choosing_another_alternative_than_a_banned_one_is_no_conflict() -> None:
    banned = row("s1", "Never put me in a middle seat.", type_="constraint")
    now = "Book me a window seat on the morning flight."
    out = plan([banned], now, items=current(now))
    assert out.item_ids == ["s1"]  # the same kind of choice: relevant background
    assert out.conflicts == {}


def test_a_rule_of_an_unrelated_kind_is_not_brought_in() -> None:
    courier = row("c2", "快递一律走中通。")
    assert plan([courier], "这回用微信付吧").item_ids == []


# --- deleting a conversation -------------------------------------------------------------


def lt(value: str, stated: list[str], history: list[LongTermVersion] | None = None,
       first: str | None = None) -> LongTermItem:  # fmt: skip
    return LongTermItem(
        f"lt-{value[:6]}", "rule", "directive", "x", value, stated[-1], "item", first or stated[0],
        DAY, DAY, confirmations=len(stated), history=history or [], value_sessions=stated,
    )  # fmt: skip


def test_what_only_the_deleted_conversation_said_is_deleted() -> None:
    changed, deleted = forget_session([lt("Label every box by room.", ["A"])], "A")
    assert (changed, deleted) == ([], ["lt-Label "])


def test_a_value_other_conversations_stated_too_stays_without_the_deleted_source() -> None:
    both = lt("Label every box by room.", ["A", "B"])
    changed, deleted = forget_session([both], "B")
    assert deleted == []
    assert [(r.value, r.value_sessions, r.source_session_id, r.confirmations) for r in changed] == [
        ("Label every box by room.", ["A"], "A", 1)
    ]
    assert changed[0].source_item_id == ""  # B's working-memory item is gone with it


def test_a_value_the_deleted_conversation_changed_falls_back_to_the_earlier_one() -> None:
    earlier = LongTermVersion("Movers arrive at 8am.", "A", DAY - 50, "replaced in conversation B")
    revised = lt("Movers arrive at 10am.", ["B"], [earlier], first="A")
    revised.embedding, revised.embedding_model = (1.0, 0.0), MODEL
    changed, deleted = forget_session([revised], "B")
    assert deleted == []
    assert [(r.value, r.value_sessions, r.history, r.embedding) for r in changed] == [
        ("Movers arrive at 8am.", ["A"], [], None)
    ]
    assert changed[0].last_confirmed == DAY - 50
    # Deleting A instead: the current value stays, A's old value leaves the history.
    changed, _ = forget_session([revised], "A")
    assert (changed[0].value, changed[0].history, changed[0].first_session_id) == (
        "Movers arrive at 10am.", [], "B"
    )  # fmt: skip


def test_rows_of_other_conversations_and_operator_values_are_untouched() -> None:
    elsewhere = lt("Label every box by room.", ["C"])
    operator = lt("Fragile boxes go last.", ["A"])
    operator.value_sessions = []  # an operator rewrote it
    changed, deleted = forget_session([elsewhere, operator], "A")
    assert deleted == []
    assert [(r.value, r.first_session_id) for r in changed] == [("Fragile boxes go last.", "")]


def test_a_question_on_the_subject_overrides_nothing() -> None:
    nuts = row("n1", "Peanut allergy: keep peanuts out of every recipe.", type_="constraint",
               slot="allergy")  # fmt: skip
    ask = "Does my peanut allergy matter for the satay sauce?"
    assert [i.slot for i in current(ask)] == ["allergy"]  # the same slot as the rule
    out = plan([nuts], ask, items=current(ask))
    assert out.item_ids == ["n1"]
    assert out.conflicts == {}


def test_the_input_wins_even_when_no_item_holds_it() -> None:
    courier = row("c3", "快递一律走中通。")
    now = "这次用极兔寄吧"
    items, _ = fold_messages([("user", "想买点洗衣液和纸巾。"), ("user", now)], "")
    assert all(it.value != now for it in items)  # the extractor kept nothing of it
    out = plan([courier], now, items=items)
    assert out.conflicts == {"c3": now}
