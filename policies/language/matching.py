"""Lexical similarity for deciding what a new statement replaces.

`text.terms` is tuned for recall (search); deciding that "you can stop
flagging that" targets "please also flag JR Pass coverage" needs a bit
more: English words are crudely stemmed, CJK text contributes single
characters (weakly) besides bigrams, and words that only signal *how*
something is said ("from now on", "以后", "改成") are dropped so that two
unrelated rules do not look alike just because both are rules. Terms are
weighted by rarity across the session's items (IDF), so a name that occurs
everywhere ("Lena", "菜谱") counts less than a rare key noun.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Container, Iterable, Mapping
from functools import lru_cache

from policies.language.text import EN_STOPWORDS, ZH_STOP_BIGRAMS, normalize
from policies.language.units import CURRENCIES
from policies.language.values import extract_values

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Apostrophes stay inside a word: "we're" is one (form) word, not "we" + "re".
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[a-z0-9][a-z0-9_\-./'’]*")
_CJK_RUN_RE = re.compile(rf"^[{_CJK}]+$")


# Words that say how a requirement is phrased, not what it is about.
def word_set(text: str) -> frozenset[str]:
    """Whitespace-separated words of a lexicon written as one string."""
    return frozenset(text.split())


_EN_FORM_WORDS = word_set(
    """always never every each please instead actually rule rules from now going forward
    onwards onward anymore still also really maybe sure thing things stuff bit lot much
    many well even though keep stop start use using used need needs want wants would
    could should let change changed switch make made remember note request one another
    quick side question unrelated totally new old i'd we'd we're i'm it's that's
    don't can't won't doesn't didn't isn't aren't time times love loves hate prefer enjoy
    ideally rather anything something everything nothing anyone someone everyone us three
    four five six seven eight nine ten eleven twelve twenty hundred thousand think thinking
    going doing getting decided decide picked pick you're they're he's she's there's what's
    let's you'll we'll i'll you've we've they've you'd they'd isn't aren't wasn't weren't
    hasn't haven't hadn't shouldn't wouldn't couldn't mustn't"""
)
# Everyday words: shared with a topic, they say little about being on-topic.
COMMON_EN = word_set(
    """put down way day days thing things take see look come know think say said says tell ask
    try feel leave begin show hear bring happen sit stand lose meet continue set learn
    understand watch follow spend walk wait stay fall reach remain people person guy stuff
    lot kind part idea question problem reason moment point week weeks morning evening
    afternoon today tomorrow yesterday tonight good great nice bad big small long short
    little old new last first next app phone weather coffee lunch dinner"""
)
_ZH_FORM_BIGRAMS = word_set(
    """以后 今后 之后 往后 后面 每次 每个 改成 改为 换成 换到 不要 不用 不能 不再 别再 就行 一下
    还是 记得 务必 一定 必须 然后 另外 还有 对了 统一 直接 可能 应该 需要 一直 已经 现在 这样
    那样 时候 一点 有点 东西 事情 问题 麻烦 要求 规则 习惯 帮忙 谢谢 好的 可以 了吧 的吧
    就别"""
)
_ZH_COMMON_CHARS = frozenset(
    "的了是我你他她它们在有和就都也要不这那个一上下吗呢吧啊呀把给让被说会能很再还又用后以来去到之时"
)
_ZH_BREAK_RE = re.compile("[的了是和与及或就都也把给让被吗呢吧啊呀么着过]")
_UNIGRAM_WEIGHT = 0.3


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """A deliberately crude English stemmer: enough for flag/flagging, test/tests."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""),
                         ("s", ""), ("ly", "")):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes")):
                continue
            base = word[: len(word) - len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) >= 4 and base[-1] == base[-2]:
                base = base[:-1]  # flagging -> flagg -> flag
            return base
    return word


@lru_cache(maxsize=8192)
def weighted_terms(text: str) -> Mapping[str, float]:
    """Terms of `text` with a base weight (1 for words and bigrams, less for CJK chars)."""
    out: dict[str, float] = {}
    for tok in _TOKEN_RE.findall(normalize(text)):
        if _CJK_RUN_RE.match(tok):
            # Function characters end a word; bigrams across them ("号和",
            # "我好") are noise that dilutes matching.
            for run in _ZH_BREAK_RE.split(tok):
                _add_cjk(run, out)
            continue
        word = tok.strip("-./")
        if "'" in word or "’" in word:
            word = word.replace("’", "'")
            word = word[:-2] if word.endswith("'s") else word.strip("'")
            if "'" in word and word not in _EN_FORM_WORDS:
                word = word.split("'")[0]  # "mei's" -> "mei"; "isn't" is a form word
        if not word or word.isdigit() or word in EN_STOPWORDS or word in _EN_FORM_WORDS:
            continue
        if len(word) < 2:
            continue
        out[stem(word)] = 1.0
    return out


# What is left of a threshold once its number and operator are gone: the words the
# speaker put inside it ("$21,500 out the door max").
_BOUND_WORDS = re.compile(
    r"[$€£¥]?\d[\d,.]*\s?[kK万千百]?%?|\b(?:over|above|under|below|more|less|fewer|than|at|least"
    r"|most|up|to|no|max|maximum|of|tops|or|the most|capped|cap|it|them|a|dollars?|euros?|bucks)\b"
    r"|[\u3400-\u9fff]+",
    re.IGNORECASE,
)


_SIDES = frozenset({"below", "above"})  # a threshold's side, when it names no measure


@lru_cache(maxsize=8192)
def content_terms(text: str) -> Mapping[str, float]:
    """Terms of `text` without its values: what a statement is *about*.

    Values are compared separately (same kind, different number); left in,
    two unrelated sentences would match on a shared date or ID prefix.
    """
    values = [v for v in extract_values(text) if v.kind != "id"]
    if not values:
        return weighted_terms(text)
    parts: list[str] = []
    last = 0
    for v in values:
        # Keep what the value counts or names ("guests", "桌", "python", an interest
        # "rate"), not its currency: "$5 for gas" and "$150 for the inspection"
        # share no subject.
        unit = v.unit.rsplit(":", 1)[-1]  # a threshold's measure ("below:minute")
        named = unit.isalpha() and v.kind != "money" and unit not in CURRENCIES
        # A cap without a measure has only its side ("500以内" is "below"): sharing a
        # side ties no subjects ("看病500以内" / "每天150以内").
        named = named and unit not in _SIDES
        parts.extend((text[last : v.start], unit if named else ""))
        if v.kind == "bound":
            parts.append(_BOUND_WORDS.sub(" ", v.text))  # "$21,500 *out the door* max"
        last = v.end
    parts.append(text[last:])
    return weighted_terms(" ".join(parts))


def _add_cjk(run: str, out: dict[str, float]) -> None:
    for i in range(len(run) - 1):
        bigram = run[i : i + 2]
        if bigram not in ZH_STOP_BIGRAMS and bigram not in _ZH_FORM_BIGRAMS:
            out[bigram] = 1.0
    for ch in run:
        if ch not in _ZH_COMMON_CHARS:
            out.setdefault(ch, _UNIGRAM_WEIGHT)


class Idf:
    """Inverse document frequency over a small corpus (the session's items).

    Values are memoised: one extraction asks for the same terms many times.
    """

    def __init__(self, documents: Iterable[str]) -> None:
        df: Counter[str] = Counter()
        n = 0
        for doc in documents:
            n += 1
            df.update(weighted_terms(doc).keys())
        self._df: Mapping[str, int] = df
        self._n = n
        self._memo: dict[str, float] = {}
        self._norms: dict[int, tuple[Mapping[str, float], float]] = {}

    @classmethod
    def from_counts(cls, df: Mapping[str, int], n: int) -> Idf:
        """From document frequencies already counted by the caller."""
        idf = cls(())
        idf._df = df
        idf._n = n
        return idf

    def __call__(self, term: str) -> float:
        value = self._memo.get(term)
        if value is None:
            value = math.log(1.0 + (self._n + 1) / (self._df.get(term, 0) + 0.5))
            self._memo[term] = value
        return value

    def norm(self, bag: Mapping[str, float]) -> float:
        """Euclidean norm of `bag` under these weights (memoised per bag)."""
        hit = self._norms.get(id(bag))
        if hit is not None and hit[0] is bag:
            return hit[1]
        value = math.sqrt(sum((w * self(t)) ** 2 for t, w in bag.items()))
        self._norms[id(bag)] = (bag, value)  # keeps `bag` alive, so its id stays unique
        return value


def similarity(a: Mapping[str, float], b: Mapping[str, float], idf: Idf) -> float:
    """Weighted cosine of two term bags (0..1)."""
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = 0.0
    for term, weight in a.items():
        other = b.get(term)
        if other is not None:
            dot += min(weight, other) * idf(term) ** 2
    if not dot:
        return 0.0
    return dot / (idf.norm(a) * idf.norm(b))


def coverage(a: Mapping[str, float], b: Mapping[str, float], idf: Idf) -> float:
    """Share of `b`'s weighted terms that `a` also contains (0..1)."""
    total = sum(w * idf(t) for t, w in b.items())
    if not total:
        return 0.0
    return sum(w * idf(t) for t, w in b.items() if t in a) / total


def topical_overlap(bag: Mapping[str, float], topic: Container[str]) -> float:
    """How much of `bag` is about `topic`: shared words and bigrams, everyday words discounted."""
    return sum(
        0.3 if term in COMMON_EN else 1.0
        for term, weight in bag.items()
        if weight >= 1 and term in topic
    )


# Pairs that name opposite choices on the same subject: a new rule using one
# side most likely revises an old rule using the other ("public comments"
# after "internal-only"; "用文字说" after "用表格列出").
_ANTONYMS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(a, re.IGNORECASE), re.compile(b, re.IGNORECASE))
    for a, b in (
        (r"\bpublic\b", r"\binternal|\bprivate\b"),
        (
            r"\bformal(?:ly)?\b|\bofficial\b",
            r"\bplain\b|\bcasual(?:ly)?\b|\binformal(?:ly)?\b|\bchatty\b|\bconversational\b"
            r"|\bcolloquial\b|\brelaxed\b|\blaid-back\b",
        ),
        (r"\bshort\b|\bbrief\b|\bconcise\b", r"\blong\b|\bdetailed\b|\bin depth\b"),
        (
            r"\benglish\b|英文|英语",
            r"\bchinese\b|\bmandarin\b|\bgerman\b|\bfrench\b|\bjapanese\b|\bspanish\b|中文"
            r"|汉语|日文|日语|德语|法语",
        ),
        # A table as a way to show the answer ("as a table", "in table form"), not a
        # database's table or a dinner table.
        (
            r"\b(?:as|in|into|use|using|with|make (?:it|them|that)) (?:a )?tables?\b"
            r"|\btable (?:format|form|layout)\b|\btabular\b"
            r"|\btables? (?:are|is) (?:fine|better|easier)",
            r"\bprose\b|\bplain text\b|\bbullets?\b",
        ),
        (r"\binclude\b", r"\bexclude\b"),
        (r"\bmetric\b", r"\bimperial\b"),
        (r"表格|画表|列表", r"文字|段落"),
        (r"详细|详尽|展开", r"简单|简短|简洁|短一?点|短一些|尽量短"),
        (r"中文|汉语|\bchinese\b", r"日文|日语|\bjapanese\b"),
        (r"正式|书面", r"口语|随意|简单|轻松|随性|接地气|大白话|聊天"),
        (r"公开", r"内部|私下"),
    )
)


