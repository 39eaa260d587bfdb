"""Assembly across requests: compaction in steps, a stable prefix, graded forgetting."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from policies.assemble.assembly import FullAssembler
from policies.assemble.assembly_input import AssemblyInput, input_key
from policies.assemble.budget import split_mandatory
from policies.assemble.generated import DELTA_HEADER, MEMORY_HEADER
from policies.assemble.params import FullParams
from policies.assemble.summary import DatedTurn, RuleSummarizer
from policies.memory.forgetting import (
    ARCHIVED_NOTE,
    REPROMOTED_NOTE,
    ForgettingParams,
    apply_tiers,
    entity_line,
    fades,
    grade,
)
from policies.types import AssembledContext, ItemVersion, MemoryItem, MemoryLayout, Turn
from tests.unit.test_assembly import check_structure, count, msg, turns_from


def item(id_: str, value: str, ordinal: int, type_: Any = "constraint", **kw: Any) -> MemoryItem:
    kw.setdefault("source", "user")
    return MemoryItem(id=id_, type=type_, slot=id_, value=value, source_ordinal=ordinal, **kw)


def chat(rounds: int) -> list[dict[str, Any]]:
    msgs = [msg("system", "You plan trips.")]
    for r in range(rounds):
        msgs += [msg("user", f"Round {r}: what about museum number {r}? " + "q" * 60)]
        msgs += [msg("assistant", f"Museum {r} opens at nine. " + "a" * 160)]
    return msgs


def make(messages: list[dict[str, Any]], budget: int, **extra: Any) -> AssemblyInput:
    turns = turns_from(messages)
    system, history, tail = split_mandatory(turns)
    return AssemblyInput(
        system=system,
        history=history,
        tail=tail,
        budget=budget,
        count=count,
        current_ordinal=turns[-1].ordinal,
        raw_tokens=sum(t.tokens for t in turns),
        **extra,
    )


def compact(inp: AssemblyInput, ctx: AssembledContext, chunks: tuple[Any, ...]) -> Any:
    """What the proxy does on `compact_upto`: summarise the evicted turns, append."""
    assert ctx.compact_upto is not None
    start = chunks[-1].upto if chunks else 0
    evicted = [
        DatedTurn(t, "2024-05-08") for t in inp.history if start <= t.ordinal < ctx.compact_upto
    ]
    return (*chunks, RuleSummarizer().summarize(chunks, evicted, start, ctx.compact_upto))


def leading_generated(ctx: AssembledContext) -> list[dict[str, Any]]:
    out = []
    for m in ctx.messages[1:]:
        if m["role"] != "system":
            break
        out.append(m)
    return out


def request(rounds: int) -> list[dict[str, Any]]:
    """The client's messages when round `rounds` is asked: all earlier rounds, then it."""
    return [*chat(rounds), chat(rounds + 1)[-2]]


def test_between_compactions_each_prompt_is_the_previous_one_plus_new_turns() -> None:
    items = [item("b", "The budget is 900 euros, never more.", 1)]
    assembler = FullAssembler()
    inp = make(request(30), 1200, items=items)
    first = assembler.assemble(inp)
    check_structure(first, inp, count)
    assert first.compact_upto is not None  # the history is over the high-water mark
    chunks = compact(inp, first, ())
    state: dict[str, Any] = {"chunks": chunks, "layout": first.memory_layout}

    def ask(rounds: int) -> tuple[AssemblyInput, AssembledContext]:
        nxt = replace(
            make(request(rounds), 1200, items=items),
            summary_chunks=state["chunks"],
            summary_upto=state["chunks"][-1].upto,
            memory_layout=state["layout"],
        )
        ctx = assembler.assemble(nxt)
        check_structure(ctx, nxt, count)
        state["layout"] = ctx.memory_layout
        return nxt, ctx

    _, previous = ask(30)
    assert previous.compact_upto is None
    recent = [m for m in previous.messages if m["role"] != "system"]
    assert recent[0]["content"].startswith(f"Round {chunks[-1].upto // 2}:")
    steps = 0
    for rounds in range(31, 40):
        _, ctx = ask(rounds)
        if ctx.compact_upto is not None:
            break
        # Everything up to the end of the previous recent turns is repeated as is,
        # the previous input included: only late sections and new turns differ.
        head = len(leading_generated(previous)) + 1
        kept = previous.messages[: head + len(recent) - 1]  # up to the previous input
        assert ctx.messages[: len(kept)] == kept
        assert ctx.messages[len(kept)] == recent[-1]  # which is a recent turn now
        previous = ctx
        recent = [m for m in ctx.messages if m["role"] != "system"]
        steps += 1
    assert steps >= 1


