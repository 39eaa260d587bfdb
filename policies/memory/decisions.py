"""Decisions as the request record keeps them, and as `memproxy inspect` reads them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.types import Confirm, Conflict, MemoryOp, Revoke, Supersede

# How a decision reads in a sentence, by op.
_VERBS = {
    "supersede": "revised by",
    "revoke": "revoked by",
    "conflict": "flagged as a conflict by",
    "confirm": "confirmed by",
    "separate": "kept separate by",  # the hybrid extractor's model: both stand
}


def decisions(ops: Iterable[MemoryOp]) -> list[dict[str, str]]:
    """Each supersession, revocation, conflict and confirmation of `ops`, with the
    linker that decided it and why (additions are no decision about older memory)."""
    out: list[dict[str, str]] = []
    for op in ops:
        if isinstance(op, Supersede):
            row = {"op": "supersede", "old": op.old_id, "new": op.item.id}
        elif isinstance(op, Conflict):
            row = {"op": "conflict", "old": op.old_id, "new": op.item.id}
        elif isinstance(op, Revoke):
            row = {"op": "revoke", "old": op.old_id}
        elif isinstance(op, Confirm):
            row = {"op": "confirm", "old": op.item_id}
        else:
            continue
        out.append({**row, "linker": op.linker or "unnamed", "why": op.why})
    return out


def decision_line(decision: Mapping[str, str]) -> str:
    """ "revised by value_only: same kind of value, 120 guests → 150 guests" """
    verb = _VERBS.get(decision.get("op", ""), "decided by")
    why = decision.get("why") or ""
    return f"{verb} {decision.get('linker') or 'unnamed'}" + (f": {why}" if why else "")


def attribution(op: Supersede | Revoke | Conflict) -> str:
    """What a version note adds about the decision: " (value_only: same measure, …)"."""
    if not op.linker:
        return ""
    return f" ({op.linker}: {op.why})" if op.why else f" ({op.linker})"
