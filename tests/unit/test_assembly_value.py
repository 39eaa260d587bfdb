"""Assembly and ranking phenomena from the fresh2 held-out set: the current input is
not restated, concrete and revised values rank like rules, an overflowing block
borrows from recall."""

from __future__ import annotations

from typing import Any

from policies.assemble.assembly import FullAssembler
from policies.assemble.generated import MEMORY_HEADER, REPLAY_HEADER
from policies.assemble.params import FullParams
from policies.memory.scoring import ScoringParams, score_item
from policies.types import MemoryItem
from tests.unit.test_assembly import make_input, msg


def item(id_: str, value: str, ordinal: int, type_: Any = "constraint", **kw: Any) -> MemoryItem:
    kw.setdefault("source", "user")
    kw.setdefault("importance", {"constraint": 0.85, "directive": 0.85}.get(type_, 0.65))
    return MemoryItem(id=id_, type=type_, slot=id_, value=value, source_ordinal=ordinal, **kw)


def chat(rounds: int) -> list[dict[str, Any]]:
    out = [msg("system", "You help plan a garden.")]
    for r in range(rounds):
        out += [msg("user", f"Round {r}: which shrub for bed {r}? " + "q" * 80)]
        out += [msg("assistant", f"Bed {r} suits a hydrangea. " + "a" * 200)]
    return out


def generated(messages: list[dict[str, Any]], header: str) -> str:
    return "\n".join(
        m["content"] for m in messages if m["role"] == "system" and m["content"].startswith(header)
    )


def test_items_of_the_current_input_are_not_restated() -> None:
    messages = [*chat(12), msg("user", "Please never use peat in any bed, list the plan.")]
    current = len(messages) - 1
    items = [
        item("old", "Never plant anything thorny near the path.", 3),
        item("now", "Please never use peat in any bed, list the plan.", current),
    ]
    ctx = FullAssembler().assemble(make_input(messages, 900, items=items))
    assert "now" not in ctx.used_item_ids
    assert "old" in ctx.used_item_ids
    text = generated(ctx.messages, MEMORY_HEADER) + generated(ctx.messages, REPLAY_HEADER)
    assert "peat" not in text
    why = {c.ref: c.reason for c in ctx.candidates if c.kind == "item"}
    assert why["now"] == "in the current input (forwarded verbatim)"


def test_a_dated_fact_ranks_like_a_rule() -> None:
    p = ScoringParams()
    dated = item("d", "The garden party is on June 14 at 3pm.", 10, "fact")
    plain = item("c", "Keep the beds low-maintenance.", 10, "constraint")
    vague = item("v", "The neighbours have a big oak.", 10, "fact")

    def score(it: MemoryItem) -> float:
        return score_item(it, current_ordinal=20, query_terms=(), params=p)

    assert score(dated) >= score(plain) > score(vague)


def test_a_revised_value_outranks_one_said_once() -> None:
    p = ScoringParams()
    once = item("o", "Budget for plants is 300 euros at most.", 10, "constraint")
    revised = item("r", "Budget for shrubs is 450 euros at most.", 10, "constraint", replaces="400")

    def score(it: MemoryItem) -> float:
        return score_item(it, current_ordinal=20, query_terms=(), params=p)

    assert score(revised) > score(once)


def test_an_overflowing_block_borrows_from_recall_not_beyond() -> None:
    items = [
        item(f"f{i}", f"Bed {i} must get {i + 2} lavender plants, spaced 40 cm apart.", i)
        for i in range(40)
    ]
    messages = [*chat(14), msg("user", "go on")]
    inp = make_input(messages, 1200, items=items)
    ctx = FullAssembler().assemble(inp)
    p = FullParams()
    history = 1200 - sum(t.tokens for t in (*inp.system, *inp.tail))
    memory = sum(s.tokens for s in ctx.sections if s.name in ("anchors", "working_memory"))
    assert (
        int(history * p.memory_share)
        < memory
        <= int(history * (p.memory_share + p.memory_borrow_share))
    )
    recalled = sum(s.tokens for s in ctx.sections if s.name == "recalled")
    assert recalled <= max(0, int(history * p.recall_share) - (memory - int(history * 0.4)))
    assert ctx.tokens <= 1200
