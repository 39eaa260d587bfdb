"""The kind of task a standing rule is for ("whenever you book a hotel…").

A user's lasting preference is often scoped to a kind of task rather than to
a subject: "whenever you book a hotel for me, make sure it has a gym",
"每次帮我订酒店的时候，都要选带健身房的". The next conversation asking for that
kind of task names the task and little else the rule says ("find a hotel in
Rotterdam"): one shared word, below what lexical relevance accepts. Here the
scope clause of such a rule is read, and a new request that names what the
scope names (the thing, not the verb: "book" alone says nothing) makes the
rule relevant. Patterns are data; examples in `tests/unit/test_task_scope.py`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from policies.assemble.recall import index_terms

# A scope clause: what follows "whenever", "every time", "for every…",
# "以后…都", "每次…的时候".
SCOPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "whenever",
        re.compile(
            r"\b(?:whenever|every time|each time|any ?time|always when)\s+(?P<s>[^,.;!?]{3,60})",
            re.IGNORECASE,
        ),
    ),
    (
        "for_every",
        re.compile(
            r"\b(?:for|on|with|in) (?:every|each|all|any) (?P<s>[^,.;!?]{3,40})", re.IGNORECASE
        ),
    ),
    (
        "zh_each_time",
        re.compile(
            r"(?:以后|今后|每次|每回|凡是|只要)(?P<s>[^，。；！？,]{2,20}?)(?:的时候|时|都|一律)"
        ),
    ),
)
# Words of a scope that name the doing, not the kind of task: a request
# sharing only these is not the same kind of task.
_DOING = frozenset(
    """you me for book booking books booked order ordering find finding get getting make
    making buy buying pick choose plan planning reserve reserving arrange arranging send
    sending write writing help set need new""".split()
)
_ZH_DOING = frozenset("帮我 我订 订一 一下 给我 帮忙 我找 我买".split())


@lru_cache(maxsize=4096)
def scope_terms(rule: str) -> frozenset[str]:
    """The terms naming the kind of task `rule` is scoped to (empty: no scope)."""
    out: set[str] = set()
    for _name, pattern in SCOPES:
        for m in pattern.finditer(rule):
            out |= {t for t in index_terms(m.group("s")) if t not in _DOING and t not in _ZH_DOING}
    # A zh bigram with the doing verb ("订酒") says less than the thing ("酒店").
    return frozenset(t for t in out if not (len(t) == 2 and t[0] in "订帮买找"))


def shared_task(rule: str, request: str) -> str | None:
    """A term naming the kind of task `rule` is for that `request` names too."""
    scope = scope_terms(rule)
    if not scope:
        return None
    shared = sorted(scope & set(index_terms(request)))
    return shared[0] if shared else None