def test_summary_covers_what_the_recent_window_no_longer_holds() -> None:
    inp = make([*chat(30), msg("user", "Which museum opens at nine?")], 1000)
    first = FullAssembler().assemble(inp)
    chunks = compact(inp, first, ())
    ctx = FullAssembler().assemble(
        replace(inp, summary_chunks=chunks, summary_upto=chunks[-1].upto)
    )
    summary = next(m for m in ctx.messages if m["content"].startswith("Summary of the earlier"))
    assert "[2024-05-08] user: Round " in summary["content"]
    kinds = {(c.kind, c.decision) for c in ctx.candidates}
    assert ("turns", "compressed") in kinds


def test_memory_block_stays_while_new_items_go_late() -> None:
    base = [item("a", "Never book ferries.", 1), item("b", "Budget 900 euros.", 3)]
    inp = make([*chat(30), msg("user", "Ferries?")], 1500, items=base)
    first = FullAssembler().assemble(inp)
    block = first.messages[1]
    assert block["content"].startswith(MEMORY_HEADER)
    later = [*base, item("c", "We land on April 3.", 20, "fact")]
    inp2 = replace(inp, items=later, memory_layout=first.memory_layout)
    second = FullAssembler().assemble(inp2)
    check_structure(second, inp2, count)
    assert second.messages[1] == block  # byte-identical block
    delta = next(m for m in second.messages if m["content"].startswith(DELTA_HEADER))
    assert "We land on April 3." in delta["content"]
    assert second.messages.index(delta) > second.messages.index(second.messages[-1]) - 4
    # An item of the block that is no longer current forces a new layout.
    gone = [replace(base[0], status="revoked"), base[1], later[2]]
    third = FullAssembler().assemble(replace(inp2, items=gone))
    assert "Never book ferries." not in str(third.messages)
    assert "We land on April 3." in third.messages[1]["content"]


def test_rules_the_user_set_never_fade_facts_and_tool_results_do() -> None:
    p = ForgettingParams()
    rule = item("r", "Always answer in English.", 0, "directive", importance=0.85)
    fact = item("f", "The hotel is near Gojo station.", 0, "fact", importance=0.65)
    tool = item("t", "status=open; id=PAY-2291", 0, "fact", source="tool", importance=0.35)
    assert not fades(rule)
    assert fades(fact)
    assert fades(tool)
    assert grade(rule, 5000, p) == "active"
    assert grade(fact, 10, p) == "active"  # too young to fade
    assert grade(fact, 200, p) == "compressible"
    assert grade(fact, 350, p) == "discardable"
    assert grade(tool, 600, p) == "archived"
    assert "PAY-2291" in entity_line([tool])


def test_archived_item_comes_back_when_the_input_mentions_it() -> None:
    ref = item("k", "Booked: Hotel Kanra, confirmation HK-55817.", 0, "entity", importance=0.3)
    rule = item("r", "Always quote prices in yen and euros.", 1, "directive", importance=0.85)
    history = [*chat(30)]
    quiet = make([*history, msg("user", "What should we eat tonight?")], 1500, items=[ref, rule])
    quiet = replace(quiet, current_ordinal=900)
    ctx = FullAssembler().assemble(quiet)
    assert "HK-55817" not in str(ctx.messages)
    assert ctx.memory_layout is not None
    assert ctx.memory_layout.tiers["k"] == "archived"
    archived = replace(ref, status="archived")
    asked = replace(
        quiet,
        items=[archived, rule],
        tail=make([*history, msg("user", "What was the HK-55817 booking again?")], 1).tail,
        memory_layout=ctx.memory_layout,
    )
    back = FullAssembler().assemble(asked)
    assert "k" in back.repromoted_ids
    assert "Booked: Hotel Kanra, confirmation HK-55817." in str(back.messages)
    assert any(c.ref == "k" and c.decision == "recalled" for c in back.candidates)


