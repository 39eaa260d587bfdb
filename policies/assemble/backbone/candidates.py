"""The backbone's record of what it did with each turn (the inspector's candidates)."""

from __future__ import annotations

from collections.abc import Sequence

from policies.assemble.backbone.units import Unit
from policies.types import Candidate, Turn


def mandatory_candidates(system: Sequence[Turn], tail: Sequence[Turn]) -> list[Candidate]:
    """The system prompt and the current input: never cut."""
    return [
        Candidate("turn", str(t.ordinal), t.tokens, 0.0, "mandatory", f"mandatory: {what}", section)
        for turns, what, section in (
            (system, "system prompt", "system"),
            (tail, "current input", "tail"),
        )
        for t in turns
    ]


def merge_runs(candidates: list[Candidate]) -> list[Candidate]:
    """Adjacent turn candidates with one decision and reason as one run ("first-last"):
    long histories are mostly runs, and the record stays independent of length."""
    out: list[Candidate] = []
    run: list[Candidate] = []

    def flush() -> None:
        if len(run) > 2:
            first, last = run[0].ref.split("-")[0], run[-1].ref.split("-")[-1]
            c = run[0]
            out.append(
                Candidate(
                    "turns",
                    f"{first}-{last}",
                    sum(x.tokens for x in run),
                    0.0,
                    c.decision,
                    c.reason,
                    c.section,
                )
            )
        else:
            out.extend(run)
        run.clear()

    for c in candidates:
        same = (
            run
            and c.kind in ("turn", "turns")
            and (c.decision, c.reason, c.section)
            == (run[0].decision, run[0].reason, run[0].section)
        )
        if not same:
            flush()
        if c.kind in ("turn", "turns") and c.decision != "mandatory":
            run.append(c)
        else:
            out.append(c)
    flush()
    return out


def unit_candidates(u: Unit, tokens: int) -> list[Candidate]:
    out: list[Candidate] = []
    if u.user is not None:
        decision, reason = {
            2: ("kept", "backbone: the user's own words"),
            1: ("compressed", u.reason),
            0: ("dropped", u.reason),
        }[u.user_level]
        out.append(
            Candidate("turn", str(u.user.ordinal), u.user.tokens, 0.0, decision, reason, "backbone")  # type: ignore[arg-type]
        )
    rest = [t for g in u.groups for t in g]
    if rest:
        ref = f"{rest[0].ordinal}-{rest[-1].ordinal}" if len(rest) > 1 else str(rest[0].ordinal)
        decision, reason = {
            2: ("compressed", "backbone: assistant digest, tool key fields"),
            1: ("compressed", u.reason or "backbone: tool key fields"),
            0: ("dropped", u.reason),
        }[u.assistant_level]
        out.append(
            Candidate("turns", ref, sum(t.tokens for t in rest), 0.0, decision, reason, "backbone")  # type: ignore[arg-type]
        )
    return out
