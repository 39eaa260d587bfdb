""" "X — no wait, Y": a value the speaker fixed within the message."""

from __future__ import annotations

import dataclasses

from policies.extract.linking.context import LinkContext
from policies.extract.linking.denials import memorable_denial, taken_back
from policies.extract.statements import Statement
from policies.language.cues import SELF_CORRECTION, read_cues
from policies.language.segment import SELF_FIX as FIX_CUE
from policies.language.values import extract_values, value_signature
from policies.types import Add, Supersede


class SelfFix:
    """ "X — no wait, Y": a value the speaker fixed within the message."""

    name = "self_fix"
    phrase = "fixed within the message"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """ "X — no wait, Y", "X——不对，Y": the speaker fixed a value within the message.

        It revises an earlier item only if one holds X; otherwise the statement is
        placed on its own merits (its other values, no change cue from the fix),
        and X is remembered as replaced, so that quotes of it read as outdated.
        """
        denied = taken_back(st.text)
        if denied is None or st.reported:
            return False
        # The rest of the statement is placed as any other, by the chain this linker
        # is part of (imported here: the chain imports every linker).
        from policies.extract.linking.chain import place_plain

        sigs = {value_signature(v) for v in denied}
        holders = [
            it for it in ctx.user_items()
            if any(value_signature(v) in sigs for v in extract_values(it.value))
        ]  # fmt: skip
        if holders:
            target = max(holders, key=lambda it: it.source_ordinal)
            ctx.supersede(target, st, st.text, st.type)
            return True
        m = FIX_CUE.search(st.text)
        rest = st.text if m is None else st.text[: m.start()] + " " + st.text[m.end() :]
        # "$260 — no wait, $620, I read the receipt wrong": the admission is about the value
        # fixed here, it revises nothing said before.
        own = read_cues(SELF_CORRECTION.sub(" ", rest)).change
        plain = dataclasses.replace(
            st,
            values=tuple(v for v in st.values if value_signature(v) not in sigs),
            change=own if st.change <= st.cues.change else st.change,
            correction=False,
            contrast=(),
        )
        start = len(ctx.ops)
        place_plain(ctx, plain)
        st.consumed = plain.consumed
        successor = next(
            (
                op.item for op in ctx.ops[start:]
                if isinstance(op, (Add, Supersede)) and op.item.value == st.text
            ),
            None,
        )  # fmt: skip
        if successor is None:
            return True
        for v in denied:
            if memorable_denial(v.text):
                ctx.emit(Add(ctx.denied(st, v.text, successor.id)))
        return True


SELF_FIX = SelfFix()
