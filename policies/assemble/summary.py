"""The rolling summary: incremental, extractive, dated, never paraphrased.

When the recent window overflows (the high-water mark), the oldest turns of
the window are evicted down to the low-water mark and summarised into a new
*chunk* appended after the previous ones: the old summary plus the newly
evicted turns give the new summary, never a rewrite from scratch, and the
earlier chunks stay byte-identical for the provider's prompt cache.

The rule-based summariser is extractive: it keeps the informative sentences
of each evicted turn verbatim and drops chit-chat, questions, asides and
boilerplate. Sentences with numbers, dates, IDs, amounts, names or a negation
are *protected*: they are scored up and never rewritten (a summary that turns
"don't paste SQL" into "SQL was discussed" is worse than none). Each line
carries its turn's date. When the summary outgrows its share of the budget
the lowest-scoring lines go first; their turns stay findable by recall.

Rendering goes through `StaleFilter`, so a line quoting a value the user
later changed shows the current one next to it, or is left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from policies.extract.observations import compact_tool_result
from policies.language.cues import negated, read_cues
from policies.language.dates import strip_marker, strip_markers
from policies.language.segment import drop_retracted, split_sentences
from policies.language.social import small_talk, strip_filler
from policies.language.text import normalize, terms
from policies.language.values import extract_values
from policies.memory.staleness import StaleFilter
from policies.types import MESSAGE_OVERHEAD_TOKENS, SummaryChunk, SummaryLine, TokenCounter, Turn

SUMMARY_HEADER = "Summary of the earlier conversation:"
# A capitalised word inside a sentence (after lower-case text): a name, a
# place, a product. Sentence-initial words are not counted.
_NAME = re.compile(r"(?<=[a-z0-9,;:] )[A-Z][a-zA-Z]{2,}")
_CHITCHAT = re.compile(
    r"\b(?:thanks|thank you|haha+|lol|joke|hello|hi there|good morning|cheers|bye|sounds good"
    r"|no worries|you're welcome|great question)\b|谢谢|哈哈|你好|再见|辛苦了|不客气",
    re.IGNORECASE,
)


class SummaryParams(BaseModel):
    """Parameters of the rule summariser; part of a preset's config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Most sentences kept per turn, by role: the user states requirements,
    # the assistant mostly elaborates, a tool result is compacted to one line.
    user_sentences: int = Field(default=4, ge=0)
    assistant_sentences: int = Field(default=2, ge=0)
    tool_sentences: int = Field(default=1, ge=0)
    # Below this informativeness a sentence is chit-chat or boilerplate.
    min_score: float = Field(default=0.8, ge=0)
    # Besides its best sentence, a turn keeps only sentences scoring at least
    # this share of the best: the fact, not the small talk around it.
    keep_share: float = Field(default=0.6, ge=0, le=1)
    # Longer unprotected sentences are skipped (pasted text, code, tables).
    max_sentence_chars: int = Field(default=360, ge=40)
    # When the summary outgrows its cap it is trimmed to this share of it (a
    # low-water mark), so that the next compactions append rather than trim.
    trim_to: float = Field(default=0.8, gt=0, le=1)


_ROLE_WEIGHTS = {"user": 1.0, "assistant": 0.7, "tool": 0.5}


def sentence_score(sentence: str, role: str) -> tuple[float, bool]:
    """(informativeness, protected) of one sentence."""
    # A date marker inside the sentence (a session start) adds no information
    # to a sentence that is otherwise small talk.
    said = strip_markers(sentence)
    core = strip_filler(said)
    unique = set(terms(core))
    if not unique or small_talk(said):
        return 0.0, False
    values = extract_values(core)
    negation = negated(core)
    name = bool(_NAME.search(core))
    protected = bool(values) or negation or name
    cues = read_cues(core)
    score = min(len(unique), 12) / 12
    # Values (numbers, dates, IDs, amounts) weigh most, then what the user
    # requires; a name alone marks trivia as often as facts.
    if values:
        score += 0.8 + 0.1 * min(len(values), 3)
    elif negation:
        score += 0.5
    elif name:
        score += 0.3
    if cues.requirement:
        score += 0.8
    if cues.change:
        score += 0.4
    if cues.question:
        score -= 0.6
    if cues.aside:
        score -= 0.6
    if _CHITCHAT.search(core) and not values:
        score -= 0.6
    if len(unique) < 3 and not values:
        score -= 0.4
    return score * _ROLE_WEIGHTS.get(role, 0.5), protected


