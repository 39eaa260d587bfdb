"""The managed context of a request: the session's summary and recall layers,
the end user's long-term memory, the preset's assembly (compacting and trimming
the summary when the recent window overflows, then assembling again), and what
the assembly laid out kept for the next request (`assemble_managed`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from policies.assemble.assembly_input import AssemblyInput, input_key
from policies.assemble.budget import split_mandatory
from policies.base import AssemblyPolicy
from policies.language.text import term_set
from policies.llm.calls import PolicyCall
from policies.longterm.backfill import place_backfill
from policies.types import AssembledContext, MemoryItem, Turn
from proxy.chat.plan import RequestPlan
from proxy.lifecycle import SessionLayers
from proxy.longterm import user_scope

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


async def _session_layers(p: Pipeline, plan: RequestPlan) -> SessionLayers | None:
    """The session's summary and recall layers, when the preset uses them (read,
    and a fork's copied, from the store: after the turns are stored, unless this
    process holds them)."""
    resolution = plan.resolution
    assert resolution is not None
    if plan.preset.summarizer is None and plan.preset.recall is None:
        return None
    rewound = resolution.start if resolution.kind in ("regenerate", "rewind") else None
    fork = resolution.start if resolution.kind == "fork" else None
    if not p.lifecycle.holds(resolution.session.id):
        await plan.turns_stored()  # the layers are read (and forks copied) from the store
    return await p.lifecycle.state(resolution.session, plan.turns, rewound, fork)


async def _with_longterm(
    p: Pipeline, plan: RequestPlan, items: list[MemoryItem], calls: list[PolicyCall]
) -> RequestPlan:
    """The plan with the end user's long-term memory backfilled (an extracting
    preset only); its policy calls go into `calls`."""
    if plan.preset.extractor is None:
        return plan
    assert plan.resolution is not None
    user = user_scope(plan.ctx.user_header, plan.req.params)
    longterm = await p.longterm.backfill(
        plan.ctx.tenant_id, user, plan.resolution.session.id, [*plan.system, *plan.turns],
        items, plan.budget, plan.counter, calls,
    )  # fmt: skip
    return replace(plan, user=user, longterm=longterm)


async def _keep_layers(
    p: Pipeline,
    plan: RequestPlan,
    managed: AssembledContext,
    layers: SessionLayers,
    compactions: list[tuple[int, int]],
    trimmed: bool,
) -> dict[str, Any]:
    """Keep what this assembly laid out for the next request (memory layout,
    notes in place, backbone levels); returns the request record's lifecycle."""
    assert plan.resolution is not None
    session_id = plan.resolution.session.id
    rebuilt = managed.memory_layout is not None and managed.memory_layout is not (layers.layout)
    if managed.memory_layout is not None:
        layers.layout = managed.memory_layout
    layers.notes = managed.placed_notes
    if managed.backbone_levels is not None:
        layers.backbone = managed.backbone_levels
    if managed.backbone_shown is not None:
        layers.backbone_shown = managed.backbone_shown
    if rebuilt and p.store.shared:
        # Several replicas: the next request may be served by another one.
        await plan.turns_stored()
        await p.store.save_layout(session_id, layers.layout)
    return {
        "summary_upto": layers.upto,
        "summary_chunks": len(layers.chunks),
        "compactions": [list(c) for c in compactions],
        "summary_trimmed": trimmed,
        "memory_layout": "rebuilt" if rebuilt and managed.memory_layout else "kept",
        "repromoted": list(managed.repromoted_ids),
    }