def test_tiers_archive_faded_items_and_bring_mentioned_ones_back_as_versions() -> None:
    faded = item("f", "The ferry leaves from pier 4.", 2, "fact")
    stored = item("s", "The locker code is 3318.", 3, "fact", status="archived")
    quiet = item("q", "Bring a rain jacket.", 4, "fact", status="archived")
    gone = item("g", "Lunch at the noodle bar.", 5, "fact", status="superseded")
    items = [faded, stored, quiet, gone]
    changed = apply_tiers(items, ["f", "g"], ["s"], 40)
    assert changed == ["f", "s"]
    assert [i.status for i in items] == ["archived", "active", "archived", "superseded"]
    assert items[0].versions == [ItemVersion(40, "active", faded.value, ARCHIVED_NOTE)]
    assert items[1].versions == [ItemVersion(40, "archived", stored.value, REPROMOTED_NOTE)]
    assert items[2] is quiet
    assert items[3] is gone
    # The originals are not changed: a changed item is a copy.
    assert faded.status == "active"
    assert not faded.versions


def test_full_params_reject_unknown_keys() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        FullParams.model_validate({"low_water": 0.5, "nope": 1})
    assert FullParams().recall_position == "late"


def _turn(ordinal: int) -> Turn:
    return Turn(ordinal, "user", "x", {"role": "user", "content": "x"}, 5)


def test_a_recalled_question_comes_with_its_reply_only_from_summarised_turns() -> None:
    from policies.assemble.generated import RECALL_HEADER
    from policies.types import RecallHit

    messages = chat(12)
    messages[3] = msg("user", "What was the name of the ramen place near the station?")
    messages[4] = msg("assistant", "It was Menya Kaito, the one with the blue curtain. " + "a" * 80)
    messages.append(msg("user", "Remind me of that ramen place?"))
    first = make(messages, 900)
    hit = RecallHit(3, "user", "", messages[3]["content"], 7.0)
    chunks = compact(first, FullAssembler().assemble(first), ())
    inp = replace(first, recalled=[hit], summary_chunks=chunks, summary_upto=chunks[-1].upto)
    ctx = FullAssembler().assemble(inp)
    recall = next(m["content"] for m in ctx.messages if m["content"].startswith(RECALL_HEADER))
    assert "user: What was the name of the ramen place near the station?" in recall
    assert "assistant: It was Menya Kaito, the one with the blue curtain." in recall
    reasons = {c.ref: c.reason for c in ctx.candidates if c.section == "recalled"}
    assert reasons["4"] == "the reply to a recalled question"
    # Without the exchanges option, only the hit itself.
    plain = FullAssembler(FullParams.model_validate({"recall": {"exchanges": False}}))
    alone = next(
        m["content"] for m in plain.assemble(inp).messages if m["content"].startswith(RECALL_HEADER)
    )
    assert "Menya Kaito" not in alone


def test_an_input_key_holds_the_input_as_it_was_when_taken() -> None:
    # The proxy keeps the last assembly of a session by this key (an identical
    # resend reuses it); what it changes in place afterwards must not reach it.
    note = item("budget", "budget is 900 euros", 1)
    levels = {0: (1, 1, "overflow")}
    inp = make(chat(6), 400, items=[note], backbone_levels=levels)
    key = input_key(inp)
    assert input_key(make(chat(6), 400, items=[replace(note)], backbone_levels=dict(levels))) == key
    note.exposure += 1  # marked used by the request that was laid out
    assert input_key(inp) != key
    note.exposure -= 1
    levels[2] = (0, 0, "overflow")
    assert input_key(inp) != key
    del levels[2]
    note.versions.append(ItemVersion(3, "active", "budget is 800 euros"))
    assert input_key(inp) != key
    note.versions.clear()
    assert input_key(inp) == key
    assert input_key(replace(inp, budget=401)) != key
    assert input_key(make(chat(7), 400, items=[note], backbone_levels=levels)) != key
    # The layout by identity: a request tells a rebuilt block by the object it returns.
    layout = MemoryLayout((), 0, frozenset(), {}, "", 3)
    laid = input_key(replace(inp, memory_layout=layout))
    assert input_key(replace(inp, memory_layout=layout)) == laid
    assert input_key(replace(inp, memory_layout=replace(layout))) != laid
