"""Overflow: how the frozen part gives way when it outgrows its room.

What goes first is what carries nothing current (chit-chat, digests no later
turn builds on, statements whose every item changed), at once; then, step by
step, replies and tool rounds, user turns condensed, and whole exchanges
(found again by recall), the first exchange last unless it is long beside the
room. Levels start from the
previous request's so that most compactions only append.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from policies.assemble.backbone.knowledge import Knowledge, informative
from policies.assemble.backbone.params import FULL_DIGEST, TOOLS_ONLY
from policies.assemble.backbone.render import Renderer
from policies.assemble.backbone.units import Unit
from policies.assemble.digest import accepts, digest_assistant
from policies.extract.choices import chosen_option, list_options
from policies.language.values import extract_values


# Every request asks it of every exchange of its history, and an exchange's
# texts do not change: the answer is worked out once per pair.
@lru_cache(maxsize=8192)
def _referenced(text: str, next_user: str) -> bool:
    """Whether the next user turn builds on this assistant reply (a pick from its
    list, or taking up what it worked out)."""
    if not next_user:
        return False
    options = list_options(text)
    return (bool(options) and chosen_option(next_user, options) is not None) or accepts(next_user)


Move = tuple[int, int, int, str]

UNUSED_DIGEST = "overflow: assistant digest no later turn builds on"
# The same move made by `lean_digests`, before the frozen part is over its room.
LEAN_DIGEST = "lean_digests: assistant digest no later turn builds on"


@lru_cache(maxsize=8192)
def _numbers(text: str) -> frozenset[float]:
    return frozenset(v.number for v in extract_values(text) if v.number is not None)


def _with_new_values(units: Sequence[Unit], r: Renderer) -> set[int]:
    """The units whose assistant digest holds a figure no user turn up to the
    next one stated: one the assistant worked out or a tool returned, which
    the user's words alone do not carry. For each unit a function of the turns
    up to its next user turn, so the answer does not change on later requests,
    nor with how many of the layout's units are asked about (`units` is a
    prefix of `r.units`): worked out once per layout, kept on the renderer."""
    if r.new_values is None:
        r.new_values = _new_values(r.units, r)
    return {i for i in r.new_values if i < len(units)}


def _new_values(units: Sequence[Unit], r: Renderer) -> set[int]:
    out: set[int] = set()
    said: set[float] = set()
    for i, u in enumerate(units):
        if u.user is not None:
            said |= _numbers(u.user.text)
        known = said | _numbers(r.next_user[i])
        for group in u.groups:
            head = group[0]
            if head.role != "assistant" or head.tool_call_ids:
                continue
            digest = digest_assistant(
                head.text, r.next_user[i], r.p.assistant_sentences, r.p.assistant_max_chars
            )
            if _numbers(digest) - known:
                out.add(i)
                break
    return out


def _chatter(units: Sequence[Unit], r: Renderer, k: Knowledge) -> set[int]:
    """Exchanges (not the first) whose user turn carries nothing current: no
    item of the engine's and no informative sentence. Each unit's answer is its
    own, whatever prefix of the layout's units `units` is: worked out once per
    layout (for the renderer's knowledge), kept on the renderer."""
    if k is not r.k:
        return _chatter_of(units, r, k)
    if r.chatter is None:
        r.chatter = _chatter_of(r.units, r, k)
    return {i for i in r.chatter if i < len(units)}


def _chatter_of(units: Sequence[Unit], r: Renderer, k: Knowledge) -> set[int]:
    out: set[int] = set()
    for i, u in enumerate(units):
        if i == 0 or u.user is None:
            continue
        o = u.user.ordinal
        if k.live.get(o) or k.outdated.get(o):
            continue
        if not informative(u.user.text, "user", r.p.summarizer):
            out.add(i)
    return out


def _phases(
    units: Sequence[Unit], r: Renderer, k: Knowledge, room: int
) -> tuple[list[Move], list[Move]]:
    """The moves by which the frozen part gives way: (all at once, one by one).

    The first list goes together as soon as the frozen part is over its room,
    so that later compactions only append to it: exchanges that carry nothing
    current, assistant digests no later turn builds on, statements whose every
    item was changed later. The second goes step by step, oldest first (the
    first exchange last): user turns cut to their informative sentences (with
    the digests the next turn built on), then whole exchanges (left to recall).
    """
    at_once: list[Move] = []
    stepwise: list[Move] = []
    n = len(units)
    chatter = _chatter(units, r, k)
    at_once += [(i, 0, 0, "overflow: carries nothing current") for i in sorted(chatter)]
    for i in range(n):
        u = units[i]
        if i in chatter or not u.groups:
            continue
        text = "\n".join(g[0].text for g in u.groups if g[0].role == "assistant")
        if not _referenced(text, r.next_user[i]):
            at_once.append((i, 2, TOOLS_ONLY, UNUSED_DIGEST))
    for i in range(1, n):
        u = units[i]
        if u.user is None or i in chatter:
            continue
        o = u.user.ordinal
        if k.outdated.get(o) and not k.live.get(o):
            at_once.append((i, 0, 0, "overflow: everything it stated was changed later"))
    # Cutting down goes newest first: the prompt then breaks late, where less
    # of it has to be paid again. Whole exchanges go oldest first: the newest
    # carry the revisions.
    order = [*range(n - 1, 0, -1), 0]
    for i in order:
        if i not in chatter and units[i].groups:
            stepwise.append((i, 2, 0, "overflow: older replies and tool rounds left out"))
    for i in order:
        u = units[i]
        # A condensed turn is the proxy's text: one stating a value changed
        # later stays in the user's own words (annotated) or goes whole.
        if (
            u.user is not None
            and i not in chatter
            and not k.outdated.get(u.user.ordinal)
            and r.condensable(u.user)
        ):
            stepwise.append((i, 1, 0, "overflow: condensed to its informative sentences"))

    # Whole exchanges go oldest first, those whose words the engine found
    # nothing standing in before the others; the first exchange (the task's
    # subject) last while it is small beside the room (`first_keep_share`),
    # else in its place: a long opening at a small budget crowds out the
    # later turns that revise it.
    def holds_live(i: int) -> bool:
        user = units[i].user
        return user is not None and bool(k.live.get(user.ordinal))

    first_last = n > 0 and r.render(0).tokens <= r.p.first_keep_share * room
    rest = [i for i in range(1 if first_last else 0, n) if i not in chatter]
    last = [0] if first_last else []
    for i in [*(i for i in rest if not holds_live(i)), *(i for i in rest if holds_live(i)), *last]:
        stepwise.append((i, 0, 0, "overflow: oldest exchanges left to recall"))
    return at_once, stepwise


def _apply(units: list[Unit], r: Renderer, move: Move) -> int:
    """Apply one move (levels only go down); the tokens it freed."""
    i, user_level, assistant_level, reason = move
    u = units[i]
    if u.user_level <= user_level and u.assistant_level <= assistant_level:
        return 0
    before = r.render(i).tokens
    u.user_level = min(u.user_level, user_level)
    u.assistant_level = min(u.assistant_level, assistant_level)
    u.reason = reason
    return before - r.render(i).tokens


def explanatory(units: Sequence[Unit], ratio: float) -> bool:
    """Whether the assistant's side so far (its replies, tool calls and
    results) is at least `ratio` times the user's turns in characters: an
    assistant that explains or works with tools, whose unreferenced digests
    can go, rather than a second person stating facts."""
    user = sum(len(u.user.text) for u in units if u.user is not None)
    other = sum(len(t.text) for u in units for g in u.groups for t in g)
    return other >= ratio * user


def _shrink(units: list[Unit], r: Renderer, k: Knowledge, free: int, room: int, lean: bool) -> int:
    """Free at least `free` tokens of the frozen part (see `_phases`; `room`: its cap);
    with `lean` (`lean_digests`) the moves that go at once go even when nothing has to.
    The tokens freed: each move changes its own unit's rendering only."""
    if free <= 0 and not lean:
        return 0
    wanted = free
    at_once, stepwise = _phases(units, r, k, room)
    if free <= 0:
        # Nothing has to go (`lean_digests`): only the replies no later turn
        # builds on; the user's words stay until there is no room for them.
        figures = _with_new_values(units, r)
        at_once = [
            (i, a, b, LEAN_DIGEST)
            for i, a, b, why in at_once
            if why == UNUSED_DIGEST and r.next_user[i] and i not in figures
        ]
    for move in at_once:
        free -= _apply(units, r, move)
    for move in stepwise:
        if free <= 0:
            break
        free -= _apply(units, r, move)
    return wanted - free


def frozen_tokens(r: Renderer, n: int) -> int:
    return sum(r.render(i).tokens for i in range(n))


def _fit(
    units: list[Unit],
    n: int,
    cap: int,
    r: Renderer,
    k: Knowledge,
    step: int,
    start: Any,
    lean: bool,
) -> int:
    for u in units[:n]:
        u.user_level, u.assistant_level, u.reason = start(u)
    total = frozen_tokens(r, n)
    over = total - cap
    # With `lean_digests` the digests no later turn builds on go as soon as an
    # exchange is frozen, not only once the frozen part is over its room.
    if over > 0 or (lean and n > 0):
        total -= _shrink(
            units[:n], r, k, math.ceil(over / step) * step if over > 0 else 0, cap, lean
        )
    return total


def fit_frozen(
    units: list[Unit],
    n: int,
    cap: int,
    r: Renderer,
    k: Knowledge,
    step: int,
    sticky: Any,
) -> None:
    """Levels for the first `n` units within `cap`: from the previous request's
    (the prompt then only changes where something new gives way), unless laying
    the frozen part out afresh would show more than a step more of it (a rebase)."""
    lean = r.p.lean_digests and explanatory(units, r.p.lean_min_reply_ratio)
    kept = _fit(
        units,
        n,
        cap,
        r,
        k,
        step,
        lambda u: sticky.get(u.first_ordinal, (2, FULL_DIGEST, "")),
        lean,
    )
    if not sticky or kept > cap - 2 * step:
        return
    levels = [(u.user_level, u.assistant_level, u.reason) for u in units[:n]]
    if _fit(units, n, cap, r, k, step, lambda u: (2, FULL_DIGEST, ""), lean) < kept + step:
        for u, (a, b, why) in zip(units[:n], levels, strict=True):
            u.user_level, u.assistant_level, u.reason = a, b, why
