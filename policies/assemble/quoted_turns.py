"""The two sections that quote old turns: the rolling summary and recalled turns.

The rolling summary is one message per compaction chunk; recalled turns are
one message of dated snippets. Both quote old turns, so both go through the
stale filter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from policies.assemble.generated import RECALL_HEADER, Generated, nothing
from policies.assemble.lines import Line, fit_lines
from policies.assemble.recall_snippets import Companion, companion, snippet
from policies.assemble.summary import Shown, fit_chunks
from policies.language.dates import marker_date
from policies.language.segment import drop_retracted
from policies.memory.staleness import StaleFilter
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    Candidate,
    RecallHit,
    Section,
    SummaryChunk,
    TokenCounter,
    Turn,
)


def plan_summary(
    chunks: Sequence[SummaryChunk],
    cap: int,
    count: TokenCounter,
    stale: StaleFilter | None,
    shown: Shown | None = None,
) -> tuple[Generated, int]:
    """The rolling summary, one message per chunk, within `cap`; and how many
    of its lines had to be left out to fit.

    `shown`: item texts the working-memory block already shows verbatim; the
    summary does not repeat them (the block's layout is stable between
    rebuilds, so this does not unsettle the summary's text either).
    """
    lines = sum(len(c.lines) for c in chunks)
    if not lines:
        return nothing("summary"), 0
    texts, tokens, dropped = fit_chunks(chunks, cap, count, stale, shown)
    ref = f"{chunks[0].start}-{chunks[-1].upto - 1}"
    if not texts:
        cand = Candidate("summary", ref, 0, 0.0, "dropped", "over summary share")
        return nothing("summary", [cand]), lines
    reason = "fits summary share" if not dropped else f"{dropped} low-score lines over its share"
    cand = Candidate("summary", ref, tokens, 0.0, "kept", reason, "summary")
    return Generated(texts, tokens, [Section("summary", tokens, len(texts))], [cand]), dropped


def plan_recall(
    hits: Sequence[RecallHit],
    query: Collection[str],
    cap: int,
    snippet_chars: int,
    count: TokenCounter,
    stale: StaleFilter | None,
    turn_at: Callable[[int], Turn | None] | None = None,
    quoted_in_place: Collection[int] = (),
) -> Generated:
    """Dated snippets of the recalled turns (best first until the share is full),
    shown in conversation order.

    `turn_at(ordinal)`: an older turn that may be shown, else None. With it, a
    recalled question brings the start of its reply, and a recalled answer
    the question before it (`policies.assemble.recall_snippets.companion`), placed right after
    it in priority so the exchange is shown whole when it fits. Turns an
    earlier late section still quotes in place (`quoted_in_place`) are not
    quoted twice.
    """
    if not hits or cap <= 0:
        return nothing("recalled")
    quoted: set[str] = set()
    lines: list[Line] = []
    reasons: dict[str, tuple[float, str]] = {
        str(o): (0.0, "quoted in place by an earlier late section") for o in quoted_in_place
    }
    budget = cap - count(RECALL_HEADER) - MESSAGE_OVERHEAD_TOKENS
    for rank, hit in enumerate(hits):
        if budget <= 0:
            break  # the rest could not fit: not worth rendering
        if str(hit.ordinal) in reasons:
            continue  # already shown as another hit's companion
        for k, (ordinal, role, date, sentences) in enumerate(
            _hit_parts(hit, query, snippet_chars, turn_at, reasons)
        ):
            if role == "user":
                sentences = [drop_retracted(x) for x in sentences]
            if stale:
                sentences = stale.clean(sentences, quoted, ordinal, role)
            if not sentences:
                break  # nothing left of the hit: its companion means nothing alone
            label = f"[{date}] " if date else ""
            text = f"{label}{role}: {' '.join(sentences)}"
            line = Line(str(ordinal), text, count(text), (ordinal, rank, ""), "recalled")
            fits = line.tokens + 1 <= budget
            if k and not fits:
                break  # a companion only where it fits with its hit (see `fit_lines`)
            lines.append(line)
            if not fits:
                break  # the hit is over the share, its companion must not take its place
            budget -= line.tokens + 1
    shown, content, tokens = fit_lines(RECALL_HEADER, lines, cap, count)
    shown_keys = {ln.key for ln in shown}
    candidates = [
        Candidate(
            "turn",
            ln.key,
            ln.tokens,
            reasons[ln.key][0],
            "recalled" if ln.key in shown_keys else "dropped",
            reasons[ln.key][1] if ln.key in shown_keys else "over recall share",
            "recalled",
        )
        for ln in lines
    ]
    contents = [content] if content else []
    return Generated(contents, tokens, [Section("recalled", tokens, len(shown))], candidates)


def _hit_parts(
    hit: RecallHit,
    query: Collection[str],
    snippet_chars: int,
    turn_at: Callable[[int], Turn | None] | None,
    reasons: dict[str, tuple[float, str]],
) -> list[tuple[int, str, str, list[str]]]:
    """What one recall hit shows: its snippet, then its companion (the other
    half of its exchange) when `turn_at` gives one not shown yet; each part's
    (score, reason) goes into `reasons`, by ordinal."""
    parts = [(hit.ordinal, hit.role, hit.date, snippet(hit.text, query, snippet_chars))]
    reasons[str(hit.ordinal)] = (hit.score, "relevant to the current input (BM25)")
    if turn_at is not None:
        comp = _companion(hit, turn_at, snippet_chars // 2)
        if comp is not None and str(comp.ordinal) not in reasons:
            turn = turn_at(comp.ordinal)
            date = (marker_date(turn.text) if turn else None) or hit.date
            parts.append((comp.ordinal, comp.role, date, comp.sentences))
            reasons[str(comp.ordinal)] = (hit.score, comp.reason)
    return parts


def _companion(
    hit: RecallHit, turn_at: Callable[[int], Turn | None], max_chars: int
) -> Companion | None:
    def near(ordinal: int) -> tuple[int, str, str] | None:
        turn = turn_at(ordinal)
        if turn is None or turn.role not in ("user", "assistant") or not turn.text.strip():
            return None
        return turn.ordinal, turn.role, turn.text

    return companion(hit.text, near(hit.ordinal - 1), near(hit.ordinal + 1), max_chars)
