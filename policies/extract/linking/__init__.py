"""Linking: deciding what a new statement does to the memory that is already there.

A chain of named linkers (`chain.PLACEMENT`, after revocations, restores and
values fixed within the message), one module each; every decision carries
the name of the linker that made it and a reason generated from the data
(`Supersede.linker`, `Supersede.why`, the same on `Revoke`, `Conflict`,
`Confirm`). Callers use `link_statements`; long-term memory merges through
it as the extractor does.
"""

from policies.extract.linking.chain import LINKERS, PLACEMENT, Step, link_statements
from policies.extract.linking.context import LinkContext, Linker, named, reason
from policies.memory.decisions import decision_line, decisions

__all__ = [
    "LINKERS",
    "PLACEMENT",
    "LinkContext",
    "Linker",
    "Step",
    "decision_line",
    "decisions",
    "link_statements",
    "named",
    "reason",
]
