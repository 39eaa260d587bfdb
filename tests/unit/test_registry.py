"""The registry builds every policy by the name config.yaml uses, LLM-backed ones
included, around the completion callable the proxy injects."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from policies.llm.calls import LLMReply
from policies.llm.extractor import LLMExtractor
from policies.llm.summarizer import LLMSummarizer
from policies.registry import (
    ASSEMBLERS,
    EXTRACTORS,
    PRESET_NAMES,
    SUMMARIZERS,
    Injected,
    Policies,
)
from policies.types import ExtractionContext, Turn

ROOT = Path(__file__).resolve().parents[2]
SUMMARISING = ("summary_buffer", "full", "layered")


class Recorder:
    """A completion callable that answers with a fixed JSON object and keeps the prompts."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.prompts: list[list[dict[str, Any]]] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> LLMReply:
        self.prompts.append(messages)
        return LLMReply(json.dumps(self.reply), prompt_tokens=7, completion_tokens=3)


def test_every_preset_is_built_by_name_with_its_assembler() -> None:
    policies = Policies.from_settings("full")
    assert set(PRESET_NAMES) == set(ASSEMBLERS)
    for name in PRESET_NAMES:
        preset = policies.preset(name)
        assert preset.name == name
        assert preset.assembler is not None
        assert preset.assembler.name == name
        assert (preset.extractor is not None) == ASSEMBLERS[name].extracts
        assert (preset.summarizer is not None) == (name in SUMMARISING)


def test_rules_build_no_refiners() -> None:
    policies = Policies.from_settings("full")
    for name in PRESET_NAMES:
        preset = policies.preset(name)
        assert preset.extract_refiner is None
        assert preset.summary_refiner is None


def test_llm_names_refine_around_the_rules_with_the_injected_completion() -> None:
    complete = Recorder({"operation": "irrelevant", "items": []})
    policies = Policies.from_settings(
        "full", extractor="llm", summarizer="llm", injected=Injected(complete, 4.0)
    )
    full = policies.preset("full")
    assert isinstance(full.extract_refiner, LLMExtractor)
    assert full.extract_refiner.complete is complete
    assert full.extract_refiner.fallback is full.extractor
    assert full.extract_refiner.timeout_s == 4.0
    for name in SUMMARISING:
        preset = policies.preset(name)
        assert isinstance(preset.summary_refiner, LLMSummarizer)
        assert preset.summary_refiner.fallback is preset.summarizer
    assert policies.preset("window").summary_refiner is None
    assert policies.preset("raw").extract_refiner is None
    assert policies.preset("user_turns").extract_refiner is None


async def test_a_built_llm_extractor_asks_the_injected_completion() -> None:
    complete = Recorder({"operation": "irrelevant", "items": []})
    preset = Policies.from_settings("full", extractor="llm", injected=Injected(complete)).preset(
        None
    )
    assert preset.extract_refiner is not None
    text = "Thanks, that reads well."
    turn = Turn(0, "user", text, {"role": "user", "content": text}, 6)
    ctx = ExtractionContext("", (), 0, lambda: "item-1")
    extraction, call = await preset.extract_refiner.extract_async(turn, ctx)
    assert len(complete.prompts) == 1
    assert call is not None
    assert call.outcome == "ok"
    assert extraction.operation == "irrelevant"


@pytest.mark.parametrize("role", ["extractor", "summarizer"])
def test_an_llm_policy_without_a_completion_is_a_config_error(role: str) -> None:
    with pytest.raises(ValueError, match=f"memory.{role}: llm needs"):
        Policies.from_settings("full", **{role: "llm"})


@pytest.mark.parametrize(
    ("role", "table"), [("extractor", EXTRACTORS), ("summarizer", SUMMARIZERS)]
)
def test_an_unknown_policy_name_lists_the_known_ones(role: str, table: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=f"memory.{role}: unknown") as err:
        Policies.from_settings("full", **{role: "oracle"})
    assert all(name in str(err.value) for name in table)


def test_bad_params_name_the_config_key() -> None:
    with pytest.raises(ValueError, match=r"memory.policy_params.full: recall_share"):
        Policies.from_settings("full", {"full": {"recall_share": 7}})


def test_policies_never_import_the_proxy() -> None:
    offenders = []
    for path in sorted((ROOT / "policies").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "proxy"
            ]
    assert offenders == []
