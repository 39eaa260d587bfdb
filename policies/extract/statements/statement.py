"""What a statement is: the candidate memory item one sentence yields, and where it sits.

Every other module of the package builds or inspects a `Statement`; the value kinds
that count as concrete, the vocabulary several deciders share (hard limits, stories,
small talk) and the small text helpers live here so that each decider reads the
same definitions.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from policies.language.cues import MEMO, Cues
from policies.language.dates import strip_marker
from policies.language.matching import weighted_terms
from policies.language.social import strip_filler
from policies.language.value_roles import example_spans, is_example
from policies.language.values import Value, extract_values
from policies.rulebook import Joined
from policies.types import ItemType

NARRATIVE = Joined("statements", "story_told")


CHITCHAT = Joined("statements", "chitchat")


# Hard limits rank first: safety (allergies, injuries, surgery), absolute words.
HARD_LIMIT = Joined("statements", "hard_limit")


STRONG_KINDS = frozenset(
    {"money", "percent", "date", "time", "qty", "label", "grade", "version", "id", "freq", "title",
     "bound"}
)  # fmt: skip


RELEVANT_OVERLAP = 1.0


@dataclass(slots=True)
class Statement:
    """One candidate memory item from a user message."""

    index: int  # sentence position in the message
    text: str  # verbatim value
    cues: Cues
    values: tuple[Value, ...]
    type: ItemType
    importance: float
    revoke: bool = False
    reported: bool = False
    consumed: bool = False  # merged into another statement's item
    restore: bool = False  # "back to the original": undo the latest revision
    correction: bool = False  # "sorry, I meant…", "是我记错了": the speaker fixes a statement
    contrast: tuple[str, ...] = ()  # what it says is no longer so ("not the 14th", "不是蓝卡")
    # Strongest change cue in this sentence or an earlier one of its message:
    # "Change of plan on comments. From now on post them publicly." revises,
    # but a sentence *before* the cue does not.
    change: int = 0

    @property
    def strong_values(self) -> tuple[Value, ...]:
        """Values a revision can change (bare numbers included: "5000" → "6000")."""
        # An example ("group them under time headings, like 10:00") sets nothing.
        spans = example_spans(self.text)
        return tuple(
            v for v in self.values
            if (v.kind in STRONG_KINDS or v.kind == "number")
            and not is_example(self.text, v, spans)
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SentencePlace:
    """Where a sentence sits: what its message and the session say about it."""

    topic: Container[str]
    opening: bool  # the session's first user message
    first: bool  # no statement kept before it in that message
    aside: bool  # at or after an aside marker ("totally unrelated", "顺便问")
    before_question: bool  # the next sentence is a question
    after_question: bool  # the previous sentence was one ("Any sci-fi tips? Something gripping.")
    reported: bool
    listed: bool  # a line under a "Requirements:" / "要求如下：" header
    # The sentence before was someone else's wish ("Mrs. Zhou wants us to…"): what the
    # user says against it ("But we teach simplified") is the user's own decision.
    answering_reported: bool = False


def clean(sentence: str) -> str:
    """Verbatim sentence minus a leading timestamp, leading filler and trailing separators."""
    return strip_filler(strip_marker(sentence)).rstrip("；;，,、 ")


def semicolon_after(text: str) -> str:
    return "；" if re.search(r"[\u3000-\u9fff]$", text) else "; "


def join_sentences(a: str, b: str) -> str:
    sep = "" if re.search(r"[\u3000-\u9fff]$", a) else " "
    return a + sep + b


def has_strong_value(text: str) -> bool:
    return any(v.kind in STRONG_KINDS for v in extract_values(text))


def cue_free_memo(text: str) -> str:
    m = MEMO.search(text)
    return text if m is None else text[: m.start()] + " " + text[m.end() :]


def content_word_count(text: str) -> int:
    return sum(1 for w in weighted_terms(text).values() if w >= 1)
