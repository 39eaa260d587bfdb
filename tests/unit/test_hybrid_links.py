"""The rules' uncertain links as questions, and the model's verdicts as ops (pure).

The questions are a layer over the rules: listing them changes no op, and the
hybrid extractor's response-path extraction is the rules' own.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from policies.extract.extraction import RuleExtractor
from policies.extract.uncertain import MODEL_LINKER, apply_verdicts, uncertain_links
from policies.hybrid import HybridExtractor
from policies.llm.calls import LLMReply
from policies.memory.reducer import apply_extraction
from policies.registry import EXTRACTORS, Injected, Policies
from policies.types import (
    Add,
    Conflict,
    Extraction,
    ExtractionContext,
    MemoryItem,
    Revoke,
    Supersede,
    Turn,
)

SYSTEM = "You help me run a community pottery studio."


def turn(ordinal: int, text: str) -> Turn:
    return Turn(ordinal, "user", text, {"role": "user", "content": text}, 8)


def fold(texts: list[str]) -> tuple[list[MemoryItem], Extraction]:
    """The rules over all but the last message; the items then, and the last's extraction."""
    ids = itertools.count(1)
    items: list[MemoryItem] = []
    extraction = Extraction("irrelevant")
    for k, text in enumerate(texts):
        ctx = ExtractionContext(SYSTEM, tuple(items), k, lambda: f"m{next(ids)}")
        extraction = RuleExtractor().extract(turn(k, text), ctx)
        if k < len(texts) - 1:
            items = apply_extraction(items, extraction, k)
    return items, extraction


@pytest.mark.parametrize(
    ("texts", "kind", "linker"),
    [
        # Same unit, another number, no cue, no shared subject word: added, asked.
        (["The kiln firing takes 9 hours.", "It came out at 11 hours on the test run."],
         "added", ""),
        (["开放日预计来40位客人。", "报名的有55位客人。"], "added", ""),
        # Linked by the kind of value alone: asked whether it is one measure.
        (["The glaze order is 12 jars.", "The supplier confirmed 16 jars of glaze."],
         "linked", "implicit"),
        (["小王订了木屋3晚。", "小李订了木屋5晚。"], "linked", "implicit"),
        # A rule against a rule, kept both with the old one pending.
        (["Always reply in short bullet points.", "Reply in long detailed paragraphs."],
         "conflict", "conflict"),
    ],
)  # fmt: skip
def test_uncertain_links_are_listed_without_changing_the_rules_ops(
    texts: list[str], kind: str, linker: str
) -> None:
    items, extraction = fold(texts)
    before = extraction.ops
    (q,) = uncertain_links(extraction, items, 1)
    assert (q.kind, q.linker, q.new.value, q.old.value) == (kind, linker, texts[1], texts[0])
    assert extraction.ops == before


@pytest.mark.parametrize(
    "texts",
    [
        # A change cue names the revision: the rules are sure.
        ["We expect 40 visitors at the open day.", "Actually 55 visitors now, more signed up."],
        ["开放日预计来40位客人。", "现在是55位。"],
        # Different kinds of thing: nothing to ask.
        ["We open at 10am on Saturdays.", "The clay costs $45 a bag."],
        ["场地租金一共8000元。", "周六上午10点开门。"],
    ],
)
def test_sure_links_and_unrelated_values_ask_nothing(texts: list[str]) -> None:
    items, extraction = fold(texts)
    assert uncertain_links(extraction, items, 1) == []


def test_verdicts_on_a_conflict() -> None:
    texts = ["Always reply in short bullet points.", "Reply in long detailed paragraphs."]
    items, extraction = fold(texts)
    (q,) = uncertain_links(extraction, items, 1)
    outcomes = {}
    for verdict in ("revised", "separate", "withdrawn", "unsure"):
        applied, decided = apply_verdicts(extraction, [q], {q.key: verdict})
        after = {i.value: i.status for i in apply_extraction(items, applied, 1)}
        outcomes[verdict] = ([type(op).__name__ for op in applied.ops], after[texts[0]])
        assert [d.verdict for d in decided] == ([] if verdict == "unsure" else [verdict])
    assert outcomes == {
        "revised": (["Supersede"], "superseded"),
        "separate": (["Add"], "active"),
        "withdrawn": (["Revoke", "Add"], "revoked"),
        "unsure": (["Conflict"], "pending"),
    }


