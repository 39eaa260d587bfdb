"""What replaces what a revocation takes back.

A rule stated right beside the revocation ("stop flagging that. Instead, quote
the fare"), or a plain switch to another choice in the next sentence ("算了，会所
太小了。我们改去公园吧"): the revoked item is superseded by it rather than just
revoked, so the record says what holds now.
"""

from __future__ import annotations

from policies.extract.statements import Statement
from policies.language.cues import STANDING
from policies.rulebook import Joined
from policies.types import RULE_TYPES, MemoryItem

# Rules of policies/rules/<lang>/revision.yaml read as one pattern of both halves,
# the Chinese half first.
_ZH_FIRST = ("zh", "en")


# Moving to another choice without a rule cue: "我们改去'蹦蹦乐'吧", "we're moving it to
# the Elks Lodge instead".
SWITCH = Joined("revision", "switch", _ZH_FIRST)


def replacing_rule(
    st: Statement, statements: list[Statement], target: MemoryItem | None = None
) -> Statement | None:
    """The rule stated next to a revocation, which replaces what was revoked.

    Usually right after it ("stop flagging that. Instead, quote the IC
    fare"); before it only when it is itself a standing rule ("from now on
    write pytest tests. No more TestCase classes.").
    """

    def usable(other: Statement) -> bool:
        return not other.revoke and not other.consumed and other.type in RULE_TYPES

    after = [o for o in statements if st.index < o.index <= st.index + 2 and usable(o)]
    if after:
        return after[0]
    # A choice withdrawn ("算了，小区会所太小了") is often replaced by a plain
    # statement of the new one in the very next sentence.
    if target is not None and target.type != "directive":
        switched = [
            o for o in statements
            if o.index == st.index + 1 and not o.revoke and not o.consumed
            and (o.cues.change >= 1 or SWITCH.search(o.text))
        ]  # fmt: skip
        if switched:
            return switched[0]
    before = [
        o for o in statements
        if st.index - 2 <= o.index < st.index and usable(o)
        and (STANDING.search(o.text) or o.cues.change >= 2)
    ]  # fmt: skip
    return before[-1] if before else None
