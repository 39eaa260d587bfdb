""" "Back to the original": the latest revised item gets its old value back."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.thresholds import LEXICAL_MIN
from policies.extract.statements import Statement
from policies.language.segment import replaced_text, shorten
from policies.types import Supersede


class Restore:
    """ "Back to the original": the latest revised item gets its old value back."""

    name = "restore"
    phrase = "back to the earlier value"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """ "Back to the original": the latest revised item gets its old value back.

        The restored item is a new version whose value is the earlier
        verbatim text; the current one is superseded by it, as with any
        revision, so the history stays linear and rollback still works.
        """
        previous = {it.superseded_by: it for it in ctx.history if it.status == "superseded"}
        revised = [it for it in ctx.user_items() if it.id in previous]
        if not revised:
            return False
        scored = [(ctx.targets.lexical(st, it), it.source_ordinal, it) for it in revised]
        current = max(scored, key=lambda x: (x[0] >= LEXICAL_MIN, x[1]))[2]
        old = previous[current.id]
        item = ctx.new_item(st, old.value, old.type, slot=old.slot)
        item.importance = max(old.importance, current.importance)
        item.replaces = replaced_text(current.value, None, old.value)
        ctx.claimed.add(current.id)
        ctx.emit(Supersede(current.id, item), why=f"{ctx.phrase}: {shorten(old.value, 40)}")
        return True


RESTORE = Restore()