def test_a_revised_addition_names_the_value_it_replaced() -> None:
    items, extraction = fold(["开放日预计来40位客人。", "报名的有55位客人。"])
    (q,) = uncertain_links(extraction, items, 1)
    applied, (decided,) = apply_verdicts(extraction, [q], {q.key: "revised"})
    (op,) = applied.ops
    assert (extraction.operation, applied.operation) == ("add", "update")
    assert isinstance(op, Supersede)
    assert (op.old_id, op.linker) == (q.old.id, MODEL_LINKER)
    assert op.item.replaces
    assert "40" in op.item.replaces
    assert op.item.slot == q.old.slot
    assert "40" in op.why
    assert "55" in op.why
    assert decided.changed


def test_separate_on_a_linked_pair_drops_its_echoes() -> None:
    texts = ["The glaze order is 12 jars.", "The supplier confirmed 16 jars of glaze."]
    items, extraction = fold(texts)
    (q,) = uncertain_links(extraction, items, 1)
    applied, _ = apply_verdicts(extraction, [q], {q.key: "separate"})
    assert all(isinstance(op, Add) for op in applied.ops)
    assert [op.item.replaces for op in applied.ops if isinstance(op, Add)] == [None]
    assert not [op for op in applied.ops if isinstance(op, (Supersede, Revoke, Conflict))]


class Scripted:
    """A completion that answers every question with one verdict and keeps the prompts."""

    def __init__(self, verdict: str) -> None:
        self.verdict, self.prompts = verdict, list[list[dict[str, Any]]]()

    async def __call__(self, messages: list[dict[str, Any]]) -> LLMReply:
        self.prompts.append(messages)
        questions = json.loads(messages[1]["content"])["questions"]
        answers = [{"q": q["q"], "verdict": self.verdict} for q in questions]
        return LLMReply(json.dumps({"answers": answers}), 30, 8)


def refine(verdict: str, texts: list[str]) -> tuple[Any, Scripted]:
    complete = Scripted(verdict)
    hybrid = HybridExtractor(complete, RuleExtractor())
    ids = itertools.count(1)
    turns = [turn(k, t) for k, t in enumerate(texts)]

    def context(items: Any, k: int) -> ExtractionContext:
        return ExtractionContext(SYSTEM, tuple(items), k, lambda: f"m{next(ids)}")

    return asyncio.run(hybrid.refine(turns, [], context)), complete


def test_one_call_for_the_request_however_many_questions() -> None:
    texts = [
        "The kiln firing takes 9 hours.",
        "小王订了木屋3晚。",
        "It came out at 11 hours on the test run.",
        "小李订了木屋5晚。",
    ]
    refined, complete = refine("separate", texts)
    assert len(complete.prompts) == 1
    assert len(json.loads(complete.prompts[0][1]["content"])["questions"]) == 2
    assert refined.call is not None
    assert (refined.call.questions, refined.call.prompt_tokens) == (2, 30)
    assert sorted(i.status for i in refined.items) == ["active"] * 4


def test_the_same_conversation_asks_the_same_prompt() -> None:
    texts = ["The kiln firing takes 9 hours.", "It came out at 11 hours on the test run."]
    (_, first), (_, second) = refine("unsure", texts), refine("unsure", texts)
    assert first.prompts == second.prompts


def test_agreeing_verdicts_change_nothing() -> None:
    refined, _ = refine("revised", ["小王订了木屋3晚。", "小李订了木屋5晚。"])
    assert not refined.changed
    assert [d["op"] for d in refined.decided] == ["supersede"]


def test_the_hybrid_registers_with_the_rules_on_the_response_path() -> None:
    assert "hybrid" in EXTRACTORS
    complete = Scripted("unsure")
    preset = Policies.from_settings(
        "full", extractor="hybrid", injected=Injected(complete, 3.0)
    ).preset(None)
    assert isinstance(preset.extract_refiner, HybridExtractor)
    assert preset.extract_refiner.rules is preset.extractor
    assert preset.extract_refiner.timeout_s == 3.0
    assert isinstance(preset.extractor, RuleExtractor)


def test_the_hybrid_without_a_completion_is_a_config_error() -> None:
    with pytest.raises(ValueError, match=r"memory\.extractor: hybrid needs memory\.llm_model"):
        Policies.from_settings("full", extractor="hybrid")
