"""What the current input asks of the past: the question decides what recall brings.

A context under a small budget cannot hold a long conversation; it can hold
what the current input needs, if it knows what that is. A request that works
on the current task ("make it shorter", "list everything we settled") needs
the backbone: the user's words and what stands now. A question about
something said long ago ("when did we visit the lake?", "我之前说过预算是多少？")
needs the turns that said it, wherever they sit; for it the recalled evidence
earns a larger share of the room than the frozen backbone.

The kind of question shapes the recall further:

- *temporal* ("when…", "how long before…", "什么时候", "哪天"): the turns of
  both events, with the dates they were said on;
- *own words* ("what did I say about…", "我之前说过…"): the user's own turns;
- *contradiction* ("did I change my mind…", "一开始是怎么说的"): both
  statements, the old and the new, labelled with their dates;
- *bridging* (several things named, "both", "in common", "都"): turns that
  together cover each thing named, rather than the best matches of one.

Rules are data: each has a name, its pattern per script and its examples in
`policies/rules/<lang>/question.yaml` (whole questions in `tests/unit/test_question.py`);
`Question.rules` says which ones fired.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from policies.language.lexicon import Lexicon
from policies.language.questions import is_question, recap_request
from policies.rulebook import Joined

Kind = Literal["lookup", "temporal", "own_words", "contradiction", "bridging"]


@dataclass(frozen=True, slots=True)
class QuestionRule:
    name: str
    kind: Kind
    cue: Lexicon


RULES: tuple[QuestionRule, ...] = (
    QuestionRule("when", "temporal", Lexicon.named("question", "when")),
    QuestionRule("said_by_me", "own_words", Lexicon.named("question", "said_by_me")),
    QuestionRule("changed_mind", "contradiction", Lexicon.named("question", "changed_mind")),
    QuestionRule("several_named", "bridging", Lexicon.named("question", "several_named")),
)

# An information question without its question mark (who, what, when, did
# I...; Chinese questions are read by `policies.language.questions.is_question`), as opposed
# to a request that works on the task ("can you shorten it?").
_ASKS_FACT = Joined("question", "asks_fact", ("en",))
# Work on the task, phrased as a question: the backbone serves it.
_ASKS_WORK = Lexicon.named("question", "asks_work")


# The question points back at something that was said or happened ("what did
# she paint", "when was the trip", "我之前说过"), rather than asking for advice on
# the task ("what's a good gel to start with?"). Only such a question may push
# the frozen backbone aside for evidence: doing so rewrites the prompt's
# middle, which a provider's prompt cache then bills again.
#
# Not "before" (a deadline is "before the launch"), nor any 是…的 (mostly a
# description: "is it a waterproof one?"): only one that stresses where,
# when, how or with whom something happened points back.
PAST_REFERENCE = Lexicon.named("question", "past_reference")
PAST_REFERENCE_RULE = "past_reference"


# A past tense whose subject is an anaphor ("did you make it?", "how was it?",
# "what were they laughing at?") asks about what was just told: its referent
# is in the recent turns, not in the conversation's past. The same tense about
# a named thing ("what did the landlord decide") or with a marker of its own
# ("earlier", "said", "last week") still points back, and so does asking the
# assistant what it said or proposed ("what did you suggest for the dip?"),
# which may lie far back, or how long or how much a thing took ("how long did
# it take…": an expletive "it").
ANAPHORIC_PAST = Lexicon.named("question", "anaphoric_past")


@dataclass(frozen=True, slots=True)
class Question:
    """What the current input asks of the past."""

    kinds: frozenset[Kind]
    rules: tuple[str, ...]  # names of the rules that fired
    # The rule by which it points back at the conversation's past ("": it does
    # not): `PAST_REFERENCE_RULE`, or the assembler's own reading of the input
    # (a question about a speaker of the conversation).
    points_back_by: str = ""

    @property
    def refers_back(self) -> bool:
        return bool(self.points_back_by)

    @property
    def seeks_past(self) -> bool:
        """Whether recalled evidence should take a larger share of the room."""
        return "lookup" in self.kinds


NOT_A_QUESTION = Question(frozenset(), ())


# A sentence and the mark that ends it (the last one may have none).
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def _points_back(text: str) -> bool:
    """Whether what the input asks (its questions; all of it when none is marked
    as one) points back: news told before the question ("the build went red,
    any idea why?") is not a question about the past."""
    sentences = [m.group(0) for m in _SENTENCE.finditer(text)]
    asked = [x for x in sentences if x.rstrip().endswith(("?", "？"))] or [text]
    return any(_past_reference(x) for x in asked)


def _past_reference(sentence: str) -> bool:
    """`PAST_REFERENCE` somewhere outside the anaphoric past tenses (`ANAPHORIC_PAST`)."""
    while (anaphor := ANAPHORIC_PAST.search(sentence)) is not None:
        sentence = sentence[: anaphor.start()] + " " + sentence[anaphor.end() :]
    return PAST_REFERENCE.search(sentence) is not None


@lru_cache(maxsize=1024)
def read_question(text: str) -> Question:
    """The kinds of question `text` (the current user input) is."""
    text = " ".join(text.split())
    if not text or recap_request(text) or _ASKS_WORK.match(text):
        return NOT_A_QUESTION
    if not (is_question(text) or _ASKS_FACT.match(text)):
        return NOT_A_QUESTION
    fired = [r for r in RULES if r.cue.search(text)]
    kinds: set[Kind] = {"lookup", *(r.kind for r in fired)}
    by = PAST_REFERENCE_RULE if _points_back(text) else ""
    return Question(frozenset(kinds), tuple(r.name for r in fired), by)
