"""The conflict notes: what to confirm with the user, within their share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from policies.assemble.backbone.params import NOTES_HEADER
from policies.assemble.generated import CONFLICT_MARK, Generated, nothing
from policies.assemble.lines import one_line
from policies.types import MESSAGE_OVERHEAD_TOKENS, Candidate, Section


def conflict_notes(notes: Sequence[str], cap: int, count: Any) -> Generated:
    lines = [f"- {CONFLICT_MARK}{one_line(n)}" for n in notes if n.strip()]
    out: list[str] = []
    for line in lines:
        text = "\n".join([NOTES_HEADER, *out, line])
        if count(text) + MESSAGE_OVERHEAD_TOKENS > cap:
            break
        out.append(line)
    if not out:
        return nothing("notes")
    content = "\n".join([NOTES_HEADER, *out])
    tokens = count(content) + MESSAGE_OVERHEAD_TOKENS
    cands = [
        Candidate("conflict", str(i), 0, 0.0, "kept", "conflict note", "notes")
        for i in range(len(out))
    ]
    return Generated([content], tokens, [Section("notes", tokens, len(out))], cands)
