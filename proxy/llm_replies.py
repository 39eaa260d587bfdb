"""Recorded model replies: the LLM-backed policies offline (`memproxy eval --llm-replies`).

A recording is JSONL, one prompt a line: `{"hash": ..., "messages": [...],
"reply": "..."}`. `hash` is `prompt_hash(messages)` (the messages the policy
sent, canonical JSON); `messages` is there for whoever reads or writes the
file; `reply` is the model's text (null: not answered yet). Replaying, a
prompt with a recorded reply gets it, and one without fails as a provider
error would, so the policy's fallback (the rules) takes over and is counted.
`--llm-record FILE` writes every prompt asked, with the reply it got (null
when none), in the same form: fill in the nulls (by hand), or let a real
model answer what the recording lacks (`--llm-model NAME`, a model_list model
of your config), and the file answers the next run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from policies.llm.calls import Complete, LLMReply


class NoRecordedReply(LookupError):
    """The recording holds no reply to this prompt: the rules' answer stands."""


def prompt_hash(messages: list[dict[str, Any]]) -> str:
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def load_replies(path: Path) -> dict[str, str]:
    """hash -> reply of a recording; ValueError naming the line that is not one."""
    replies: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key, reply = row["hash"], row.get("reply")
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f"{path}:{n}: not a recorded reply (JSON with hash and reply)"
            ) from None
        if isinstance(reply, str):
            replies[str(key)] = reply
    return replies


class RecordedReplies:
    """`complete(messages)` answered from a recording, counting what it could not.

    `live` (set once the upstream runs): a real model asked for what the
    recording lacks; its replies are recorded like the others."""

    def __init__(self, replies: dict[str, str], record: Path | None = None) -> None:
        self.replies, self.record = replies, record
        self.live: Complete | None = None
        self.asked = self.answered = self.live_answered = 0
        self.missing: list[str] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> LLMReply:
        key = prompt_hash(messages)
        self.asked += 1
        reply = self.replies.get(key)
        answer = LLMReply(reply) if reply is not None else None
        failure: Exception | None = None
        if answer is None and self.live is not None:
            try:
                answer = await self.live(messages)
                self.live_answered += 1
            except Exception as exc:  # recorded as unanswered, then the policy's fallback
                failure = exc
        if self.record is not None:
            row = {"hash": key, "messages": messages, "reply": answer.text if answer else None}
            with self.record.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        if answer is None:
            self.missing.append(key)
            if failure is not None:
                raise failure
            raise NoRecordedReply(f"no recorded reply for prompt {key}")
        if reply is not None:
            self.answered += 1
        return answer

    def counts(self) -> dict[str, Any]:
        out = {"asked": self.asked, "answered": self.answered, "missing": len(self.missing)}
        if self.live is not None:
            out["live"] = self.live_answered
        return out
