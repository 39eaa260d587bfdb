"""Sentences and clauses of casual zh/en chat messages.

A requirement is usually one sentence inside a longer message, so items are
built per sentence. Semicolons split too: people chain independent rules
with them ("用量按一人份写；每个菜谱标热量"), and one of them may later be
revised without the other. Code blocks are dropped: code is not a
requirement, and its punctuation would shred the segmentation.

Clause helpers serve revisions: the short "replaces" form of an old value,
and what is left of a multi-fact sentence once one of its values changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from policies.language.cues import read_cues
from policies.language.matching import weighted_terms
from policies.language.values import Value, extract_values
from policies.rulebook import Joined

_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_BULLET_RE = re.compile(r"^\s*(?:[-*•·>]+|\d{1,2}[.)、]|[（(]?\d{1,2}[)）])\s+")
# zh terminators end a sentence wherever they are; en ones only before
# whitespace, so "4.12.3", "e.g." (mostly) and "3.5%" stay whole.
_SPLIT_RE = re.compile(r"(?<=[。！？；])(?![。！？；!?”\"'’）)])|(?<=[.!?;])(?=\s)")
_ABBREV_RE = Joined("segment", "abbreviation")  # "e.g.", "Dr.": no sentence end
_MAX_CHARS = 400


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, trimmed, in order; never empty strings."""
    text = _FENCE_RE.sub("\n", text)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET_RE.sub("", line).strip()
        if not line:
            continue
        pending = ""
        for piece in _SPLIT_RE.split(line):
            pending += piece
            if _ABBREV_RE.search(pending.rstrip()):
                continue
            _emit(pending, out)
            pending = ""
        _emit(pending, out)
    return out


# "So we're four now, can you rebalance it?", "房租上限放到1900欧了，这样是不是能租大点的？":
# a statement with a request or question fused on; the statement stands on its own.
_TAIL_QUESTION = re.compile(
    r"(?<=[^,，]{12})(?:,|，)\s*(?=(?:so |and |but )?(?:can|could|would|will|should|do|does|is|are)"
    r" (?:you|we|i|it|that|this)\b"
    r"|(?:这样|那|那么)?(?:是不是|能不能|可不可以|可以吗|你能|你看|要不要|会不会|够不够)"
    r"[^，,。]*[?？]$)",
    re.IGNORECASE,
)


def _emit(piece: str, out: list[str]) -> None:
    piece = piece.strip()
    if not piece or not re.search(r"\w", piece):
        return
    if piece.endswith(("?", "？")):
        m = _TAIL_QUESTION.search(piece)
        if m is not None:
            out.append(piece[: m.start()].strip())
            piece = piece[m.end() :].strip()
    if len(piece) <= _MAX_CHARS:
        out.append(piece)
        return
    # A run-on sentence (pasted text, no punctuation): cut at clause
    # boundaries so that one item never swallows a whole paragraph.
    chunk = ""
    for clause in re.split(r"(?<=[，,、])", piece):
        if chunk and len(chunk) + len(clause) > _MAX_CHARS:
            out.append(chunk.strip())
            chunk = ""
        chunk += clause
    if chunk.strip():
        out.append(chunk.strip())


# A speaker fixing a value mid-sentence: "March 12 — sorry, March 14", "SORRY15 — no
# wait, it's OOPS15", "8寸的——不对，是10寸的", "A-17，哦不，是A-71" (a bare 不 only after
# 哦/啊: "哦不错" is praise), "60公斤5个——哦不对，是55公斤". The
# comma after the marker is no clause boundary: the clause is the corrected value.
SELF_FIX = re.compile(
    r"\s*(?:—|–|--|——|-|,|，|\.\.\.|…)\s*(?:(?:no|oh|ah|um|哦|啊|呃)[,， ]*)?"
    r"(?:no wait|wait|sorry|oops|i mean|i meant|make that|correction|scratch that|不对|不是不是"
    r"|说错了|我说错了|记错了|我是说|更正|应该是|(?<=[哦啊呃])不(?=[，,\s]))(?![a-z])(?:[,，:：!！]?\s*no\b)?[,，:：!！]?\s*",
    re.IGNORECASE,
)


_FIXABLE = frozenset({"id", "time", "date", "money", "percent", "qty", "label", "version"})

# A code or reference written in Latin letters and digits: "84-2291047", "JT-LEG",
# "13817762045", "SORRY15".
_CODE = re.compile(
    r"(?<![A-Za-z0-9-])(?:[A-Z0-9]+(?:-[A-Z0-9]+)+|[A-Za-z]*\d[A-Za-z0-9]*)(?![A-Za-z0-9-])"
)


