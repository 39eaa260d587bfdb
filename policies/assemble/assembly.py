"""Context assemblers: which messages go upstream, within the token budget.

Each assembler is a class with a `name` (the key used in `config.yaml`) and
`assemble(inp) -> AssembledContext`; its parameters are a pydantic model
(`policies.assemble.params`). Order of the forwarded context:

    system -> anchors + working memory -> summary -> recent turns
           -> memory delta -> recalled turns -> replay -> tail

Stable parts first, volatile ones late (DESIGN "Prompt caching"): the
working-memory block is kept as laid out (`MemoryLayout`), new items go to
the late delta; the summary grows by appended chunks; the recent window
keeps every turn since the last compaction until it reaches its high-water
mark, and is then compacted down to its low-water mark (the assembler asks
for it with `compact_upto`; the proxy summarises and assembles again). So
between compactions each prompt is the previous one plus the new turns.
Recalled turns change with every input: DESIGN places them before the recent
turns, which would cut the cached prefix there on every request, so by
default they go late (`recall_position`).

Invariants shared by all managed assemblers (and tested as properties):
the system prompt and the tail are never cut; tool groups are never split;
forwarded tokens stay within the budget unless the mandatory part alone
exceeds it, in which case exactly that part is forwarded; when everything
fits, the client's messages go out byte-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.backbone import BackboneParams, assemble_backbone, assemble_user_turns
from policies.assemble.budget import group_turns, select_recent_groups
from policies.assemble.context import Layout, finish, shortcut, tokens_of, unchanged, unused_memory
from policies.assemble.layered import assemble_layered
from policies.assemble.params import FullParams, SummaryBufferParams, WindowParams
from policies.assemble.recent_window import latest_user_group
from policies.types import AssembledContext, Candidate, Turn


def _with_recent(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    room: int,
    step_share: float,
    layout: Layout,
    extra_candidates: Sequence[Candidate] = (),
) -> AssembledContext:
    """Fill what is left of the budget with a sliding recent window and lay it all out."""
    step = max(0, min(int(inp.budget * step_share), room // 2))
    pin = latest_user_group(groups, inp.tail)
    window = select_recent_groups(groups, room, step=step, pin=pin)
    return finish(inp, groups, window, layout, extra_candidates)


class RawAssembler:
    """Preset A: the client's messages, unchanged (the ceiling for recall)."""

    name: str = "raw"

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        return unchanged(inp, "raw mode")


class WindowAssembler:
    """Preset B: the system prompt, as many recent groups as fit, the tail."""

    name: str = "window"

    def __init__(self, params: WindowParams | None = None) -> None:
        self.params = params or WindowParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := shortcut(inp)) is not None:
            return ctx
        groups = group_turns(inp.history)
        room = inp.budget - tokens_of(inp.system) - tokens_of(inp.tail)
        unused = unused_memory(inp, "window policy keeps no memory")
        return _with_recent(inp, groups, room, self.params.cache_step_share, Layout(), unused)


class SummaryBufferAssembler:
    """Preset C: three layers of history under the budget.

    The rolling summary of older turns (written by a summarisation policy,
    `AssemblyInput.summary_chunks`), older turns recalled for the current
    input, and the recent turns verbatim; no structured item memory (items
    are only used to keep superseded values out of the quoted text).
    Without a summary or recall hits this is the window policy.
    """

    name: str = "summary_buffer"

    def __init__(self, params: SummaryBufferParams | None = None) -> None:
        self.params = params or SummaryBufferParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := shortcut(inp)) is not None:
            return ctx
        return assemble_layered(inp, self.params, None)


class FullAssembler:
    """The layered preset (`layered`; the default before the backbone): C plus
    anchors, working memory (with graded forgetting), its delta, and replay of
    the rules the input touches."""

    name: str = "layered"

    def __init__(self, params: FullParams | None = None) -> None:
        self.params = params or FullParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := shortcut(inp)) is not None:
            return ctx
        return assemble_layered(inp, self.params, self.params)


class BackboneAssembler:
    """Preset D (`full`, the default): the user's own words as the backbone
    (`policies.assemble.backbone`), the assistant's older turns digested, tool results
    cut to key fields, the recent turns whole."""

    name: str = "full"

    def __init__(self, params: BackboneParams | None = None) -> None:
        self.params = params or BackboneParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := shortcut(inp)) is not None:
            return ctx
        return assemble_backbone(inp, self.params)


class UserTurnsAssembler:
    """The baseline every evaluation reports beside `full`: the system prompt
    and every user turn verbatim, nothing else (oldest first out of budget)."""

    name: str = "user_turns"

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := shortcut(inp)) is not None:
            return ctx
        return assemble_user_turns(inp)
