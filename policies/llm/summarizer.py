"""The LLM summariser: the turns leaving the context window as summary lines the model
writes, checked against the rule summariser's protected sentences."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from policies.assemble.summary import DatedTurn, RuleSummarizer, render_chunks, sentence_score
from policies.language.cues import negated
from policies.language.values import extract_values, value_signature
from policies.llm.calls import Complete, LLMFailure, PolicyCall, ask_json
from policies.types import SummaryChunk, SummaryLine

SUMMARY_SYSTEM = """You extend the rolling summary of a conversation.
You get the summary so far (do not repeat or rewrite it) and the turns that
now leave the context window. Write at most one short line per turn that
matters; skip chit-chat. Reply with one JSON object only:
{"lines": [{"ordinal": <turn number>, "text": "what the turn established"}]}
Rules: copy numbers, dates, amounts, IDs, names and negations exactly
("don't", "never", "不要"); never present an old value as current when a later
turn changed it."""


class _LineOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ordinal: int
    text: str = Field(min_length=1, max_length=2000)


class _SummaryOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    lines: list[_LineOut] = Field(default_factory=list)


def _in_span(start: int, upto: int) -> Callable[[_SummaryOut], None]:
    def check(out: _SummaryOut) -> None:
        for line in out.lines:
            if not start <= line.ordinal < upto:
                raise ValueError(f"ordinal {line.ordinal} is outside [{start}, {upto})")

    return check


def _missing_protected(rule: SummaryLine | None, text: str) -> list[str]:
    """Protected sentences of the rule line whose values or negation the LLM text lost."""
    if rule is None:
        return []
    have = {value_signature(v) for v in extract_values(text)}
    out = []
    for sentence in rule.sentences:
        if not sentence_score(sentence, rule.role)[1]:
            continue
        wanted = {value_signature(v) for v in extract_values(sentence)}
        if not wanted <= have or (negated(sentence) and not negated(text)):
            out.append(sentence)
    return out


class LLMSummarizer:
    """The model writes the new chunk; protected content is checked against the rules.

    The model only writes lines for the evicted turns (the summary so far is
    context, never rewritten). Any protected sentence (numbers, dates, IDs,
    names, negations) whose values the model's line lost is appended to that
    line verbatim, and a turn the model skipped that had protected content
    keeps its rule-based line: protected content is never paraphrased away.
    """

    name: str = "llm"

    def __init__(self, complete: Complete, fallback: RuleSummarizer, timeout_s: float = 30.0):
        self.complete, self.fallback, self.timeout_s = complete, fallback, timeout_s

    def summarize(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> SummaryChunk:
        return self.fallback.summarize(previous, turns, start, upto)

    def _prompt(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn]
    ) -> list[dict[str, Any]]:
        so_far = "\n".join(render_chunks(previous)) or "(empty)"
        listing = "\n".join(
            json.dumps(
                {"ordinal": d.turn.ordinal, "date": d.date, "role": d.turn.role,
                 "text": d.turn.text[:4000]},
                ensure_ascii=False,
            )
            for d in turns
            if d.turn.role in ("user", "assistant", "tool") and d.turn.text.strip()
        )  # fmt: skip
        user = f"Summary so far:\n{so_far}\n\nTurns leaving the window:\n{listing}"
        return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": user}]

    async def summarize_async(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> tuple[SummaryChunk, PolicyCall]:
        rules = self.fallback.summarize(previous, turns, start, upto)
        call = PolicyCall("summarizer", upto)
        try:
            out = await ask_json(
                self.complete,
                self._prompt(previous, turns),
                _SummaryOut,
                call,
                self.timeout_s,
                _in_span(start, upto),
            )
        except LLMFailure as exc:
            call.outcome = f"fallback: {exc}"
            return rules, call
        by_ordinal = {ln.ordinal: ln for ln in rules.lines}
        dated = {d.turn.ordinal: d for d in turns}
        written: dict[int, SummaryLine] = {}
        for raw in out.lines:
            source = dated.get(raw.ordinal)
            if source is None or raw.ordinal in written:
                continue
            rule = by_ordinal.get(raw.ordinal)
            text = " ".join(raw.text.split())
            missing = _missing_protected(rule, text)
            written[raw.ordinal] = SummaryLine(
                ordinal=raw.ordinal,
                role=source.turn.role,
                date=source.date,
                sentences=(text, *missing),
                score=rule.score if rule else 1.0,
                protected=bool(rule and rule.protected),
            )
        for ordinal, rule in by_ordinal.items():
            if ordinal not in written and rule.protected:
                written[ordinal] = rule
        lines = tuple(written[o] for o in sorted(written))
        return SummaryChunk(start, upto, lines, "llm"), call