def _fix_spans(text: str) -> list[tuple[int, int, str]]:
    spans = [
        (v.start, v.end, v.kind)
        for v in extract_values(text)
        if v.number is not None or v.kind in _FIXABLE
    ]
    spans += [(*m.span(), "code") for m in _CODE.finditer(text)]
    return sorted(spans)


def _self_fixes(text: str) -> list[tuple[int, int, int, int, int]]:
    """(start and end of the value taken back, start and end of the marker, start of
    the value put instead: the first one of the same kind, else the first one, and
    then the end is -1: "16 cores, no wait, 24" puts a bare number for a count)."""
    spans = _fix_spans(text)
    out = []
    for m in SELF_FIX.finditer(text):
        before = [sp for sp in spans if 0 <= m.start() - sp[1] <= 12]
        after = [sp for sp in spans if 0 <= sp[0] - m.end() <= 12]
        if not (before and after):
            continue
        end = max(e for _, e, _ in before)
        x = min((sp for sp in before if sp[1] == end), key=lambda sp: sp[0])
        same = [sp for sp in after if sp[2] == x[2]]
        out.append((x[0], x[1] if same else -1, m.start(), m.end(), min(same or after)[0]))
    return out


# A fix that restates only the end of a number or ID: "0147 at the end", "the last four
# are 2290", "ending in 88", "尾号是5687", "后四位是2290", "最后两位是13". The digits given
# replace the same count of trailing digits of the value taken back.
_PART_FIX = Joined("segment", "part_fix")
# The number or ID just before the marker, digits possibly grouped by spaces, dashes or
# dots: "503-555-0174", "138 1234 5678", "A-20931".
_GROUPED_NUMBER = re.compile(r"(?:[A-Za-z]+-?)?\d(?:[\d .-]*\d)?\s*$")


def _part_fixes(text: str) -> list[tuple[int, int, str, int]]:
    """(start and end of the number taken back, the number with its trailing digits
    replaced, end of the fix): "503-555-0174, sorry, 0147 at the end" -> "503-555-0147".
    Only where the fix names the part it restates ("at the end", "尾号") and gives no more
    digits than the number has; a count ("3 dogs") has too few digits to be patched."""
    out = []
    for m in SELF_FIX.finditer(text):
        part = _PART_FIX.match(text, m.end())
        old = _GROUPED_NUMBER.search(text, 0, m.start())
        if part is None or old is None:
            continue
        digits = part.group("a") or part.group("b") or part.group("c")
        number = old.group().rstrip()
        places = [i for i, ch in enumerate(number) if ch.isdigit()]
        if len(digits) > len(places) or len(places) < 4:
            continue
        chars = list(number)
        for i, d in zip(places[-len(digits) :], digits, strict=True):
            chars[i] = d
        out.append((old.start(), old.start() + len(number), "".join(chars), part.end()))
    return out


@lru_cache(maxsize=8192)
def self_fixed(text: str) -> bool:
    """ "底薪8000——哦不对，是8500", "EIN 84-2219047 — wait no, 84-2291047", "prefix
    JT-OLD — sorry, no, JT-LEG", "下午5点，哦不对，只开到下午3点": a value the speaker
    fixed mid-sentence (an amount, ID, code, phone number, time) is a fact they care
    to get right, whatever its kind."""
    return bool(_self_fixes(text)) or bool(_part_fixes(text))


# What may stand between a correction marker and the value it puts instead
# without adding anything: "是", "it's".
_FIX_LEAD = re.compile(r"(?:就是|是|it'?s|it is|make it|[\s,，:：])*", re.IGNORECASE)
_CLAUSE_START = re.compile(r".*[，,;；:：。.!?！？]\s*", re.DOTALL)


def drop_retracted(text: str) -> str:
    """The statement with the value taken back mid-sentence left out, for display:
    "EIN 84-2219047 — wait no, 84-2291047" -> "EIN 84-2291047"; "周日早上8点到中午12点，
    哦不对，周日只营业到11点" -> "周日只营业到11点"; "138 1234 5678，不对，尾号是5687" ->
    "138 1234 5687". The corrected value always stays."""
    parts = _part_fixes(text)
    for start, _end, fixed, fix_end in reversed(parts):
        text = text[:start] + fixed + text[fix_end:]
    if parts:
        return text
    for start, end, fix_start, fix_end, put in reversed(_self_fixes(text)):
        if _FIX_LEAD.fullmatch(text[fix_end:put]):
            if end >= 0 and not text[end:fix_start].strip():  # "16 cores, no wait, 24": kept
                text = text[:start] + text[put:]
            continue
        head = _CLAUSE_START.match(text[:start])
        cut = head.end() if head else 0
        text = text[:cut] + text[fix_end:]
    return text


def _fix_before(text: str, pos: int) -> bool:
    """Does a self-correction marker end right at `pos`?"""
    m = _FIX_TAIL.search(text[max(0, pos - 24) : pos])
    return m is not None


