"""Language-neutral text helpers shared by extraction, scoring and recall.

Chinese has no spaces, so lexical matching uses character bigrams for CJK runs
and lower-cased words for everything else; both end up as plain "terms".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9][A-Za-z0-9_\-./%:]*")
_CJK_RUN_RE = re.compile(rf"^[{_CJK}]+$")

# Words too common to say anything about relevance. Kept short on purpose:
# IDF weighting does the rest where a corpus is available.
EN_STOPWORDS = frozenset(
    """a an the and or but if of to in on at for with from by as is are was were be been
    being it its this that these those i me my we our you your he she they them his her
    their do does did done have has had will would can could should shall may might must
    not no yes so then than there here what which who whom whose when where why how all
    any some just also too very about into over under up down out off again more most
    other such only own same s t don now let lets ok okay please thanks thank hi hello
    get got make made go going want like one two""".split()
)
ZH_STOP_BIGRAMS = frozenset(
    "我们 你们 他们 她们 一下 一个 这个 那个 就是 还是 可以 没有 不是 什么 怎么 这样 那样 "
    "的话 时候 现在 因为 所以 然后 如果 但是 而且 已经 一些 这些 那些 自己 知道 觉得 "
    "帮我 给我 你帮 我的 你的 他的 是不 不要".split()
)


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace folded: the form used for matching."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def terms(text: str) -> list[str]:
    """Lexical terms of `text`: English words (no stopwords) and CJK bigrams."""
    out: list[str] = []
    for tok in _TOKEN_RE.findall(normalize(text)):
        if _CJK_RUN_RE.match(tok):
            if len(tok) == 1:
                out.append(tok)
                continue
            for i in range(len(tok) - 1):
                bigram = tok[i : i + 2]
                if bigram not in ZH_STOP_BIGRAMS:
                    out.append(bigram)
        else:
            word = tok.strip("-./:")
            if word and word not in EN_STOPWORDS:
                out.append(word)
    return out


def term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Share of `a`'s terms that also occur in `b` (0..1)."""
    sa, sb = set(a), set(b)
    if not sa:
        return 0.0
    return len(sa & sb) / len(sa)
