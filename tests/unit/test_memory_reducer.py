"""Pure reducers over memory items: apply, rollback, active set, rendering."""

from __future__ import annotations

import copy

from policies.memory.reducer import active_items, apply_extraction, render_item, rollback
from policies.types import (
    Add,
    Confirm,
    Conflict,
    Extraction,
    ItemType,
    MemoryItem,
    Revoke,
    Supersede,
)


def item(
    item_id: str, value: str, ordinal: int, kind: ItemType = "fact", source: str = "user"
) -> MemoryItem:
    assert source in ("user", "assistant", "tool")
    return MemoryItem(
        id=item_id, type=kind, slot="s", value=value, source=source,  # type: ignore[arg-type]
        source_ordinal=ordinal,
    )  # fmt: skip


def by_id(items: list[MemoryItem]) -> dict[str, MemoryItem]:
    return {it.id: it for it in items}


def test_add_appends_and_never_mutates_input() -> None:
    before = [item("a", "budget 600", 0)]
    snapshot = copy.deepcopy(before)
    after = apply_extraction(before, Extraction("add", (Add(item("b", "no oven", 2)),)), 2)
    assert [it.id for it in after] == ["a", "b"]
    assert before == snapshot


def test_supersede_links_both_items_and_records_history() -> None:
    old = item("a", "budget 600", 0, "constraint")
    new = item("b", "budget 450", 4, "constraint")
    new.replaces = "budget 600"
    after = by_id(apply_extraction([old], Extraction("update", (Supersede("a", new),)), 4))
    assert after["a"].status == "superseded"
    assert after["a"].superseded_by == "b"
    assert after["a"].versions[-1].ordinal == 4
    assert after["a"].versions[-1].status == "active"
    assert after["b"].status == "active"
    assert old.status == "active"  # input untouched


def test_one_new_item_may_supersede_several() -> None:
    items = [item("a", "3-year term", 0), item("b", "vendor wants 3-year", 1)]
    new = item("c", "2-year term", 5)
    ops = (Supersede("a", new), Supersede("b", new))
    after = apply_extraction(items, Extraction("update", ops), 5)
    assert [it.id for it in after].count("c") == 1
    assert [it.status for it in after] == ["superseded", "superseded", "active"]


def test_revoke_and_unknown_ids() -> None:
    items = [item("a", "always paste the SQL", 0, "directive")]
    ops = (Revoke("a", "no more SQL"), Revoke("missing", "?"), Supersede("gone", item("x", "v", 3)))
    after = by_id(apply_extraction(items, Extraction("revoke", ops), 3))
    assert after["a"].status == "revoked"
    assert "no more SQL" in after["a"].versions[-1].note
    assert after["x"].status == "active"


def test_ops_never_revive_dead_items() -> None:
    dead = item("a", "old", 0)
    dead.status = "revoked"
    revise = Extraction("update", (Supersede("a", item("b", "n", 3)),))
    after = by_id(apply_extraction([dead], revise, 3))
    assert after["a"].status == "revoked"
    assert after["a"].versions == []


def test_conflict_marks_old_pending_and_confirm_resolves_for_new() -> None:
    old = item("a", "never use emojis", 0, "directive")
    new = item("b", "use emojis from now on", 4, "directive")
    pending = apply_extraction([old], Extraction("update", (Conflict("a", new, "confirm?"),)), 4)
    assert [it.status for it in active_items(pending)] == ["pending", "active"]
    settled = by_id(apply_extraction(pending, Extraction("confirm", (Confirm("b"),)), 6))
    assert settled["a"].status == "superseded"
    assert settled["a"].superseded_by == "b"
    assert settled["b"].status == "active"


def test_confirming_the_old_side_revokes_the_challenger() -> None:
    old = item("a", "answers in English", 0, "directive")
    new = item("b", "answers in German", 4, "directive")
    pending = apply_extraction([old], Extraction("update", (Conflict("a", new, "?"),)), 4)
    settled = by_id(apply_extraction(pending, Extraction("confirm", (Confirm("a"),)), 6))
    assert settled["a"].status == "active"
    assert settled["b"].status == "revoked"


def test_confirm_without_conflict_changes_nothing() -> None:
    items = [item("a", "no ferries", 0)]
    after = apply_extraction(items, Extraction("confirm", (Confirm("a"),)), 2)
    assert after[0].status == "active"
    assert after[0].versions == []


def test_rollback_drops_new_items_and_restores_changed_ones() -> None:
    items = [item("a", "18 tables", 0), item("k", "no pork", 1, "constraint")]
    revise = Extraction("update", (Supersede("a", item("b", "20 tables", 5)),))
    items = apply_extraction(items, revise, 5)
    items = apply_extraction(items, Extraction("revoke", (Revoke("k", "x"),)), 7)
    items = apply_extraction(items, Extraction("add", (Add(item("c", "late", 9)),)), 9)

    back = by_id(rollback(items, 7))
    assert set(back) == {"a", "b", "k"}
    assert back["k"].status == "active"
    assert back["k"].versions == []
    assert back["a"].status == "superseded"

    back = by_id(rollback(items, 5))
    assert set(back) == {"a", "k"}
    assert back["a"].status == "active"
    assert back["a"].superseded_by is None
    assert back["a"].versions == []


def test_rollback_undoes_a_resolved_conflict_step_by_step() -> None:
    old = item("a", "short answers", 0, "directive")
    challenge = Extraction("update", (Conflict("a", item("b", "long", 4), "?"),))
    items = apply_extraction([old], challenge, 4)
    items = apply_extraction(items, Extraction("confirm", (Confirm("b"),)), 6)
    assert by_id(rollback(items, 6))["a"].status == "pending"
    assert by_id(rollback(items, 4))["a"].status == "active"


def test_rollback_restores_value_too() -> None:
    edited = item("a", "new text", 0)
    from policies.types import ItemVersion

    edited.versions.append(ItemVersion(3, "active", "old text", "edited"))
    (back,) = rollback([edited], 3)
    assert back.value == "old text"


def test_active_items_keeps_pending_and_order() -> None:
    items = [item(str(i), "v", i) for i in range(4)]
    for it, status in zip(items, ("active", "pending", "superseded", "revoked"), strict=True):
        it.status = status  # type: ignore[assignment]
    assert [it.id for it in active_items(items)] == ["0", "1"]


def test_render_is_one_line_with_replaced_value() -> None:
    it = item("a", "let's make it 3 nights\nin Kyoto", 0)
    it.replaces = "4 nights in Kyoto"
    line = render_item(it)
    assert "\n" not in line
    assert line == "- [fact] let's make it 3 nights in Kyoto (replaces: 4 nights in Kyoto)"


def test_render_marks_source_and_pending() -> None:
    tool = item("t", "status=closed; id=PAY-1", 3, source="tool")
    assert render_item(tool) == "- [fact] (tool) status=closed; id=PAY-1"
    rule = item("r", "no ferries", 0, "constraint")
    rule.status = "pending"
    assert render_item(rule).startswith("- [constraint] no ferries (pending")