_FIX_TAIL = re.compile(
    r"(?:—|–|--|——|-|,|，)\s*(?:(?:no|oh|ah|哦|啊)[,， ]*)?(?:no wait|wait|sorry|oops|i mean"
    r"|i meant|make that|不对|说错了|记错了|我是说)[,，:：!！]?\s*$",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """Comma-level clauses of one sentence (for short "replaces" forms)."""
    parts = re.split(r"[，；。！？、：]|[,;:](?=\s)|[.!?](?=\s|$)|\s+-\s+|\s+(?:and|but)\s+", text)
    out: list[str] = []
    for p in (p.strip() for p in parts):
        if not p:
            continue
        if out and _FIX_TAIL.search(out[-1] + ","):
            sep = "，" if re.search(r"[\u3400-\u9fff]$", out[-1]) else ", "
            out[-1] = f"{out[-1]}{sep}{p}"  # "March 12 — sorry, March 14" stays one clause
        else:
            out.append(p)
    return out


_CLAUSE_END = re.compile(r"[，；;、]\s*|,(?!\d{3}\b)\s*|\s+(?:and|but)\s+|[。.!?！？]\s*$")


def without_clause(text: str, value: Value) -> str | None:
    """`text` minus the comma-level clause holding `value`, or None if nothing is left."""
    start = max(
        (m.end() for m in _CLAUSE_END.finditer(text, 0, value.start)
         if not _fix_before(text, m.start() + 1)),
        default=0,
    )  # fmt: skip
    end_match = _CLAUSE_END.search(text, value.end)
    while end_match is not None and _fix_before(text, end_match.start() + 1):
        end_match = _CLAUSE_END.search(text, end_match.end())
    end = end_match.end() if end_match else len(text)
    if start == 0 and end >= len(text.rstrip()):
        return None
    head, tail = text[:start], text[end:]
    if not tail.strip():
        head = re.sub(r"(?:\s+(?:and|but|or))?[\s，,；;、]*$", "", head)
    rest = (head + tail).strip()
    return rest or None


_CLAUSE_SPLIT = re.compile(r"[，；。！？]|[,;](?=\s)|[.!?](?=\s|$)|\s+(?:and|but)\s+")


def unrelated_clauses(text: str, terms: Mapping[str, float], contiguous: bool = True) -> str | None:
    """The verbatim span of `text` after dropping its clauses that share a term with
    `terms` (a contiguous run of the untouched clauses), or None if none or all survive.

    `contiguous=False`: all untouched clauses, joined ("use bullet points, sign it as
    'Coach Dee'" once the middle clause is withdrawn)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _CLAUSE_SPLIT.finditer(text):
        if _fix_before(text, m.start() + 1):
            continue
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    keep = [
        (a, b) for a, b in spans
        if text[a:b].strip() and not any(t in terms for t in weighted_terms(text[a:b]))
    ]  # fmt: skip
    if not keep or len(keep) == len([s for s in spans if text[s[0] : s[1]].strip()]):
        return None
    if not contiguous:
        sep = "，" if re.search(r"[\u3400-\u9fff]", text) else ", "
        out = sep.join(text[a:b].strip(" ，,；;。.") for a, b in keep)
        return out.strip() or None
    # The longest contiguous run of kept clauses, verbatim.
    runs: list[list[tuple[int, int]]] = []
    for span in keep:
        if runs and spans.index(span) == spans.index(runs[-1][-1]) + 1:
            runs[-1].append(span)
        else:
            runs.append([span])
    best = max(runs, key=lambda r: r[-1][1] - r[0][0])
    out = text[best[0][0] : best[-1][1]].strip(" ，,；;。.")
    return out or None


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def replaced_text(old: str, old_value: Value | None, new: str) -> str:
    """A short form of the replaced value.

    The clause holding the changed value if there is one; otherwise the
    clause the new statement talks about most (for "stop flagging that",
    the clause that asked for the flagging), plus the next one if short.
    """
    parts = clauses(old) or [old]
    if old_value is not None:
        for part in parts:
            if old_value.text in part:
                return shorten(part, 60)
    new_bag = weighted_terms(new)
    # The clause the new text talks about, preferring the one that states the
    # rule ("以后每次…都先贴SQL") over its justification ("我要核对口径").
    scores = [
        sum(w for t, w in weighted_terms(p).items() if t in new_bag)
        + (1.0 if read_cues(p).requirement >= 2 else 0.0)
        for p in parts
    ]
    i = scores.index(max(scores))
    text = parts[i]
    if len(text) < 20 and i + 1 < len(parts):
        text = f"{text}, {parts[i + 1]}"
    return shorten(text, 60)
