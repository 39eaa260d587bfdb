"""Late sections kept in place across requests (policies.assemble.placed).

A session is driven the way the proxy drives it: each request gets the
summary chunks, the memory layout and the placed notes the previous one left,
and a compaction is carried out when the assembler asks for one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from policies.assemble.assembly import FullAssembler, SummaryBufferAssembler
from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.generated import DELTA_HEADER, RECALL_HEADER, REPLAY_HEADER
from policies.assemble.params import FullParams
from policies.assemble.placed import turn_checksum
from policies.types import AssembledContext, MemoryItem, PlacedNote, RecallHit
from tests.unit.test_assembly import check_structure, count, msg
from tests.unit.test_lifecycle_assembly import compact, item, make

BUDGET = 1000  # the conversation outgrows it from round 15 on


def conversation(rounds: int) -> list[dict[str, Any]]:
    msgs = [msg("system", "You help plan a community garden.")]
    for r in range(rounds):
        msgs.append(msg("user", f"Step {r}: what should we plant in bed {r}? " + "u" * 40))
        msgs.append(msg("assistant", f"Bed {r} suits beans and basil. " + "b" * 120))
    return msgs


def asking(rounds: int, text: str | None = None) -> list[dict[str, Any]]:
    """The client's messages when round `rounds` is asked."""
    ask = text or conversation(rounds + 1)[-2]["content"]
    return [*conversation(rounds), msg("user", ask)]


class Session:
    """What the proxy keeps between requests, for one conversation."""

    def __init__(self, budget: int, assembler: Any | None = None) -> None:
        self.budget = budget
        self.assembler = assembler or FullAssembler()
        self.chunks: tuple[Any, ...] = ()
        self.layout: Any = None
        self.notes: tuple[PlacedNote, ...] = ()
        self.compacted = False
        self.last: AssembledContext | None = None

    def ask(
        self,
        messages: list[dict[str, Any]],
        items: list[MemoryItem],
        recalled: list[RecallHit] | None = None,
    ) -> AssembledContext:
        inp = self._input(messages, items, recalled or [])
        ctx = self.assembler.assemble(inp)
        self.compacted = ctx.compact_upto is not None
        if self.compacted:
            self.chunks = compact(inp, ctx, self.chunks)
            inp = self._input(messages, items, recalled or [])
            ctx = self.assembler.assemble(inp)
        check_structure(ctx, inp, count)
        if ctx.memory_layout is not None:
            self.layout = ctx.memory_layout
        self.notes = ctx.placed_notes
        self.last = ctx
        return ctx

    def _input(
        self, messages: list[dict[str, Any]], items: list[MemoryItem], recalled: list[RecallHit]
    ) -> AssemblyInput:
        return replace(
            make(messages, self.budget, items=items),
            summary_chunks=self.chunks,
            summary_upto=self.chunks[-1].upto if self.chunks else 0,
            memory_layout=self.layout,
            placed_notes=self.notes,
            recalled=recalled,
        )


def rules_until(rounds: int, every: int = 1) -> list[MemoryItem]:
    """A new rule every `every` rounds (stated in that round's user turn, ordinal 2r + 1)."""
    return [
        item(f"r{r}", f"Bed {r} must stay free of chemical sprays.", 2 * r + 1)
        for r in range(0, rounds, every)
    ]


def generated(ctx: AssembledContext) -> list[str]:
    return [m["content"] for m in ctx.messages if m["role"] == "system"]


def test_between_compactions_the_whole_previous_prompt_is_repeated() -> None:
    session = Session(BUDGET)
    session.ask(asking(12), rules_until(12, 3))
    whole = 0
    previous = session.ask(asking(13), rules_until(13, 3))
    for rounds in range(14, 34):
        ctx = session.ask(asking(rounds), rules_until(rounds, 3))
        if session.chunks and not session.compacted and previous.placed_notes:
            n = len(previous.messages)
            if ctx.messages[:n] == previous.messages:
                # The previous input is followed by its answer and the new input,
                # with only this request's own late sections in between.
                assert ctx.messages[n]["role"] == "assistant"
                assert ctx.messages[-1]["content"].startswith(f"Step {rounds}:")
                assert any(c.section == "in_place" for c in ctx.candidates)
                assert any(s.name == "in_place" and s.tokens for s in ctx.sections)
                whole += 1
        previous = ctx
    assert whole >= 4


