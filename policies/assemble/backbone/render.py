"""Rendering frozen units at their levels: the user's words verbatim or
condensed, each assistant reply reduced to its digest (`policies.assemble.digest`),
the annotations beside the statement they concern."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policies.assemble.backbone.knowledge import Knowledge, informative, repeats_changed
from policies.assemble.backbone.params import (
    CONDENSED_PREFIX,
    FULL_DIGEST,
    NOTE_PREFIX,
    BackboneParams,
)
from policies.assemble.backbone.restated import Restated
from policies.assemble.backbone.tools import tool_group
from policies.assemble.backbone.units import Unit
from policies.assemble.budget import message_tokens
from policies.assemble.digest import digest_assistant
from policies.memory.staleness import StaleFilter
from policies.types import Turn


@dataclass(slots=True)
class Rendered:
    messages: list[dict[str, Any]]
    tokens: int


class Renderer:
    """Renders frozen units at their levels; memoises per (unit, levels)."""

    def __init__(
        self,
        units: Sequence[Unit],
        next_user: Sequence[str],
        knowledge: Knowledge,
        stale: StaleFilter | None,
        restated: Restated,
        replaced: frozenset[str],
        p: BackboneParams,
        count: Any,
    ) -> None:
        self.units, self.next_user, self.k = units, next_user, knowledge
        self.stale, self.replaced, self.p, self.count = stale, replaced, p, count
        self.restated = restated
        self._memo: dict[tuple[int, int, int, frozenset[str] | None, bool], Rendered] = {}
        # Per unit index: the annotations it may show (absent: all of them).
        self.shown_notes: dict[int, frozenset[str]] = {}
        # Unit indexes whose digests keep, for now, lines with a figure a later
        # turn changed (`policies.assemble.backbone.annotations.defer_annotations`).
        self.held: set[int] = set()
        # What overflow works out once per layout, whichever prefix of the units
        # it fits (`policies.assemble.backbone.overflow`: chatter, new figures).
        self.chatter: set[int] | None = None
        self.new_values: set[int] | None = None

    def render(self, i: int) -> Rendered:
        u = self.units[i]
        key = (i, u.user_level, u.assistant_level, self.shown_notes.get(i), i in self.held)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._render(i, u)
        return hit

    def notes(self, i: int, ordinal: int) -> list[tuple[str, str]]:
        """The annotations unit `i` (its user turn at `ordinal`) shows."""
        notes = self.k.notes.get(ordinal, [])
        allowed = self.shown_notes.get(i)
        return notes if allowed is None else [n for n in notes if n[0] in allowed]

    def _tokens(self, messages: list[dict[str, Any]], turns: dict[int, Turn]) -> int:
        total = 0
        for m in messages:
            turn = turns.get(id(m))
            total += turn.tokens if turn is not None else message_tokens(m, self.count)
        return total

    def _render(self, i: int, u: Unit) -> Rendered:
        out: list[dict[str, Any]] = []
        verbatim: dict[int, Turn] = {}
        if u.user is not None and u.user_level == 2:
            out.append(u.user.raw)
            verbatim[id(u.user.raw)] = u.user
        elif u.user is not None and u.user_level == 1:
            condensed = self._condensed(u.user)
            if condensed:
                out.append({"role": "user", "content": CONDENSED_PREFIX + condensed})
        if u.assistant_level > 0:
            out += self._assistant(i, u, u.user is not None and u.user_level == 2)
        elif u.user is not None and u.user_level == 2 and self.notes(i, u.user.ordinal):
            # The reply went for room; what changed since still stands beside the words.
            notes = [NOTE_PREFIX + n for _, n in self.notes(i, u.user.ordinal)]
            out.append({"role": "assistant", "content": "\n".join(notes)})
        elif out and u.groups and self.p.placeholder:
            out.append({"role": "assistant", "content": self.p.placeholder})
        return Rendered(out, self._tokens(out, verbatim))

    def condensable(self, turn: Turn) -> bool:
        """Whether its informative sentences are much shorter than the turn."""
        kept = sum(len(x) for x in informative(turn.text, "user", self.p.summarizer))
        return kept <= len(turn.text) * (1 - self.p.condense_saving)

    def _condensed(self, turn: Turn) -> str:
        sentences = list(informative(turn.text, "user", self.p.summarizer))
        if self.stale:
            sentences = self.stale.clean(sentences, set(), turn.ordinal, "user")
        return " ".join(sentences)

    def _assistant(self, i: int, u: Unit, annotate: bool) -> list[dict[str, Any]]:
        notes = []
        if annotate and u.user is not None:
            notes = [NOTE_PREFIX + n for _, n in self.notes(i, u.user.ordinal)]
        out: list[dict[str, Any]] = []
        for group in u.groups:
            head = group[0]
            if head.role == "assistant" and head.tool_call_ids:
                out += self._tool_group(group, u.assistant_level)
                continue
            if u.assistant_level < FULL_DIGEST or head.role != "assistant":
                continue
            digest = digest_assistant(
                head.text,
                self.next_user[i],
                self.p.assistant_sentences,
                self.p.assistant_max_chars,
            )
            if digest:
                held = i in self.held
                digest = "\n".join(
                    line
                    for line in digest.splitlines()
                    if not self._outdated(line, head.ordinal, held)
                )
            if digest:
                out.append({"role": "assistant", "content": digest})
        if notes:
            text = "\n".join(notes)
            if out and out[-1]["role"] == "assistant" and isinstance(out[-1].get("content"), str):
                if not out[-1].get("tool_calls"):
                    out[-1] = {**out[-1], "content": f"{text}\n{out[-1]['content']}"}
                else:
                    out.append({"role": "assistant", "content": text})
            else:
                out.append({"role": "assistant", "content": text})
        if not out and u.groups and self.p.placeholder:
            out.append({"role": "assistant", "content": self.p.placeholder})
        return out

    def _outdated(self, line: str, ordinal: int, held: bool) -> bool:
        """A line of the assistant's (its turn at `ordinal`) that repeats a value the
        user changed since, or (unless `held`) states a figure a later turn gave
        another figure."""
        if self.stale is not None and repeats_changed(self.stale, line):
            return True
        return not held and self.restated.outdated(line, ordinal)

    def _tool_group(self, group: list[Turn], level: int) -> list[dict[str, Any]]:
        return tool_group(group, level, self.replaced, self.stale, self.p)
