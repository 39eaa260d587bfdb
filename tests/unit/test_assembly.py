"""Assemblers: budget, structural integrity, memory sections, replay."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.assemble.assembly import (
    FullAssembler,
    RawAssembler,
    SummaryBufferAssembler,
    WindowAssembler,
)
from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.budget import message_text, message_tokens, split_mandatory
from policies.assemble.generated import MEMORY_HEADER, REPLAY_HEADER
from policies.assemble.item_lines import render_item_line
from policies.assemble.params import FullParams
from policies.base import AssemblyPolicy
from policies.types import AssembledContext, MemoryItem, TokenCounter, Turn


def count(text: str) -> int:
    return len(text) // 4 + 1


def turns_from(messages: list[dict[str, Any]], counter: TokenCounter = count) -> list[Turn]:
    return [
        Turn(
            ordinal=i,
            role=m["role"],
            text=message_text(m)[0],
            raw=m,
            tokens=message_tokens(m, counter),
            tool_call_ids=tuple(c["id"] for c in m.get("tool_calls") or ()),
            tool_call_id=m.get("tool_call_id"),
        )
        for i, m in enumerate(messages)
    ]


def make_input(
    messages: list[dict[str, Any]],
    budget: int,
    counter: TokenCounter = count,
    **extra: Any,
) -> AssemblyInput:
    turns = turns_from(messages, counter)
    system, history, tail = split_mandatory(turns)
    return AssemblyInput(
        system=system,
        history=history,
        tail=tail,
        budget=budget,
        count=counter,
        current_ordinal=turns[-1].ordinal if turns else 0,
        raw_tokens=sum(t.tokens for t in turns),
        **extra,
    )


def call(*ids: str, args: str = "{}") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "lookup", "arguments": args}}
            for i in ids
        ],
    }


def result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def msg(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content}


def item(id_: str, value: str, ordinal: int, type_: Any = "constraint", **kw: Any) -> MemoryItem:
    return MemoryItem(
        id=id_, type=type_, slot=id_, value=value, source="user", source_ordinal=ordinal, **kw
    )


def check_structure(ctx: AssembledContext, inp: AssemblyInput, counter: TokenCounter) -> None:
    """The invariants every managed assembler must keep."""
    msgs = ctx.messages
    system_raw, tail_raw = [t.raw for t in inp.system], [t.raw for t in inp.tail]
    mandatory = sum(t.tokens for t in (*inp.system, *inp.tail))
    if mandatory > inp.budget:
        assert ctx.over_budget
        assert len(msgs) == len(system_raw) + len(tail_raw)
        assert all(a is b for a, b in zip(msgs, system_raw + tail_raw, strict=True))
    else:
        assert not ctx.over_budget
        assert ctx.tokens <= inp.budget
    assert ctx.tokens == sum(message_tokens(m, counter) for m in msgs)
    assert sum(s.tokens for s in ctx.sections) == ctx.tokens
    assert all(a is b for a, b in zip(msgs, system_raw, strict=False))
    if tail_raw:
        assert all(a is b for a, b in zip(msgs[-len(tail_raw) :], tail_raw, strict=True))
    # Client messages keep their relative order.
    positions = {id(t.raw): t.ordinal for t in (*inp.system, *inp.history, *inp.tail)}
    ordinals = [positions[id(m)] for m in msgs if id(m) in positions]
    assert ordinals == sorted(ordinals)
    assert_tool_pairs_intact(msgs)


def assert_tool_pairs_intact(msgs: list[dict[str, Any]]) -> None:
    """No orphan tool message; no tool-call message without all its results."""
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m["role"] != "tool", f"orphan tool message at {i}"
        i += 1
        if m["role"] == "assistant" and m.get("tool_calls"):
            expected = {c["id"] for c in m["tool_calls"]}
            seen: set[str] = set()
            while i < len(msgs) and msgs[i]["role"] == "tool":
                assert msgs[i]["tool_call_id"] in expected - seen
                seen.add(msgs[i]["tool_call_id"])
                i += 1
            assert seen == expected, f"tool calls without all results before {i}"


MANAGED: list[AssemblyPolicy] = [FullAssembler(), WindowAssembler(), SummaryBufferAssembler()]


def tool_conversation() -> list[dict[str, Any]]:
    msgs = [msg("system", "You are a travel agent.")]
    for r in range(6):
        msgs += [msg("user", f"round {r}: find flights " + "x" * 60)]
        msgs += [call(f"c{r}a", f"c{r}b", f"c{r}c", args='{"q": "' + "y" * 30 + '"}')]
        msgs += [result(f"c{r}c", "z" * (20 + 30 * r)), result(f"c{r}a"), result(f"c{r}b")]
        msgs += [msg("assistant", f"answer {r} " + "w" * 80)]
    msgs += [msg("user", "now book the cheapest"), call("last1", "last2")]
    msgs += [result("last2", "booked?"), result("last1", "seat 12A")]
    return msgs


@pytest.mark.parametrize("assembler", MANAGED, ids=lambda a: a.name)
def test_tool_groups_never_split_under_tight_budgets(assembler: Any) -> None:
    messages = tool_conversation()
    total = sum(message_tokens(m, count) for m in messages)
    for budget in range(1, total + 20, 7):
        inp = make_input(messages, budget, items=[item("a", "window seat", 1)])
        ctx = assembler.assemble(inp)
        check_structure(ctx, inp, count)
        assert ctx.messages[-4:] == messages[-4:]


@pytest.mark.parametrize("assembler", [*MANAGED, RawAssembler()], ids=lambda a: a.name)
def test_passthrough_is_byte_identical_when_everything_fits(assembler: Any) -> None:
    messages = tool_conversation()
    inp = make_input(messages, 100_000, items=[item("a", "window seat", 1)], summary="s")
    ctx = assembler.assemble(inp)
    assert ctx.passthrough
    assert json.dumps(ctx.messages) == json.dumps(messages)
    assert all(a is b for a, b in zip(ctx.messages, messages, strict=True))
    assert ctx.used_item_ids == ()


def test_over_budget_forwards_mandatory_part_only() -> None:
    messages = [msg("system", "S" * 400), msg("user", "old"), msg("assistant", "a")]
    messages += [msg("user", "Q" * 400)]
    inp = make_input(messages, 150, items=[item("a", "never use nuts", 1)])
    ctx = FullAssembler().assemble(inp)
    assert ctx.over_budget
    assert not ctx.passthrough
    assert ctx.messages == [messages[0], messages[-1]]
    assert ctx.tokens > 150
    assert {c.decision for c in ctx.candidates if c.kind == "turn"} == {"mandatory", "dropped"}


def long_chat(rounds: int = 30) -> list[dict[str, Any]]:
    msgs = [msg("system", "You plan family meals.")]
    for r in range(rounds):
        msgs += [msg("user", f"question {r} about recipes " + "q" * 80)]
        msgs += [msg("assistant", f"answer {r} " + "a" * 160)]
    return msgs


def test_full_sections_in_order_with_replay_right_before_tail() -> None:
    messages = [*long_chat(), msg("user", "Plan snacks; remember the peanut allergy and budget.")]
    items = [
        item("goal", "plan next week's meals for four", 1, "goal", importance=0.9),
        item("nut", "son has a peanut allergy, no nuts at all", 3, importance=1.0),
        item("budget", "weekly budget 450 yuan", 5, replaces="600 yuan"),
        item("sugar", "husband must limit sugar", 7),
        item("oven", "no oven at home", 9, "fact"),
        item("rule", "always list the allergy check", 11, "directive"),
        item("snack", "snacks must be peanut free and cheap within budget", 13),
        item("old", "budget 600 yuan", 4, status="superseded"),
    ]
    inp = make_input(messages, 900, items=items, conflict_notes=["Lunch at 12 or 13? ask."])
    ctx = FullAssembler().assemble(inp)
    check_structure(ctx, inp, count)
    names = [s.name for s in ctx.sections]
    assert names == [
        "system",
        "anchors",
        "working_memory",
        "summary",
        "recent",
        "memory_delta",
        "recalled",
        "replay",
        "tail",
    ]
    memory_msg, replay_msg = ctx.messages[1], ctx.messages[-2]
    assert memory_msg["role"] == "system"
    assert memory_msg["content"].startswith(MEMORY_HEADER)
    assert replay_msg["content"].startswith(REPLAY_HEADER)
    replay_lines = [ln for ln in replay_msg["content"].splitlines()[1:] if "[" in ln]
    assert 1 <= len(replay_lines) <= 3
    assert "Lunch at 12 or 13" in replay_msg["content"]
    assert "- [constraint] weekly budget 450 yuan (replaces: 600 yuan)" in memory_msg["content"]
    assert "budget 600 yuan\n" not in memory_msg["content"] + "\n"
    assert "old" not in ctx.used_item_ids
    # Anchors first, then the rest in source order: a stable prefix.
    lines = memory_msg["content"].splitlines()[1:]
    assert lines[0].endswith("plan next week's meals for four")
    anchors = next(s.count for s in ctx.sections if s.name == "anchors")
    by_line = {render_item_line(it): it.source_ordinal for it in items}
    ordinals = [by_line[ln] for ln in lines[anchors:]]
    assert len(ordinals) >= 2
    assert ordinals == sorted(ordinals)


def test_replay_is_limited_to_three() -> None:
    items = [item(f"c{i}", f"peanut rule number {i} about snacks", i) for i in range(8)]
    messages = [*long_chat(10), msg("user", "which snacks are peanut safe? rule about snacks")]
    inp = make_input(messages, 600, items=items)
    ctx = FullAssembler().assemble(inp)
    check_structure(ctx, inp, count)
    replayed = [c for c in ctx.candidates if c.decision == "replayed"]
    assert len(replayed) == 3
    assert ctx.messages[-2]["content"].count("\n- [") == 3


def test_working_memory_capped_by_share_lowest_score_dropped() -> None:
    items = [item(f"f{i}", f"fact number {i} " + "v" * 40, i, "fact") for i in range(60)]
    items.append(item("pin", "pinned: the user is called Lin", 0, "fact", pinned=True))
    messages = [*long_chat(), msg("user", "go on")]
    inp = make_input(messages, 1000, items=items)
    ctx = FullAssembler().assemble(inp)
    check_structure(ctx, inp, count)
    history_budget = 1000 - sum(t.tokens for t in (*inp.system, *inp.tail))
    memory = sum(s.tokens for s in ctx.sections if s.name in ("anchors", "working_memory"))
    # Overflowing items may borrow beyond the share, out of recall's.
    p = FullParams()
    assert 0 < memory <= int(history_budget * (p.memory_share + p.memory_borrow_share))
    assert "pin" in ctx.used_item_ids
    dropped = [c for c in ctx.candidates if c.reason == "over working-memory share"]
    assert dropped
    kept_scores = [
        c.score for c in ctx.candidates if c.section == "working_memory" and c.decision == "kept"
    ]
    assert min(kept_scores) >= max(c.score for c in dropped)
    assert len(ctx.messages[1]["content"].splitlines()) == 1 + len(ctx.used_item_ids)


def test_user_items_placed_before_inferred_ones() -> None:
    inferred = MemoryItem("inf", "inferred", "x", "likes spicy " + "s" * 60, "assistant", 40)
    users = [item(f"u{i}", f"user fact {i} " + "u" * 60, i, "fact") for i in range(3)]
    messages = [*long_chat(), msg("user", "spicy?")]
    # Room for exactly the three user lines: the fresher inferred item must yield.
    needed = count(MEMORY_HEADER) + 4 + sum(count(render_item_line(u)) + 1 for u in users)
    mandatory = sum(message_tokens(m, count) for m in (messages[0], messages[-1]))
    inp = make_input(messages, mandatory + int(needed / 0.4) + 1, items=[inferred, *users])
    # Plain facts have a smaller share of their own (`incidental_share`); here
    # they may take the block's whole share, which is what is under test.
    ctx = FullAssembler(FullParams.model_validate({"incidental_share": 0.4})).assemble(inp)
    assert "inf" not in ctx.used_item_ids
    assert set(ctx.used_item_ids) == {"u0", "u1", "u2"}


def test_pending_item_is_marked() -> None:
    line = render_item_line(item("p", "deliver on\n Wednesday", 3, status="pending"))
    assert line.startswith("- [constraint] deliver on Wednesday (pending")
    assert "\n" not in line


def test_summary_buffer_places_summary_then_recent() -> None:
    messages = [*long_chat(), msg("user", "next?")]
    inp = make_input(messages, 800, summary="User plans meals; peanut allergy.")
    ctx = SummaryBufferAssembler().assemble(inp)
    check_structure(ctx, inp, count)
    assert ctx.messages[1]["content"].endswith("User plans meals; peanut allergy.")
    assert ctx.messages[2]["role"] == "user"  # the window opens on a question


def test_window_keeps_newest_turns_only() -> None:
    messages = [*long_chat(), msg("user", "next?")]
    inp = make_input(messages, 600)
    ctx = WindowAssembler().assemble(inp)
    check_structure(ctx, inp, count)
    kept = [c for c in ctx.candidates if c.kind == "turn" and c.decision == "kept"]
    assert kept
    assert all(int(c.ref) > 40 for c in kept)
    assert ctx.messages[1]["role"] == "user"


def test_with_tiktoken_cl100k(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        pytest.skip("litellm (bundled tiktoken files) not installed")
    monkeypatch.setenv(
        "TIKTOKEN_CACHE_DIR", str(Path(spec.origin).parent / "litellm_core_utils" / "tokenizers")
    )
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.get_encoding("cl100k_base")

    def cl100k(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    messages = [msg("system", "你是一个家庭膳食规划助手。")]
    for r in range(20):
        messages += [msg("user", f"第{r}轮：小儿子对坚果过敏，预算每周450元，老公控糖。" * 3)]
        messages += [call(f"k{r}", f"m{r}"), result(f"m{r}", "菜谱" * 30), result(f"k{r}", "{}")]
        messages += [msg("assistant", f"Round {r} plan: steamed fish, no peanuts. " * 4)]
    messages.append(msg("user", "把所有要求完整列一遍：坚果过敏、预算和控糖。"))
    items = [
        item("nut", "小女儿对坚果过敏，榛子酱也不能碰", 1, importance=1.0),
        item("budget", "每周买菜预算450元", 30, replaces="600元"),
        item("sugar", "老公控糖，主食和甜的少一点", 1),
    ]
    for budget in (60, 300, 700, 1500):
        inp = make_input(messages, budget, cl100k, items=items)
        ctx = FullAssembler().assemble(inp)
        check_structure(ctx, inp, cl100k)
    assert "每周买菜预算450元 (replaces: 600元)" in ctx.messages[1]["content"]


# --- property test -----------------------------------------------------------------

WORDS = ["peanut", "budget", "friday", "never", "450", "坚果", "预算", "周五", "不要", "\n"]
TEXT = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.text(max_size=30),
    st.text(alphabet="xyz ", min_size=300, max_size=1500),
)
SHORT_TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    msgs = [msg("system", draw(TEXT)) for _ in range(draw(st.integers(0, 2)))]
    next_id = iter(range(10_000))
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools", "orphan", "partial"]))
        kind = kind if kind not in ("orphan", "partial") or draw(st.booleans()) else "user"
        if kind in ("user", "assistant"):
            msgs.append(msg(kind, draw(TEXT)))
        elif kind == "orphan":
            msgs.append(result(f"o{next(next_id)}", draw(TEXT)))
        else:
            ids = [f"t{next(next_id)}" for _ in range(draw(st.integers(1, 3)))]
            msgs.append(call(*ids, args=json.dumps({"q": draw(TEXT)})))
            answered = draw(st.permutations(ids))
            if kind == "partial":
                answered = answered[: len(answered) - 1]
            msgs += [result(i, draw(TEXT)) for i in answered]
    msgs.append(msg("user", draw(TEXT)))
    if draw(st.booleans()):
        ids = [f"t{next(next_id)}" for _ in range(draw(st.integers(1, 3)))]
        msgs.append(call(*ids))
        msgs += [result(i, draw(TEXT)) for i in draw(st.permutations(ids))]
    return msgs


ITEMS = st.lists(
    st.builds(
        MemoryItem,
        id=st.uuids().map(str),
        type=st.sampled_from(["directive", "constraint", "fact", "goal", "inferred"]),
        slot=st.just("s"),
        value=st.one_of(SHORT_TEXT, TEXT),
        source=st.sampled_from(["user", "assistant"]),
        source_ordinal=st.integers(0, 40),
        importance=st.floats(0, 1),
        status=st.sampled_from(["active", "active", "pending", "superseded"]),
        replaces=st.one_of(st.none(), SHORT_TEXT),
        pinned=st.booleans(),
    ),
    max_size=8,
    unique_by=lambda it: it.id,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=conversations(),
    items=ITEMS,
    notes=st.lists(TEXT, max_size=2),
    summary=st.one_of(st.none(), TEXT),
    slack=st.floats(-0.3, 1.2),
    which=st.sampled_from(range(len(MANAGED))),
)
def test_property_budget_and_structure(
    messages: list[dict[str, Any]],
    items: list[MemoryItem],
    notes: list[str],
    summary: str | None,
    slack: float,
    which: int,
) -> None:
    inp = make_input(messages, 1, items=items, conflict_notes=notes, summary=summary)
    # Budgets around the interesting range: from below the mandatory part
    # (slack < 0) to above the whole conversation (slack > 1).
    mandatory = sum(t.tokens for t in (*inp.system, *inp.tail))
    optional = sum(t.tokens for t in inp.history)
    inp = replace(inp, budget=max(1, mandatory + int(slack * max(optional, 20))))
    ctx = MANAGED[which].assemble(inp)
    check_structure(ctx, inp, count)