def test_a_rule_shown_in_place_is_not_shown_again_late() -> None:
    session = Session(BUDGET)
    session.ask(asking(16), rules_until(16))
    session.ask(asking(17), rules_until(17))  # r16 arrives: in this request's delta
    first = session.notes
    assert any("Bed 16 must stay" in n.content for n in first if n.section == "memory_delta")
    ctx = session.ask(asking(18), rules_until(18))
    texts = generated(ctx)
    assert sum("Bed 16 must stay free" in t for t in texts) == 1
    new_delta = [
        t for t in texts if t.startswith(DELTA_HEADER) and t not in {n.content for n in first}
    ]
    assert all("Bed 16 must" not in t for t in new_delta)
    assert any("Bed 17 must" in t for t in new_delta)


def test_a_note_whose_value_changed_goes_and_the_new_value_shows() -> None:
    session = Session(BUDGET)
    rules = rules_until(16)
    session.ask(asking(16), rules)
    budget = item("cap", "Keep the seed budget under 80 dollars.", 25)
    session.ask(asking(17), [*rules, budget])
    assert any("80 dollars" in n.content for n in session.notes)
    # Revised: the old item is superseded, its successor says 120.
    old = replace(budget, status="superseded", superseded_by="cap2")
    new = item("cap2", "Keep the seed budget under 120 dollars.", 27, replaces="80 dollars")
    ctx = session.ask(asking(18), [*rules, old, new])
    texts = generated(ctx)
    assert not any("under 80 dollars" in t for t in texts)
    assert any("120 dollars" in t for t in texts)


def test_a_note_before_an_edited_turn_is_not_forwarded() -> None:
    session = Session(BUDGET)
    session.ask(asking(16), rules_until(16))
    session.ask(asking(17), rules_until(17))
    note = next(n for n in session.notes if n.section == "memory_delta")
    # The client edits the turn the note went before (a different question).
    edited = asking(18)
    edited[note.before] = msg("user", "Step 17, edited: what about tomatoes instead? " + "e" * 30)
    ctx = session.ask(edited, rules_until(17))
    in_place = [c.ref for c in ctx.candidates if c.section == "in_place"]
    assert not any(ref.endswith(f"@{note.before}") for ref in in_place)
    assert "Bed 16 must stay free" in "\n".join(generated(ctx))  # shown anew, late
    assert ctx.placed_notes
    assert all(n.before == len(edited) - 1 for n in ctx.placed_notes)
    # The edited conversation goes on: its own notes stay in place.
    going_on = [*edited, msg("assistant", "Beans, then."), msg("user", "And the compost?")]
    after = session.ask(going_on, rules_until(17))
    assert any(ref.endswith(f"@{len(edited) - 1}") for ref in in_place_refs(after))
    assert all(
        n.anchor == turn_checksum_of(going_on, n.before)
        for n in after.placed_notes
        if n.before == len(edited) - 1
    )


def in_place_refs(ctx: AssembledContext) -> list[str]:
    return [c.ref for c in ctx.candidates if c.section == "in_place"]


def turn_checksum_of(messages: list[dict[str, Any]], ordinal: int) -> int:
    from tests.unit.test_assembly import turns_from

    return turn_checksum(turns_from(messages)[ordinal])


def _hit(messages: list[dict[str, Any]], ordinal: int, score: float = 6.0) -> RecallHit:
    m = messages[ordinal]
    return RecallHit(ordinal, m["role"], "", m["content"], score)


