"""The words of a sentence as the stale filter compares them: its terms (memoised: the
same summary lines are read on every request), their stems, and which of them is
specific enough to tie a sentence to a value on its own."""

from __future__ import annotations

import re
from functools import lru_cache

from policies.language.text import terms
from policies.language.values import extract_values, value_signature


@lru_cache(maxsize=8192)
def term_tuple(text: str) -> tuple[str, ...]:
    """The terms of `text`, in order."""
    return tuple(terms(text))


@lru_cache(maxsize=8192)
def value_signatures(text: str) -> frozenset[str]:
    """The signatures of the values `text` states (a number, date, ID, amount)."""
    return frozenset(value_signature(v) for v in extract_values(text))


def stem(term: str) -> str:
    """Plural and third-person "s" off English words ("tips" ~ "tip")."""
    return term[:-1] if len(term) > 3 and term.endswith("s") and term.isascii() else term


@lru_cache(maxsize=8192)
def loose_terms(text: str) -> frozenset[str]:
    """Stemmed terms, compounds split too ("unittest.mock" also gives "unittest")."""
    out: set[str] = set()
    for term in term_tuple(text):
        out.add(stem(term))
        if term.isascii():
            out.update(stem(p) for p in re.split(r"[._/\-]+", term) if len(p) > 2)
    return frozenset(out)


# A bare number this long ("2024", "500") is specific enough to tie a sentence to a value.
_DISTINCTIVE_DIGITS = 3
# Characters of Chinese function words: a bigram holding one ("的时", "候都") is glue
# between words, not a word of its own.
_ZH_GLUE = frozenset(
    "的了是我你他她它们在有和就都也要不这那个一上下吗呢吧啊呀把给让被说会能很再还又用后以来去到之时候"
)


def is_distinctive(term: str, length: int) -> bool:
    """A term specific enough that one occurrence ties a sentence to a value. Not a
    bare small number: "5" of "订4、5间" is in every other sentence ("儿子5岁");
    a sentence restating such a value is found by its value signature."""
    if term.isdigit():
        return len(term) >= _DISTINCTIVE_DIGITS
    if not term.isascii():
        return not any(c in _ZH_GLUE for c in term)
    return any(c.isdigit() for c in term) or len(term) >= length


def one_line(text: str) -> str:
    """`text` on one line, its runs of white space one space."""
    return " ".join(text.split())
