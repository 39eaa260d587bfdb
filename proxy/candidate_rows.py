"""The `memproxy inspect` candidates table's rows: runs of consecutive turns folded into one.

A long conversation's history is hundreds of turn candidates with the same
decision and reason; folded, it reads as one line. Pure functions over the
record's candidate dicts, kept apart from the rich layout in `proxy/inspect_cli.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


def _turn_ordinal(candidate: dict[str, Any]) -> int | None:
    try:
        return int(candidate["ref"]) if candidate["kind"] == "turn" else None
    except (TypeError, ValueError):
        return None


def _turn_range(candidate: dict[str, Any]) -> dict[str, Any]:
    """A candidate the assembler already folded (kind "turns", ref "a-b"), labelled."""
    first, _, last = str(candidate["ref"]).partition("-")
    if not (first.isdigit() and last.isdigit()):
        return candidate
    return {**candidate, "ref": f"{first}–{last} ({int(last) - int(first) + 1} turns)"}


def grouped_candidates(candidates: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Candidates, each run of consecutive turns with one decision and reason folded into
    one row: a long conversation's dropped (or kept) history reads as a single line."""
    run: list[dict[str, Any]] = []

    def fold() -> Iterator[dict[str, Any]]:
        if len(run) == 1:
            yield run[0]
        elif run:
            first, last = _turn_ordinal(run[0]), _turn_ordinal(run[-1])
            yield {
                **run[0],
                "kind": "turns",
                "ref": f"{first}–{last} ({len(run)} turns)",
                "tokens": sum(c["tokens"] for c in run),
            }
        run.clear()

    for cand in candidates:
        ordinal = _turn_ordinal(cand)
        extends = (
            run
            and ordinal is not None
            and cand["decision"] == run[-1]["decision"]
            and cand["reason"] == run[-1]["reason"]
            and ordinal == (_turn_ordinal(run[-1]) or 0) + 1
        )
        if extends:
            run.append(cand)
            continue
        yield from fold()
        if ordinal is not None and cand["decision"] != "mandatory":
            run.append(cand)
        elif cand["kind"] == "turns":
            yield _turn_range(cand)
        else:
            yield cand
    yield from fold()
