"""An LLM judge of answers: a rubric prompt, a JSON verdict, validated, one retry.

Two rubrics share the machinery. `check_messages` asks whether one answer gives
one scenario check's final value (`memproxy eval --live --judge`);
`pair_messages` asks, of a recorded `compare` request, whether each arm's answer
follows what the conversation finally settled (`memproxy ab-report --judge`).

The verdict is parsed as JSON (a fenced block or text around the object is
tolerated) and validated with pydantic. Output that fails gets one retry that
says what was wrong; failing twice, or a provider error, is recorded as
"unjudged" with the reason. Nothing here raises on a judge's bad output.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy.answers import Tokens, usage_tokens

if TYPE_CHECKING:
    from proxy.upstream import Upstream

UNJUDGED = "unjudged"
MAX_REASON_CHARS = 600


class CheckVerdict(BaseModel):
    """The judge's reply to the per-check rubric."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["correct", "stale", "missing"]
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)


class ArmVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdict: Literal["correct", "stale", "missing"]
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)


class PairVerdict(BaseModel):
    """The judge's reply to the pairwise rubric (answers shown as A and B)."""

    model_config = ConfigDict(extra="ignore")

    a: ArmVerdict
    b: ArmVerdict
    better: Literal["a", "b", "tie"]


Parsed = TypeVar("Parsed", bound=BaseModel)


@dataclass
class JudgeReply:
    text: str
    usage: Mapping[str, Any] | None


# One judge call: messages in, the reply out; raises on a provider error.
JudgeCall = Callable[[list[dict[str, Any]]], Awaitable[JudgeReply]]


@dataclass
class Judged(Generic[Parsed]):
    parsed: Parsed | None  # None: unjudged
    reason: str = ""  # why it is unjudged
    attempts: int = 0
    usages: list[Mapping[str, Any] | None] = field(default_factory=list)


CHECK_SYSTEM = """You grade one answer of an assistant against one requirement of a \
conversation. The requirement's final, agreed value is given; so are outdated values \
it replaced. Decide:
- "correct": the answer gives the final value (any wording or language that means it);
- "stale": the answer presents an outdated value as the current one (mentioning it as \
the old value that was replaced is fine);
- "missing": the answer gives neither.
Reply with one JSON object only, no prose around it:
{"verdict": "correct" | "stale" | "missing", "reason": "<one short sentence>"}"""

PAIR_SYSTEM = """You compare two answers, A and B, to the last message of a conversation. \
Read the whole conversation: requirements the user stated, revised or withdrawn along \
the way count as they finally stand. For each answer decide:
- "correct": it follows what the conversation finally settled, as far as the last \
message asks for it;
- "stale": it uses a value or rule that was later changed or withdrawn, as if current;
- "missing": it leaves out or contradicts something settled that the last message asks for.
Then say which answer is better on that ground, or "tie".
Reply with one JSON object only, no prose around it:
{"a": {"verdict": "...", "reason": "..."}, "b": {"verdict": "...", "reason": "..."}, \
"better": "a" | "b" | "tie"}"""


def check_messages(check: Mapping[str, Any], question: str, answer: str) -> list[dict[str, Any]]:
    """The per-check rubric for one answer."""
    stale = ", ".join(json.dumps(s, ensure_ascii=False) for s in check.get("stale_any") or ())
    finals = ", ".join(json.dumps(s, ensure_ascii=False) for s in check["expect_any"])
    user = (
        f'Requirement "{check["id"]}" ({check.get("kind", "fact")}).\n'
        f"Final value, said in any of these ways: {finals}\n"
        f"Outdated values: {stale or '(none)'}\n\n"
        f"The user asked:\n<question>\n{question}\n</question>\n\n"
        f"The assistant answered:\n<answer>\n{answer}\n</answer>"
    )
    return [{"role": "system", "content": CHECK_SYSTEM}, {"role": "user", "content": user}]


def pair_messages(
    conversation: Sequence[Mapping[str, Any]], a: str, b: str
) -> list[dict[str, Any]]:
    """The pairwise rubric: the conversation as the client sent it, then both answers."""
    lines = []
    for message in conversation:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        lines.append(f"[{message.get('role')}] {content or ''}")
    user = (
        "<conversation>\n" + "\n\n".join(lines) + "\n</conversation>\n\n"
        f"<answer_a>\n{a}\n</answer_a>\n\n<answer_b>\n{b}\n</answer_b>"
    )
    return [{"role": "system", "content": PAIR_SYSTEM}, {"role": "user", "content": user}]


def parse_verdict(text: str, model: type[Parsed]) -> Parsed:
    """The JSON object in `text`, validated; raises ValueError saying what is wrong."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(problems) from None


async def judge(
    call: JudgeCall, messages: list[dict[str, Any]], model: type[Parsed]
) -> Judged[Parsed]:
    """Ask, validate, retry once on malformed output; never raises on the judge's reply."""
    result: Judged[Parsed] = Judged(None)
    conversation = list(messages)
    for attempt in (1, 2):
        result.attempts = attempt
        try:
            reply = await call(conversation)
        except Exception as exc:  # a provider error: recorded, the run goes on
            result.reason = f"judge error: {getattr(exc, 'message', None) or exc}"
            return result
        result.usages.append(reply.usage)
        try:
            result.parsed = parse_verdict(reply.text, model)
            result.reason = ""
            return result
        except ValueError as exc:
            result.reason = f"malformed verdict twice: {exc}" if attempt == 2 else str(exc)
            conversation += [
                {"role": "assistant", "content": reply.text},
                {
                    "role": "user",
                    "content": f"That reply was not usable ({exc}). Reply with the JSON "
                    "object only, exactly in the form asked.",
                },
            ]
    return result


def judged_tokens(judged: Judged[Any]) -> Tokens:
    total = Tokens()
    for usage in judged.usages:
        total.add(usage_tokens(usage))
    return total


def upstream_judge(upstream: Upstream, model: str) -> JudgeCall:
    """A judge call to a model_list model, straight to the provider (not through memory)."""
    target = upstream.resolve(model)

    async def call(messages: list[dict[str, Any]]) -> JudgeReply:
        completion = await upstream.complete(upstream.build_call(target, messages, {}, False))
        choices = completion.body.get("choices") or [{}]
        message = choices[0].get("message") or {}
        return JudgeReply(str(message.get("content") or ""), completion.usage)

    return call