async def assemble_managed(p: Pipeline, plan: RequestPlan, items: list[MemoryItem]) -> RequestPlan:
    """Assemble; when the recent window overflows, compact and assemble again."""
    preset, resolution = plan.preset, plan.resolution
    assert resolution is not None
    session_id = resolution.session.id
    layers = await _session_layers(p, plan)
    calls: list[PolicyCall] = list(plan.policy_calls)
    plan = await _with_longterm(p, plan, items, calls)
    managed = _assemble(p, plan, items, layers)
    compactions: list[tuple[int, int]] = []
    while (
        managed.compact_upto is not None
        and layers is not None
        and preset.summarizer is not None
        and len(compactions) < 2
    ):
        start = layers.upto
        await plan.turns_stored()  # summary chunks are stored after the turns they cover
        await p.summaries.compact(
            session_id,
            layers,
            plan.turns,
            managed.compact_upto,
            preset.summarizer,
            managed.summary_cap,
            plan.counter,
        )
        compactions.append((start, managed.compact_upto))
        managed = _assemble(p, plan, items, layers)
    summarizer = preset.summarizer
    trimmed = False
    if compactions and managed.summary_trimmed and layers and summarizer:
        # The summary no longer fits its share: trim it now, in the request
        # whose prompt changes anyway, rather than line by line later.
        target = int(managed.summary_cap * summarizer.params.trim_to)
        await p.summaries.trim(session_id, layers, target, plan.counter)
        trimmed = True
        managed = _assemble(p, plan, items, layers)
    lifecycle: dict[str, Any] = {}
    if layers is not None:
        lifecycle = await _keep_layers(p, plan, managed, layers, compactions, trimmed)
    plan = replace(
        plan,
        layers=layers,
        compactions=tuple(compactions),
        policy_calls=tuple(calls),
        lifecycle=lifecycle,
    )
    if plan.mode == "shadow":
        return replace(plan, shadow=managed)
    if not (managed.passthrough and resolution.kind != "stateful"):
        plan = replace(plan, forwarded=managed.messages)
    return replace(plan, assembled=managed, context_tokens=managed.tokens)


def _assemble(
    p: Pipeline, plan: RequestPlan, items: list[MemoryItem], layers: SessionLayers | None
) -> AssembledContext:
    system, history, tail = split_mandatory([*plan.system, *plan.turns])
    assembler = plan.preset.assembler
    assert assembler is not None
    recalled = []
    names_speaker = False
    recall = plan.preset.recall
    if layers is not None and recall is not None and recall.max_hits:
        query = term_set("\n".join(t.text for t in tail if t.role == "user"))
        recalled = layers.recall(
            plan.turns, query, limit=recall.max_hits, min_score=recall.min_score
        )
        names_speaker = layers.index.speakers.names_any(
            "\n".join(t.text for t in tail if t.role == "user")
        )
    background = plan.longterm
    managed = _assembled(
        assembler,
        AssemblyInput(
            system=system,
            history=history,
            tail=tail,
            items=items,
            summary=None,
            budget=plan.budget - (background.tokens if background else 0),
            count=plan.counter,
            current_ordinal=plan.turns[-1].ordinal if plan.turns else 0,
            raw_tokens=plan.raw_tokens,
            summary_chunks=tuple(layers.chunks) if layers else (),
            summary_upto=layers.upto if layers else 0,
            recalled=recalled,
            names_speaker=names_speaker,
            memory_layout=layers.layout if layers else None,
            placed_notes=layers.notes if layers else (),
            # Kept per process: with several replicas each lays the frozen
            # part out afresh, so they forward the same context.
            backbone_levels=layers.backbone if layers and not p.store.shared else {},
            backbone_shown=layers.backbone_shown if layers and not p.store.shared else {},
        ),
        layers,
    )
    if background is None:
        return managed
    return place_backfill(managed, background, len(tail), plan.budget)


def _assembled(
    assembler: AssemblyPolicy, inp: AssemblyInput, layers: SessionLayers | None
) -> AssembledContext:
    """The assembler's context for `inp`.

    An input equal to that of the session's last assembly (a regenerate: the
    same request again, the session's state as that request left it) is laid
    out as it was: the assembler is a function of its input and parameters, so
    the last context is handed out again, a copy (the caller adds to it), with
    this request's own message dicts in place of the equal ones it was built on.
    """
    if layers is None:
        return assembler.assemble(inp)
    key = (assembler, input_key(inp))
    turns = (*inp.system, *inp.history, *inp.tail)
    last = layers.assembly
    if last is not None and last[0] == key:
        return _copied(last[2], last[1], turns)
    managed = assembler.assemble(inp)
    layers.assembly = (key, turns, _copied(managed))
    return managed


def _copied(
    ctx: AssembledContext, built_on: tuple[Turn, ...] = (), turns: tuple[Turn, ...] = ()
) -> AssembledContext:
    """A copy of `ctx` that changes to neither affect, its messages of the turns
    `built_on` swapped for those of the equal `turns`."""
    swap = {id(a.raw): b.raw for a, b in zip(built_on, turns, strict=True) if a.raw is not b.raw}
    return replace(
        ctx,
        messages=[swap.get(id(m), m) for m in ctx.messages] if swap else list(ctx.messages),
        sections=[replace(s) for s in ctx.sections],
        candidates=list(ctx.candidates),
        backbone_levels=None if ctx.backbone_levels is None else dict(ctx.backbone_levels),
        backbone_shown=None if ctx.backbone_shown is None else dict(ctx.backbone_shown),
    )
