"""The simplest baseline (`user_turns`): the system prompt and every user turn verbatim."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policies.assemble.backbone.units import total_tokens
from policies.types import AssembledContext, Candidate, Section, Turn

if TYPE_CHECKING:
    from policies.assemble.assembly_input import AssemblyInput


def assemble_user_turns(inp: AssemblyInput) -> AssembledContext:
    """The simplest baseline: the system prompt and every user turn verbatim.

    No assistant turns, no extraction. The budget stays the ceiling: when
    the user's turns outgrow it, the oldest go first.
    """
    sys_t, tail_t = total_tokens(inp.system), total_tokens(inp.tail)
    room = inp.budget - sys_t - tail_t
    users = [t for t in inp.history if t.role == "user"]
    kept: list[Turn] = []
    total = 0
    for t in reversed(users):
        if total + t.tokens > room:
            break
        kept.append(t)
        total += t.tokens
    kept.reverse()
    keep = {t.ordinal for t in kept}
    candidates = [
        Candidate(
            "turn",
            str(t.ordinal),
            t.tokens,
            0.0,
            "kept" if t.ordinal in keep else "dropped",
            "user turn"
            if t.ordinal in keep
            else ("over budget" if t.role == "user" else "not a user turn"),
            "user_turns",
        )
        for t in inp.history
    ]
    return AssembledContext(
        messages=[*(t.raw for t in inp.system), *(t.raw for t in kept), *(t.raw for t in inp.tail)],
        tokens=sys_t + total + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("user_turns", total, len(kept)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=sys_t + tail_t > inp.budget,
    )