@lru_cache(maxsize=8192)
def _sides(text: str) -> tuple[int, int]:
    """Bit k set: the text names the first (resp. second) side of antonym pair k."""
    first = second = 0
    for k, (x, y) in enumerate(_ANTONYMS):
        if x.search(text):
            first |= 1 << k
        if y.search(text):
            second |= 1 << k
    return first, second


def opposed(a: str, b: str) -> bool:
    """Does one text take one side of an antonym pair and the other the other side?"""
    # Pair by pair: a on the first side and b only on the second, or the reverse.
    # As bit masks, one test for all pairs (this runs for every live rule).
    xa, ya = _sides(a)
    xb, yb = _sides(b)
    return bool((xa & yb & ~xb) | (ya & xb & ~yb))


def same_side(a: str, b: str) -> bool:
    """Do two texts name the same side of an antonym pair ("不用那么简短了" / "尽量短一点")?"""
    xa, ya = _sides(a)
    xb, yb = _sides(b)
    return bool((xa & xb) | (ya & yb))


@lru_cache(maxsize=8192)
def key_terms(text: str) -> frozenset[str]:
    """The full-weight terms of `text` (words, bigrams), as a set."""
    return frozenset(t for t, w in weighted_terms(text).items() if w >= 1)


def merge_terms(*bags: tuple[Mapping[str, float], float]) -> dict[str, float]:
    """Union of term bags, each scaled by its factor, keeping the largest weight."""
    out: dict[str, float] = {}
    for bag, factor in bags:
        for term, weight in bag.items():
            w = weight * factor
            if w > out.get(term, 0.0):
                out[term] = w
    return out


def covered(new: Mapping[str, float], old: Mapping[str, float], idf: Idf) -> float:
    """Share of `old`'s weighted terms that `new` mentions (0..1).

    Computed over words/bigrams and, separately, over single CJK characters:
    without word segmentation many Chinese bigrams straddle two words and
    match nothing, so the character view is the fairer one for Chinese.
    """
    totals = [0.0, 0.0]  # words, chars
    hits = [0.0, 0.0]
    for term, weight in old.items():
        view = 1 if len(term) == 1 and not term.isascii() else 0
        w = idf(term)
        totals[view] += weight * w
        other = new.get(term)
        if other is not None:
            hits[view] += min(weight, other) * w
    words = hits[0] / totals[0] if totals[0] else 0.0
    chars = hits[1] / totals[1] if totals[1] else 0.0
    return max(words, 0.8 * chars)
