"""What a revoking cue ("stop …", "scratch the …", "不用…了") names.

The words around the cue, the object a revoking verb takes inside it ("drop *the
jokes*"), the short phrase right after it ("scratch *the trade-in*"), and content
withheld as outdated ("leave out anything that changed") rather than a rule
revoked. The revocation linker reads these to find the rule that goes, and
`effects.keep_siblings` to tell the withdrawn clause from the rules beside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from policies.extract.linking.denials import memorable_denial
from policies.extract.linking.thresholds import NEAR_CHARS
from policies.extract.statements import Statement
from policies.language.matching import weighted_terms
from policies.rulebook import Joined

# Rules of policies/rules/<lang>/revision.yaml read as one pattern of both halves,
# the Chinese half first.
_ZH_FIRST = ("zh", "en")

# A leading article or determiner, taken off the phrase a cue names ("scratch *the*
# trade-in") before it is compared.
_ARTICLE = Joined("revision", "article")


def revoked_text(st: Statement) -> str:
    """The revocation cue and what follows it closely ("不用那么简短了", "no need to
    keep it so short")."""
    span = st.cues.revoke_span
    return st.text if span is None else st.text[span[0] : span[1] + 24]


# What was changed or dropped, as a kind of content: "之前改掉的", "旧的", "anything that
# changed", "the outdated bits". Leaving it out of an answer revokes no rule.
_OUTDATED = Joined("revision", "outdated", _ZH_FIRST)


# The function words of a zh revoking cue; what is left of the cue is its object
# ("别用表格了" → 用表格).
_ZH_CUE_WORDS = Joined("revision", "revoke_function_words")


def cue_names_object(cue: str) -> bool:
    """Does the revoking cue itself name what goes ("ditch the bullet points", "别用
    表格了"), unlike "scratch that", "算了"?"""
    named = _DROPPED_OBJECT.match(cue)
    if named is not None:
        cue = named.group(1)
    elif re.search(r"[\u3400-\u9fff]", cue):
        cue = _ZH_CUE_WORDS.sub("", cue)
    else:
        return False
    return any(w >= 1 for w in weighted_terms(cue).values())


def names_outdated(st: Statement) -> bool:
    """Does the cue withhold outdated content ("之前改掉的就别写了") rather than a rule?"""
    span = st.cues.revoke_span
    if span is None:
        return False
    return bool(_OUTDATED.search(st.text[max(0, span[0] - 12) : span[1] + 24]))


# The object a revoking verb takes inside its cue ("drop the jokes", "forget the 400
# cap"); "scratch that", "forget it" take none.
_DROPPED_OBJECT = Joined("revision", "dropped_object")


def named_after_cue(st: Statement) -> str | None:
    """What "scratch X" / "drop X" names, when it is a short, specific phrase."""
    span = st.cues.revoke_span
    if span is None:
        return None
    m = re.match(r"\s*([^,.;:!?，。；：！？]{2,40})", st.text[span[1] :])
    if m is None:
        return None
    token = _ARTICLE.sub("", m.group(1).strip())
    if re.search(r"[\u3400-\u9fff]", token) or len(token.split()) > 3:
        return None
    if sum(1 for w in weighted_terms(token).values() if w >= 1) == 0:
        return None
    return token if memorable_denial(token) else None


def near_cue(st: Statement) -> Mapping[str, float]:
    """Terms around the revocation cue: where the revoked thing is named."""
    span = st.cues.revoke_span or (0, len(st.text))
    return weighted_terms(st.text[max(0, span[0] - 12) : span[1] + 30])


def named_near(near: Mapping[str, float], item: Mapping[str, float], strict: bool) -> bool:
    """Is `item` named in the words around a revocation cue?

    One shared word/bigram (or three CJK characters) for a directive; two
    shared words/bigrams for anything else.
    """
    words = sum(1 for t, w in near.items() if w >= 1 and item.get(t, 0) >= 1)
    if strict:
        return words >= 2
    chars = sum(1 for t, w in near.items() if w < 1 and t in item)
    return words >= 1 or chars >= NEAR_CHARS
