"""Where the sections the managed assemblers write used to live; now re-exports.

The module was split by concern: `policies.assemble.generated` (`Generated`,
the headers), `policies.assemble.item_lines` (an item's line),
`policies.assemble.lines` (fitting lines under a cap),
`policies.assemble.layered` (working memory, its delta, replay) and
`policies.assemble.quoted_turns` (the summary and recall sections). Import
from those; the names stay importable here for modules not yet moved over
(`policies.assemble.backbone.assemble`).
"""

from __future__ import annotations

from policies.assemble.generated import (
    CONFLICT_MARK,
    DELTA_HEADER,
    MEMORY_HEADER,
    RECALL_HEADER,
    REPLAY_HEADER,
    Generated,
    nothing,
)
from policies.assemble.item_lines import core_line, core_text, render_item_line, slot_terms
from policies.assemble.layered import MemoryPlan, MemoryQuery, plan_memory, plan_replay
from policies.assemble.lines import Line, fit_lines, fit_tiered, one_line
from policies.assemble.quoted_turns import plan_recall, plan_summary

__all__ = [
    "CONFLICT_MARK",
    "DELTA_HEADER",
    "MEMORY_HEADER",
    "RECALL_HEADER",
    "REPLAY_HEADER",
    "Generated",
    "Line",
    "MemoryPlan",
    "MemoryQuery",
    "core_line",
    "core_text",
    "fit_lines",
    "fit_tiered",
    "nothing",
    "one_line",
    "plan_memory",
    "plan_recall",
    "plan_replay",
    "plan_summary",
    "render_item_line",
    "slot_terms",
]
