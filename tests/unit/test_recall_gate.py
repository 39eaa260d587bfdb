"""Which inputs get recalled turns besides questions about the past: a request
to read back what was agreed does, a statement does not unless
`recall_every_input` (its recalled turns would change with every input and be
billed again under prompt caching)."""

from __future__ import annotations

from typing import Any

import pytest

from policies.assemble.backbone import BackboneParams
from tests.unit.test_evidence import FILLER_EN, FILLER_ZH, assemble

EN_FIRST = "[date: 3 March, 2024] Hi! Long week here."
EN_FACT = "We adopted a grey kitten called Pixel yesterday, she hides under the sofa."
ZH_FIRST = "[date: 2024年3月3日] 你好，这周好累。"
ZH_FACT = "我们昨天领养了一只灰色小猫，叫芝麻，一直躲在沙发底下。"


def long_chat(first: str, fact: str, filler: list[str]) -> list[dict[str, Any]]:
    """The fact early, then enough chat that it has to go at a small budget."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful friend."}]
    for text in [first, fact, *filler, *filler, *filler, *filler]:
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": "Sure, happy to help with that."},
        ]
    return messages


def recalled_section(messages: list[dict[str, Any]], asked: str, budget: int, every: bool) -> str:
    ctx = assemble(messages, asked, budget, params=BackboneParams(recall_every_input=every))
    assert ctx.tokens <= budget
    texts = [str(m["content"]) for m in ctx.messages]
    return next((t for t in texts if "Earlier turns" in t), "")


STATEMENT_EN = "The grey kitten called Pixel knocked a glass off the shelf this morning."


def test_a_statement_gets_no_recalled_turns() -> None:
    messages = long_chat(EN_FIRST, EN_FACT, FILLER_EN)
    assert recalled_section(messages, STATEMENT_EN, 420, every=False) == ""


def test_with_recall_every_input_a_statement_gets_them() -> None:
    messages = long_chat(EN_FIRST, EN_FACT, FILLER_EN)
    assert "Pixel" in recalled_section(messages, STATEMENT_EN, 420, every=True)


@pytest.mark.parametrize(
    ("first", "fact", "filler", "asked", "found", "budget"),
    [
        (
            EN_FIRST,
            EN_FACT,
            FILLER_EN,
            "Give me the complete list of everything we settled so far, the kitten Pixel too.",
            "Pixel",
            420,
        ),
        (
            ZH_FIRST,
            ZH_FACT,
            FILLER_ZH,
            "帮我把目前定下来的所有事情完整列一遍，小猫芝麻的事也算上。",
            "芝麻",
            280,
        ),
    ],
)
def test_a_request_to_read_back_what_was_agreed_gets_recalled_turns(
    first: str, fact: str, filler: list[str], asked: str, found: str, budget: int
) -> None:
    messages = long_chat(first, fact, filler)
    assert found in recalled_section(messages, asked, budget, every=False)