def test_a_recalled_turn_stays_in_place_while_the_input_still_recalls_it() -> None:
    session = Session(BUDGET, SummaryBufferAssembler())
    for rounds in range(14, 17):
        session.ask(asking(rounds), [])
    assert session.chunks  # the early rounds are summarised: recall can quote them
    msgs = asking(17)
    session.ask(msgs, [], [_hit(msgs, 3)])
    quoted = [n for n in session.notes if n.section == "recalled"]
    assert quoted
    assert 3 in quoted[0].ordinals
    # The next input recalls turn 3 again (and turn 5): 3 is not quoted twice.
    msgs = asking(18)
    ctx = session.ask(msgs, [], [_hit(msgs, 3), _hit(msgs, 5)])
    texts = generated(ctx)
    assert quoted[0].content in texts
    assert sum(msgs[3]["content"][:30] in t for t in texts if t.startswith(RECALL_HEADER)) == 1
    assert any(msgs[5]["content"][:30] in t for t in texts)
    # An input that recalls none of them: the old quote goes, its room is the new recall's.
    msgs = asking(19)
    ctx = session.ask(msgs, [], [_hit(msgs, 7)])
    assert quoted[0].content not in generated(ctx)
    assert any(msgs[7]["content"][:30] in t for t in generated(ctx))


def test_notes_over_the_high_water_mark_go_last_first_before_any_compaction() -> None:
    session = Session(BUDGET)
    session.ask(asking(15), rules_until(15))
    session.ask(asking(16), rules_until(16))
    assert any(n.section == "memory_delta" for n in session.notes)
    prev_input = make(asking(16), BUDGET).tail[0]
    # A large section placed last, before the previous input: with the new
    # turns it is over the high-water mark.
    content = REPLAY_HEADER + "\n- " + "keep the plot map handy " * 40
    big = PlacedNote(
        section="replay",
        before=prev_input.ordinal,
        anchor=turn_checksum(prev_input),
        content=content,
        tokens=count(content) + 4,
    )
    inp = replace(
        make(asking(17), BUDGET, items=rules_until(16)),
        summary_chunks=session.chunks,
        summary_upto=session.chunks[-1].upto,
        memory_layout=session.layout,
        placed_notes=(*session.notes, big),
    )
    out = FullAssembler().assemble(inp)
    check_structure(out, inp, count)
    assert content not in generated(out)
    assert out.compact_upto is None  # dropping sections was enough
    # The memory-delta note stays: dropping it would only move its items late.
    delta = next(n for n in session.notes if n.section == "memory_delta")
    assert f"memory_delta@{delta.before}" in in_place_refs(out)
    assert sum(t.count("Bed 15 must stay free") for t in generated(out)) == 1


def test_in_place_can_be_switched_off() -> None:
    params = FullParams.model_validate({"keep_late_in_place": False})
    session = Session(BUDGET, FullAssembler(params))
    session.ask(asking(16), rules_until(16))
    ctx = session.ask(asking(17), rules_until(17))
    assert ctx.placed_notes == ()
    later = session.ask(asking(18), rules_until(18))
    assert not any(s.name == "in_place" for s in later.sections)


def test_every_request_stays_within_its_budget_with_notes_in_place() -> None:
    """Many rounds, new rules and recalled turns on every input, several
    budgets: each request keeps the assembler's invariants (`check_structure`:
    within the budget, client turns in order, tool pairs whole)."""
    for budget in (600, 800, 1000, 1300):
        session = Session(budget)
        placed_before = 0
        for rounds in range(8, 40):
            msgs = asking(rounds)
            hits = [_hit(msgs, o, 9.0 - k) for k, o in enumerate(range(1, 2 * rounds - 6, 5))]
            session.ask(msgs, rules_until(rounds, 2), hits)
            placed_before += any(c.section == "in_place" for c in session_last(session))
        assert placed_before >= 5, budget


def session_last(session: Session) -> list[Any]:
    return session.last.candidates if session.last is not None else []
