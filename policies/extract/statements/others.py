"""Whose wish it is: someone else's wish or view, and the user setting it aside.

A wish reported from someone else ("my landlord wants…", "老板希望…") is news, not a
requirement of the user; what the user says against it is their own decision, and a
wish the user disowns right after reporting it must not revise anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.extract.statements.statement import Statement
from policies.language.lexicon import Lexicon
from policies.rulebook import Joined

# The user setting someone else's wish aside right after reporting it: "That's her
# idea; I'm not sold", "it's not her call", "we haven't agreed", "那是她的想法",
# "这个她说了不算".
_DISOWN = Lexicon.named("statements", "disown")


# Whose wish it is: someone named or by role, as the subject of wanting or saying.
_THIRD_PARTY = Lexicon.named("statements", "third_party")


def without_disowned(out: list[Statement], sentences: Sequence[str]) -> list[Statement]:
    """Drop someone else's wish that the user sets aside in the same or the next
    sentence ("Dana wants a public demo. That's her wish, we haven't agreed";
    "我妈说春节要涨价。这个她说了不算"): it is news, not a requirement, and must not
    revise the value it speaks of."""
    dropped: set[int] = set()
    for i, text in enumerate(sentences):
        m = _DISOWN.search(text)
        if m is None:
            continue
        wishes = [
            st for st in out
            if (st.index in (i - 1, i)
                or (st.index == i - 2 and st.text.endswith(sentences[i - 1])))
            and _THIRD_PARTY.search(wish := st.text if st.index < i else st.text[: m.start()])
            and not _OWN_WISH.match(wish)
        ]  # fmt: skip
        if not wishes:
            continue
        dropped.update(id(st) for st in wishes)
        # The disclaimer itself ("we haven't agreed") is no rule either.
        dropped.update(id(st) for st in out if st.index == i)
    return [st for st in out if id(st) not in dropped]


_OWN_WISH = Joined("statements", "own_wish_or_view")


# Someone else's wish or view as the sentence's subject: "our CEO wants us to…",
# "my wife thinks…", "老板希望我们…".
OTHERS_WISH = Joined("statements", "others_wish_subject")


_WISH = Joined("statements", "wish_on_us")
# The speaker as the subject of that wish ("we really want…", "我们希望…").
_SPEAKER_WISH = Joined("statements", "own_wish")


def others_wish(text: str) -> bool:
    """Someone else's wish ("Mrs. Zhou really wants us to…", "老板想让我们…")."""
    if OTHERS_WISH.search(text):
        return True
    own = _SPEAKER_WISH.match(text)
    return bool(_WISH.search(text)) and not own
