"""The layered presets (`summary_buffer`, `layered`): sections the assembler writes.

    system -> anchors + working memory -> summary -> recent turns
           -> memory delta -> recalled turns -> replay -> tail

`assemble.py` lays one context out; the working memory it writes is
`working_memory.py` (the block, `memory_block.py`, kept between requests,
and its late delta, `memory_delta.py`); `replay.py` restates the rules the
input touches. The summary and recall sections are shared with the backbone
(`policies.assemble.quoted_turns`).
"""

from policies.assemble.layered.assemble import assemble_layered
from policies.assemble.layered.memory_block import MemoryQuery
from policies.assemble.layered.replay import plan_replay
from policies.assemble.layered.working_memory import MemoryPlan, plan_memory

__all__ = ["MemoryPlan", "MemoryQuery", "assemble_layered", "plan_memory", "plan_replay"]
