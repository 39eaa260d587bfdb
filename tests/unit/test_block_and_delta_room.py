"""The working-memory block and its late delta share one room.

At tight budgets the block may borrow up to all of the history budget
(`memory_borrow_share`); the delta (items stated since the block was laid out)
must then fit what the block left, not its own share on top, or the prompt
outgrows the budget.
"""

from __future__ import annotations

from policies.assemble.layered import MemoryQuery, plan_memory
from policies.assemble.params import FullParams
from tests.unit.test_core_lines import RULES, count

PARAMS = FullParams.model_validate({"max_anchors": 0, "min_anchors": 0})


def test_the_delta_takes_only_what_the_block_leaves_of_the_room() -> None:
    first = plan_memory(MemoryQuery(RULES[:4], 10, frozenset(), "", count), None, 400, 0, PARAMS)
    assert first.stable.tokens > 0
    later = MemoryQuery(RULES, 12, frozenset(), "", count)  # two rules said since
    generous = plan_memory(later, first.layout, 400, 200, PARAMS)
    assert not generous.rebuilt
    assert generous.delta.tokens > 0
    room = generous.stable.tokens + generous.delta.tokens - 1
    held = plan_memory(later, first.layout, 400, 200, PARAMS, room=room)
    assert held.stable.tokens + held.delta.tokens <= room
    # with room to spare, the room changes nothing
    roomy = plan_memory(later, first.layout, 400, 200, PARAMS, room=1000)
    assert roomy.delta.contents == generous.delta.contents
