"""Working memory: the item reducer, slot keys, scoring, graded forgetting, what is stale and what
earns the memory block's room.
"""