@dataclass(frozen=True, slots=True)
class DatedTurn:
    turn: Turn
    date: str


def _sentences(turn: Turn) -> list[str]:
    if turn.role == "tool":
        compact = compact_tool_result(turn.text)
        return [compact] if compact else []
    if turn.role == "assistant" and turn.tool_call_ids:
        return []  # the call itself; its result (a tool turn) carries the data
    return split_sentences(strip_marker(turn.text))


def summarize_turn(dated: DatedTurn, params: SummaryParams) -> SummaryLine | None:
    """The line the summary keeps of one turn, or None if nothing in it is worth it."""
    turn = dated.turn
    limit = {
        "user": params.user_sentences,
        "assistant": params.assistant_sentences,
        "tool": params.tool_sentences,
    }.get(turn.role, 0)
    if limit <= 0:
        return None
    scored: list[tuple[float, int, str, bool]] = []
    for i, sentence in enumerate(_sentences(turn)):
        score, protected = sentence_score(sentence, turn.role)
        if score < params.min_score:
            continue
        if len(sentence) > params.max_sentence_chars and not protected:
            continue
        scored.append((score, i, " ".join(sentence.split()), protected))
    if not scored:
        return None
    ranked = sorted(scored, key=lambda s: (-s[0], s[1]))
    floor = ranked[0][0] * params.keep_share
    best = [s for s in ranked[:limit] if s[0] >= floor]
    best.sort(key=lambda s: s[1])
    return SummaryLine(
        ordinal=turn.ordinal,
        role=turn.role,
        date=dated.date,
        sentences=tuple(s[2] for s in best),
        score=round(ranked[0][0], 4),
        protected=any(s[3] for s in best),
    )


