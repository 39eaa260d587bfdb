"""The `AssembledContext` an assembler returns: its messages and their account.

Three shapes: the client's messages unchanged (everything fits, or raw
mode), the mandatory part alone (nothing else fits), or the sections laid
out in order around the recent turns (`finish`). Each comes with the account
the request record shows: every turn, item and section, kept or not and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.budget import RecentWindow, group_turns, is_forwardable
from policies.assemble.generated import Generated
from policies.types import AssembledContext, Candidate, Decision, PlacedNote, Section, Turn


def tokens_of(turns: Sequence[Turn]) -> int:
    return sum(t.tokens for t in turns)


def turn_candidates(
    turns: Sequence[Turn], decision: Decision, reason: str, section: str
) -> list[Candidate]:
    return [
        Candidate("turn", str(t.ordinal), t.tokens, 0.0, decision, reason, section) for t in turns
    ]


def run_candidates(
    turns: Sequence[Turn], decision: Decision, reason: str, section: str
) -> list[Candidate]:
    """One candidate for a run of turns sharing a decision (ref "first-last").

    Long histories are mostly one run of "in the summary" or "outside recent
    window": logging it once keeps the record (and the work per request)
    independent of length.
    """
    if len(turns) <= 2:
        return turn_candidates(turns, decision, reason, section)
    ref = f"{turns[0].ordinal}-{turns[-1].ordinal}"
    return [Candidate("turns", ref, tokens_of(turns), 0.0, decision, reason, section)]


def mandatory_candidates(inp: AssemblyInput) -> list[Candidate]:
    return turn_candidates(
        inp.system, "mandatory", "mandatory: system prompt", "system"
    ) + turn_candidates(inp.tail, "mandatory", "mandatory: current input", "tail")


def unused_memory(inp: AssemblyInput, reason: str) -> list[Candidate]:
    """Items and conflict notes a policy did not consider, logged with why."""
    return [Candidate("item", it.id, 0, 0.0, "dropped", reason) for it in inp.items] + [
        Candidate("conflict", str(i), 0, 0.0, "dropped", reason)
        for i, _ in enumerate(inp.conflict_notes)
    ]


def unchanged(inp: AssemblyInput, reason: str) -> AssembledContext:
    """The client's messages exactly as sent."""
    sys_t, hist_t, tail_t = tokens_of(inp.system), tokens_of(inp.history), tokens_of(inp.tail)
    candidates = mandatory_candidates(inp)
    candidates += run_candidates(inp.history, "kept", reason, "recent")
    candidates += unused_memory(inp, f"not needed: {reason}")
    return AssembledContext(
        messages=[t.raw for t in (*inp.system, *inp.history, *inp.tail)],
        tokens=sys_t + hist_t + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("recent", hist_t, len(inp.history)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=sys_t + tail_t > inp.budget,
        passthrough=True,
    )


def shortcut(inp: AssemblyInput) -> AssembledContext | None:
    """The two cases with nothing to decide: everything fits, or nothing does."""
    sys_t, tail_t = tokens_of(inp.system), tokens_of(inp.tail)
    # Grouping is only needed (and only paid for) when the tokens fit.
    if sys_t + tokens_of(inp.history) + tail_t <= inp.budget and all(
        is_forwardable(g) for g in group_turns(inp.history)
    ):
        return unchanged(inp, "whole conversation fits")
    if sys_t + tail_t <= inp.budget:
        return None
    reason = "mandatory part alone exceeds budget"
    candidates = mandatory_candidates(inp)
    candidates += run_candidates(inp.history, "dropped", reason, "recent")
    candidates += unused_memory(inp, reason)
    return AssembledContext(
        messages=[t.raw for t in (*inp.system, *inp.tail)],
        tokens=sys_t + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=True,
    )


@dataclass(slots=True)
class Layout:
    """The generated sections by position, around the recent turns."""

    head: Sequence[Generated] = ()  # after the system prompt
    middle: Sequence[Generated] = ()  # right before the recent turns
    late: Sequence[Generated] = ()  # after the recent turns, before the tail


def _window_candidates(groups: Sequence[Sequence[Turn]], window: RecentWindow) -> list[Candidate]:
    """The account of the live turns: each kept group's turns, and the dropped
    ones as runs sharing a reason."""
    candidates: list[Candidate] = []
    run: list[Turn] = []
    run_reason = ""
    for i, group in enumerate(groups):
        reason = window.dropped.get(i)
        if reason is None:
            candidates += run_candidates(run, "dropped", run_reason, "recent")
            run = []
            candidates += turn_candidates(group, "kept", "fits: recent window", "recent")
            continue
        if reason != run_reason:
            candidates += run_candidates(run, "dropped", run_reason, "recent")
            run, run_reason = [], reason
        run.extend(group)
    candidates += run_candidates(run, "dropped", run_reason, "recent")
    return candidates


def _in_place_candidates(in_place: Sequence[PlacedNote]) -> list[Candidate]:
    """The account of the earlier late sections forwarded again in place."""
    return [
        Candidate(
            "note",
            f"{n.section}@{n.before}",
            n.tokens,
            0.0,
            "kept",
            "an earlier late section, forwarded again where it went (prompt cache)",
            "in_place",
        )
        for n in in_place
    ]


def _laid_out(
    inp: AssemblyInput, layout: Layout, recent: Sequence[Turn], in_place: Sequence[PlacedNote]
) -> list[dict[str, Any]]:
    """The messages in section order; each note in place right before its turn."""
    before: dict[int, list[PlacedNote]] = {}
    for note in in_place:
        before.setdefault(note.before, []).append(note)
    return [
        *(t.raw for t in inp.system),
        *(m for g in (*layout.head, *layout.middle) for m in g.messages()),
        *(
            m
            for t in recent
            for m in (
                *({"role": "system", "content": n.content} for n in before.get(t.ordinal, ())),
                t.raw,
            )
        ),
        *(m for g in layout.late for m in g.messages()),
        *(t.raw for t in inp.tail),
    ]


def finish(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    window: RecentWindow,
    layout: Layout,
    extra_candidates: Sequence[Candidate],
    summarised: Sequence[Turn] = (),
    in_place: Sequence[PlacedNote] = (),
) -> AssembledContext:
    """Lay the pieces out in section order and write the account.

    `in_place`: earlier late sections, each forwarded right before its turn
    (whose group is in the window).
    """
    recent = [t for i in window.kept for t in groups[i]]
    in_place_tokens = sum(n.tokens for n in in_place)
    recent_tokens = sum(t.tokens for t in recent)
    candidates = mandatory_candidates(inp)
    candidates += run_candidates(summarised, "compressed", "in the rolling summary", "summary")
    candidates += _window_candidates(groups, window)
    candidates += extra_candidates
    sections = [Section("system", tokens_of(inp.system), len(inp.system))]
    for gen in (*layout.head, *layout.middle):
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("recent", recent_tokens, len(recent)))
    if in_place:
        sections.append(Section("in_place", in_place_tokens, len(in_place)))
        candidates += _in_place_candidates(in_place)
    for gen in layout.late:
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("tail", tokens_of(inp.tail), len(inp.tail)))
    placed = [g for g in (*layout.head, *layout.middle, *layout.late) if g.tokens]
    used_ids = dict.fromkeys(i for g in placed for i in g.item_ids)
    return AssembledContext(
        messages=_laid_out(inp, layout, recent, in_place),
        tokens=sum(s.tokens for s in sections),
        budget=inp.budget,
        sections=sections,
        candidates=candidates,
        used_item_ids=tuple(used_ids),
    )
