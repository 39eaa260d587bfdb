"""What of a recalled turn is shown: dated snippets and the other half of its exchange.

Recalled turns are shown as dated snippets: the sentences of the turn that
share the most terms with the input, so one long turn cannot eat the section;
a sentence too long alone gives way clause by clause, never its numbers,
dates or negations (`policies.language.clip`). A recalled question comes
with the start of its reply, a recalled answer with the question before it
(`companion`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from policies.assemble.recall import index_terms, query_terms
from policies.language.clip import clip_sentence
from policies.language.dates import strip_marker
from policies.language.questions import is_question
from policies.language.segment import split_sentences


def snippet(text: str, query: Collection[str], max_chars: int) -> list[str]:
    """The sentences of `text` to show: all of them if they fit `max_chars`, else
    those sharing most terms with `query`, in their order."""
    sentences = list(_sentences(text))
    if sum(len(s) + 1 for s in sentences) <= max_chars:
        return sentences
    wanted = query_terms(query)
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(wanted & set(index_terms(sentences[i]))), i),
    )
    chosen: list[int] = []
    used = 0
    for i in ranked:
        size = len(sentences[i]) + 1
        if used + size > max_chars:
            continue
        chosen.append(i)
        used += size
    if not chosen and sentences:
        return [clip_sentence(sentences[ranked[0]], max_chars, wanted)]
    return [sentences[i] for i in sorted(chosen)]


@dataclass(frozen=True, slots=True)
class Companion:
    """The other half of a recalled exchange: the reply to a recalled question,
    or the question a recalled turn answers."""

    ordinal: int
    role: str
    sentences: list[str]
    reason: str


# Pure in `text`, and asked of the same turns on every request that recalls them.
@lru_cache(maxsize=8192)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(" ".join(s.split()) for s in split_sentences(strip_marker(text)))


def _leading(sentences: Sequence[str], max_chars: int) -> list[str]:
    out: list[str] = []
    used = 0
    for s in sentences:
        if used + len(s) + 1 > max_chars:
            break
        out.append(s)
        used += len(s) + 1
    return out or ([clip_sentence(sentences[0], max_chars)] if sentences else [])


def companion(
    text: str,
    before: tuple[int, str, str] | None,
    after: tuple[int, str, str] | None,
    max_chars: int,
) -> Companion | None:
    """What makes a recalled turn a self-contained exchange, if anything.

    A turn that ends on a question is recalled for its words, but the answer
    is in the reply right after it ("What do you do for fun?" / "I paint."); a
    turn right after a question is an answer only with that question. The
    neighbours are (ordinal, role, text); only the part of a neighbour next to
    the recalled turn is kept: the start of a reply, the question that ends
    the turn before.
    """
    own = _sentences(text)
    if own and after is not None and is_question(own[-1]):
        reply = _leading(_sentences(after[2]), max_chars)
        if reply:
            return Companion(after[0], after[1], reply, "the reply to a recalled question")
    if before is not None:
        asked = _sentences(before[2])
        if asked and is_question(asked[-1]):
            tail: list[str] = []
            used = 0
            for s in reversed(asked):
                if tail and (used + len(s) + 1 > max_chars or not is_question(s)):
                    break
                tail.insert(0, clip_sentence(s, max_chars - 1))
                used += len(s) + 1
            return Companion(before[0], before[1], tail, "the question a recalled turn answers")
    return None