class RuleSummarizer:
    """Extractive, deterministic, zh + en: the default summarisation policy."""

    name: str = "rules"

    def __init__(self, params: SummaryParams | None = None) -> None:
        self.params = params or SummaryParams()

    def summarize(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> SummaryChunk:
        """The chunk summarising `turns` (ordinals [start, upto)); `previous` is untouched."""
        lines = [line for t in turns if (line := summarize_turn(t, self.params)) is not None]
        return SummaryChunk(start, upto, tuple(lines), self.name)


# --- rendering --------------------------------------------------------------------


class Shown:
    """Texts already on show elsewhere (the working-memory block): not repeated.

    A sentence is left out when it is part of a shown text, or when a shown
    text makes up most of it.
    """

    def __init__(self, texts: Sequence[str] = ()) -> None:
        self._texts = [normalize(t).rstrip("。.!！;；") for t in texts if t.strip()]

    def __bool__(self) -> bool:
        return bool(self._texts)

    def covers(self, sentence: str) -> bool:
        norm = normalize(sentence).rstrip("。.!！;；")
        return any(
            norm in shown or (shown in norm and len(shown) >= 0.6 * len(norm))
            for shown in self._texts
        )


def render_line(
    line: SummaryLine,
    show_date: bool,
    stale: StaleFilter | None,
    quoted: set[str],
    shown: Shown | None = None,
) -> str | None:
    """One summary line as text, or None if nothing of it is left to say."""
    # A value the user took back mid-sentence ("0174, sorry, 0147 at the end") is
    # quoted as fixed, as memory shows it: the slip would read as a second value.
    sentences = [drop_retracted(x) if line.role == "user" else x for x in line.sentences]
    if shown:
        sentences = [s for s in sentences if not shown.covers(s)]
    if stale:
        sentences = stale.clean(sentences, quoted, line.ordinal, line.role)
    if not sentences:
        return None
    date = f"[{line.date}] " if show_date and line.date else ""
    return f"{date}{line.role}: {' '.join(sentences)}"


def render_chunks(
    chunks: Sequence[SummaryChunk],
    stale: StaleFilter | None = None,
    dropped: frozenset[tuple[int, int]] = frozenset(),
    shown: Shown | None = None,
) -> list[str]:
    """One message text per non-empty chunk; the first carries the header.

    A line shows its date when it differs from the line before it in its
    chunk (each chunk starts with one), so a chunk's text never depends on
    what follows it. `dropped` holds (chunk index, line index) pairs to leave out.
    """
    quoted: set[str] = set()
    out: list[str] = []
    for ci, chunk in enumerate(chunks):
        rendered: list[str] = []
        last_date: str | None = None
        for li, line in enumerate(chunk.lines):
            if (ci, li) in dropped:
                continue
            text = render_line(line, line.date != last_date, stale, quoted, shown)
            if text is None:
                continue
            rendered.append(text)
            last_date = line.date
        if rendered:
            head = [] if out else [SUMMARY_HEADER]
            out.append("\n".join([*head, *rendered]))
    return out


def summary_tokens(texts: Sequence[str], count: TokenCounter) -> int:
    return sum(count(t) + MESSAGE_OVERHEAD_TOKENS for t in texts)


def fit_chunks(
    chunks: Sequence[SummaryChunk],
    cap: int,
    count: TokenCounter,
    stale: StaleFilter | None = None,
    shown: Shown | None = None,
) -> tuple[list[str], int, int]:
    """Rendered chunk texts within `cap` tokens: (texts, tokens, lines dropped).

    Over the cap, the lowest-scoring lines go first (the oldest on a tie):
    deterministic, so the same summary renders the same way every request.
    """
    texts = render_chunks(chunks, stale, shown=shown)
    tokens = summary_tokens(texts, count)
    if tokens <= cap:
        return texts, tokens, 0
    order = sorted(
        ((ci, li) for ci, c in enumerate(chunks) for li in range(len(c.lines))),
        key=lambda k: (chunks[k[0]].lines[k[1]].score, chunks[k[0]].lines[k[1]].ordinal),
    )
    # Estimate per line first (cheap), then confirm with exact counts.
    sizes = {
        (ci, li): count(" ".join(chunks[ci].lines[li].sentences)) + 4
        for ci, c in enumerate(chunks)
        for li in range(len(c.lines))
    }
    dropped: set[tuple[int, int]] = set()
    excess = tokens - cap
    for key in order:
        if excess <= 0:
            break
        dropped.add(key)
        excess -= sizes[key]
    while True:
        texts = render_chunks(chunks, stale, frozenset(dropped), shown)
        tokens = summary_tokens(texts, count)
        if tokens <= cap or len(dropped) == len(order):
            break
        dropped.add(next(k for k in order if k not in dropped))
    if tokens > cap:
        return [], 0, len(order)
    return texts, tokens, len(dropped)


def trim_chunks(
    chunks: Sequence[SummaryChunk], target: int, count: TokenCounter
) -> tuple[SummaryChunk, ...]:
    """Merge the chunks into one of at most `target` tokens (lowest scores dropped).

    Used when the summary outgrows its cap: a rebase of the summary, done in
    a step (down to a low-water mark) so that it does not recur every request.
    """
    if not chunks:
        return ()
    method = "rules" if all(c.method == "rules" for c in chunks) else "mixed"
    lines = sorted(
        (line for c in chunks for line in c.lines), key=lambda ln: (-ln.score, -ln.ordinal)
    )
    # Greedy on per-line estimates, then exact counts of the merged text.
    budget = target - count(SUMMARY_HEADER) - MESSAGE_OVERHEAD_TOKENS
    kept: list[SummaryLine] = []
    for line in lines:
        size = count(" ".join(line.sentences)) + 8  # role, date, newline
        if size <= budget:
            kept.append(line)
            budget -= size
    while True:
        merged = SummaryChunk(
            chunks[0].start,
            chunks[-1].upto,
            tuple(sorted(kept, key=lambda ln: ln.ordinal)),
            method,
        )
        if not kept or summary_tokens(render_chunks([merged]), count) <= target:
            return (merged,)
        kept.pop()
