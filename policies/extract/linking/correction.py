"""A correction of a value no item holds: added, the denied value kept as replaced."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.denials import memorable_denial
from policies.extract.statements import Statement
from policies.types import Add


class Correction:
    """A correction of a value no item holds: added, the denied value kept as replaced."""

    name = "correction"
    phrase = "corrects a value said in passing"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        denied = [token for token in st.contrast if memorable_denial(token)]
        if not (st.correction and denied):
            return False
        item = ctx.new_item(st, st.text, st.type)
        ctx.emit(Add(item))
        ctx.emit_all(Add(ctx.denied(st, token, item.id)) for token in denied)
        return True


CORRECTION = Correction()
