"""Lines under a header within a token cap: how every written section is fitted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from policies.types import MESSAGE_OVERHEAD_TOKENS, TokenCounter


def one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(slots=True)
class Line:
    key: str  # item id, the conflict note's index, or the entity line's key
    text: str
    tokens: int
    order: tuple[int, int, str]  # display order; priority is the list order
    section: str
    short: bool = False  # the item's core clauses only (`core_line`)


def fit_lines(
    header: str, lines: Sequence[Line], cap: int, count: TokenCounter
) -> tuple[list[Line], str, int]:
    """Greedily fit lines (given in priority order) under a header within `cap`.

    Estimates per line (its own count + 1 for the newline), then counts the
    joined text once, exactly, and drops the lowest priority line until it
    fits: BPE merges make the joined count differ slightly from the sum.
    """
    used = count(header) + MESSAGE_OVERHEAD_TOKENS
    chosen: list[Line] = []
    for line in lines:
        if used + line.tokens + 1 <= cap:
            chosen.append(line)
            used += line.tokens + 1
    while chosen:
        shown = sorted(chosen, key=lambda ln: ln.order)
        content = "\n".join([header, *(ln.text for ln in shown)])
        tokens = count(content) + MESSAGE_OVERHEAD_TOKENS
        if tokens <= cap:
            return shown, content, tokens
        chosen.pop()
    return [], "", 0


def fit_tiered(
    header: str,
    lines: Sequence[Line],
    shorts: Mapping[str, Line],
    cap: int,
    count: TokenCounter,
) -> tuple[list[Line], str, int]:
    """`fit_lines`, with lines shortened to their core (`shorts`, by key) when
    that lets more of them fit: the lowest-ranked first, and no more of them
    than it takes to show as many lines as with all of them short. When all
    fit whole, all are shown whole."""
    whole = fit_lines(header, lines, cap, count)
    if len(whole[0]) == len(lines) or not shorts:
        return whole

    def shortened_from(k: int) -> tuple[list[Line], str, int]:
        return fit_lines(
            header, [*lines[:k], *(shorts.get(ln.key, ln) for ln in lines[k:])], cap, count
        )

    best = shortened_from(0)
    target = len(best[0])
    if target <= len(whole[0]):
        return whole
    # The latest start of the shortened run that still shows `target` lines.
    lo, hi = 0, len(lines)  # shortening from lo reaches target, from hi it does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        trial = shortened_from(mid)
        if len(trial[0]) >= target:
            lo, best = mid, trial
        else:
            hi = mid
    return best
