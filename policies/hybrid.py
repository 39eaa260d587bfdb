"""The hybrid extractor: the rules decide, a model settles their uncertain links.

`memory.extractor: hybrid` keeps the rules on the response path, as every
extractor does. Off it, in session order, the request's turns are read by the
rules again and their uncertain links (`policies.extract.uncertain`: a new
value of the same measure with no cue, a revision naming no subject, a pending
conflict, a near miss) go to the model in one JSON prompt per request: for
each, is the new statement a revision of the earlier item, a separate thing,
or does it withdraw it? The reply is validated (one retry on invalid output);
the verdicts are applied as memory ops and the turns folded once more with
them. On an error, a timeout or invalid output twice, the rules' ops stand.

The prompt holds texts and turn numbers only, never item ids, so that the same
conversation asks the same prompt (`memproxy eval --llm-replies` answers it
from a recording by its hash).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from policies.base import ExtractionPolicy
from policies.extract.uncertain import (
    Decided,
    Question,
    Verdict,
    apply_verdicts,
    uncertain_links,
)
from policies.llm.calls import Complete, LLMFailure, PolicyCall, ask_json
from policies.memory.reducer import apply_extraction
from policies.types import Extraction, ExtractionContext, MemoryItem, Turn

# (the items so far, the position of the turn in the fold) -> its context.
ContextFor = Callable[[Sequence[MemoryItem], int], ExtractionContext]

HYBRID_SYSTEM = """You check a chat assistant's memory links.
Each question gives an earlier item (what the user said before), a new
statement from a later user message, and that message. Decide for each:
- "revised": the same measure of the same subject; the new value replaces the old.
- "separate": something else (another person, another object, a part and a
  whole such as a deposit and a total); both stand.
- "withdrawn": the new statement withdraws the earlier item and sets nothing
  in its place.
- "unsure": the words do not say.
Reply with one JSON object only:
{"answers": [{"q": <question number>, "verdict": "revised|separate|withdrawn|unsure"}]}"""

_MESSAGE_CHARS = 600


class _AnswerOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    q: int
    verdict: Verdict


class _AnswersOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answers: list[_AnswerOut] = Field(default_factory=list, max_length=64)


def _numbered(count: int) -> Callable[[_AnswersOut], None]:
    def check(out: _AnswersOut) -> None:
        seen: set[int] = set()
        for answer in out.answers:
            if not 1 <= answer.q <= count:
                raise ValueError(f"q {answer.q} is not a question number (1..{count})")
            if answer.q in seen:
                raise ValueError(f"q {answer.q} is answered twice")
            seen.add(answer.q)

    return check


@dataclass(slots=True)
class Refined:
    """The request's turns read again with the model's verdicts."""

    items: list[MemoryItem]
    results: list[tuple[int, Extraction]]
    call: PolicyCall | None  # None: the rules were sure of everything, nothing asked
    changed: bool  # some verdict changed the rules' ops
    decided: list[dict[str, Any]] = field(default_factory=list)


class HybridExtractor:
    """The rules, with their uncertain links settled by the model (`refine`)."""

    name: str = "hybrid"

    def __init__(
        self,
        complete: Complete,
        rules: ExtractionPolicy,
        timeout_s: float = 30.0,
        max_questions: int = 8,
    ) -> None:
        self.complete, self.rules = complete, rules
        self.timeout_s, self.max_questions = timeout_s, max_questions

    def extract(self, turn: Turn, ctx: ExtractionContext) -> Extraction:
        return self.rules.extract(turn, ctx)

    def _fold(
        self,
        turns: Sequence[Turn],
        items: list[MemoryItem],
        context: ContextFor,
        verdicts: Mapping[Any, Verdict],
    ) -> tuple[list[MemoryItem], list[tuple[int, Extraction]], list[Question], list[Decided]]:
        """The rules over `turns` from `items`, the verdicts applied where asked."""
        results: list[tuple[int, Extraction]] = []
        asked: list[Question] = []
        decided: list[Decided] = []
        for k, turn in enumerate(turns):
            ctx = context(items, k)
            extraction = self.rules.extract(turn, ctx)
            if turn.role == "user":
                questions = uncertain_links(extraction, ctx.items, turn.ordinal)
                asked += questions
                if verdicts:
                    extraction, done = apply_verdicts(extraction, questions, verdicts)
                    decided += done
            results.append((turn.ordinal, extraction))
            if extraction.ops:
                items = apply_extraction(items, extraction, turn.ordinal)
        return items, results, asked, decided

    def prompt(self, questions: Sequence[Question], turns: Sequence[Turn]) -> list[dict[str, Any]]:
        said = {t.ordinal: t.text for t in turns}
        listing = []
        for n, q in enumerate(questions, 1):
            row: dict[str, Any] = {"q": n, "earlier": q.old.value, "new": q.new.value}
            message = " ".join(said.get(q.ordinal, "").split())
            if message and message != q.new.value:
                row["message"] = message[:_MESSAGE_CHARS]
            listing.append(row)
        user = json.dumps({"questions": listing}, ensure_ascii=False)
        return [{"role": "system", "content": HYBRID_SYSTEM}, {"role": "user", "content": user}]

    async def refine(
        self, turns: Sequence[Turn], items: list[MemoryItem], context: ContextFor
    ) -> Refined:
        """`turns` folded over `items` (their state before the first) by the rules, then
        once more with the model's verdicts on their uncertain links: one model call."""
        folded, results, asked, _ = self._fold(turns, items, context, {})
        questions = _unique(asked)[: self.max_questions]
        if not questions:
            return Refined(folded, results, None, False)
        call = PolicyCall("extractor", turns[-1].ordinal, questions=len(questions))
        try:
            out = await ask_json(
                self.complete,
                self.prompt(questions, turns),
                _AnswersOut,
                call,
                self.timeout_s,
                _numbered(len(questions)),
            )
        except LLMFailure as exc:
            call.outcome = f"fallback: {exc}"
            return Refined(folded, results, call, False)
        verdicts = {questions[a.q - 1].key: a.verdict for a in out.answers}
        refolded, refined, _, decided = self._fold(turns, items, context, verdicts)
        changed = any(d.changed for d in decided)
        # Unchanged, the rules' items stay as they are (and keep their ids): a
        # decision names the new item only when the refolded items are kept.
        first = turns[0].ordinal
        rows = [
            d.as_dict(
                d.question.new.id if changed else "",
                d.question.old.id if changed or d.question.old.source_ordinal < first else "",
            )
            for d in decided
        ]
        call.decisions = rows
        if not changed:
            return Refined(folded, results, call, False, rows)
        return Refined(refolded, refined, call, True, rows)


def _unique(questions: Sequence[Question]) -> list[Question]:
    seen: set[tuple[int, str, str, str, int]] = set()
    out = []
    for q in questions:
        if q.key not in seen:
            seen.add(q.key)
            out.append(q)
    return out


__all__ = ["HYBRID_SYSTEM", "ContextFor", "HybridExtractor", "Refined"]
