"""Client messages as turns: hashes, chain hashes, token counts — each computed once.

A client that keeps its history resends every earlier turn on every request.
`ConversationCache` remembers, per session, the turns of the last request (as
the client sent them) with their hashes, chain hashes and token counts, so a
continuation costs work proportional to its new tail, not to the history: the
resent prefix is recognised by a C-level list comparison.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.budget import message_tokens
from policies.types import Turn
from proxy.chat_request import SYSTEM_ROLES, chain_hashes, message_hash, message_text
from proxy.store.repo import SessionRow, StoredMessage
from proxy.tokens import TokenCounter


def _tool_call_ids(msg: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(c.get("id")) for c in msg.get("tool_calls") or () if isinstance(c, dict))


def make_turn(counter: TokenCounter, msg: dict[str, Any], ordinal: int) -> Turn:
    return Turn(
        ordinal,
        str(msg.get("role")),
        message_text(msg),
        msg,
        message_tokens(msg, counter),
        _tool_call_ids(msg),
        msg.get("tool_call_id"),
    )


def turn_from_stored(stored: StoredMessage) -> Turn:
    return Turn(
        stored.ordinal,
        stored.role,
        stored.text,
        stored.message,
        stored.tokens,
        stored.tool_call_ids,
        stored.tool_call_id,
    )


def stored_from_turn(turn: Turn, content_hash: str, chain_hash: str) -> StoredMessage:
    return StoredMessage(
        ordinal=turn.ordinal,
        role=turn.role,
        message=turn.raw,
        text=turn.text,
        tool_call_id=turn.tool_call_id,
        tool_call_ids=turn.tool_call_ids,
        content_hash=content_hash,
        chain_hash=chain_hash,
        tokens=turn.tokens,
        created_at=time.time(),
    )


@dataclass(slots=True)
class Conversation:
    """The client's messages: leading system messages, then turns (ordinal 0..)."""

    system: list[dict[str, Any]]
    raws: list[dict[str, Any]]
    turns: list[Turn]
    hashes: list[str]
    chain: list[str]

    @property
    def first_hash(self) -> str:
        return self.hashes[0] if self.hashes else ""

    def stored(self, start: int, base: int = 0, previous: str = "") -> list[StoredMessage]:
        """Turns from `start` on, stored at ordinals `base + i` (stateful appends)."""
        if base == 0 and not previous:
            return [
                stored_from_turn(t, h, c)
                for t, h, c in zip(
                    self.turns[start:], self.hashes[start:], self.chain[start:], strict=True
                )
            ]
        chain = chain_hashes(self.hashes[start:], previous)
        out = []
        for i, (turn, h, c) in enumerate(
            zip(self.turns[start:], self.hashes[start:], chain, strict=True)
        ):
            moved = Turn(
                base + i,
                turn.role,
                turn.text,
                turn.raw,
                turn.tokens,
                turn.tool_call_ids,
                turn.tool_call_id,
            )
            out.append(stored_from_turn(moved, h, c))
        return out


@dataclass(slots=True)
class SessionTurns:
    """What the cache keeps of one session: its turns as last seen, and the row."""

    session: SessionRow
    raws: list[dict[str, Any]]
    turns: list[Turn]
    hashes: list[str]
    chain: list[str]
    first_hash: str = field(default="")
    # Leading `raws` that came from the client and passed validation (our own
    # answers, appended after the request, never did).
    validated: int = 0


def split_system(messages: list[dict[str, Any]]) -> int:
    split = 0
    while split < len(messages) and messages[split].get("role") in SYSTEM_ROLES:
        split += 1
    return split


def shared_prefix(
    cached: SessionTurns, raws: list[dict[str, Any]], hashes0: str, proven: int = 0
) -> int:
    """How many leading turns `raws` shares with `cached` (0 if it isn't a continuation).

    Equal dicts are found at C speed; the last cached turn (our recorded answer)
    is compared by hash, since clients re-serialise it with extra null fields.
    The first `proven` turns are already known equal (`ConversationCache.proven`).
    """
    m = len(cached.raws)
    if not m or cached.first_hash != hashes0:
        return 0
    if len(raws) >= m:
        if raws[proven : m - 1] != cached.raws[proven : m - 1]:
            return 0
        last = raws[m - 1]
        if last == cached.raws[m - 1] or message_hash(last) == cached.hashes[m - 1]:
            return m
        return m - 1
    if raws[proven:] == cached.raws[proven : len(raws)]:
        return len(raws)
    return 0


class ConversationCache:
    """LRU of `SessionTurns` by session id, indexed by (tenant, first turn hash)."""

    def __init__(self, max_sessions: int = 2000) -> None:
        self._by_session: OrderedDict[str, SessionTurns] = OrderedDict()
        self._by_first: dict[str, list[str]] = {}
        self._max = max_sessions
        # The last `seen_prefix` match: (messages, entry, turns found equal).
        self._proof: tuple[list[Any], SessionTurns, int] | None = None

    def get(self, session_id: str) -> SessionTurns | None:
        entry = self._by_session.get(session_id)
        if entry is not None:
            self._by_session.move_to_end(session_id)
        return entry

    def candidates(self, tenant_id: str, first_hash: str) -> list[SessionTurns]:
        ids = self._by_first.get(f"{tenant_id}:{first_hash}", [])
        return [e for sid in reversed(ids) if (e := self._by_session.get(sid)) is not None]

    def seen_prefix(self, tenant_id: str, messages: list[Any]) -> range:
        """Indexes of the unvalidated `messages` equal to turns validated before.

        A continuation resends the turns of the session's last request; they
        passed validation then. Equal values pass it alike: the checks look at
        strings, lists, objects and nulls only, and `==` never equates those with
        other types. Leading system messages are never cached, so never skipped.
        """
        split = 0
        while (
            split < len(messages)
            and type(messages[split]) is dict
            # Not validated yet: a role may be any JSON value, even an unhashable one.
            and isinstance(role := messages[split].get("role"), str)
            and role in SYSTEM_ROLES
        ):
            split += 1
        if split == len(messages) or type(messages[split]) is not dict:
            return range(0)
        try:
            first = message_hash(messages[split])
        except (AttributeError, TypeError, ValueError, RecursionError):
            return range(0)  # malformed: validation will say where
        self._proof = None
        for cached in self.candidates(tenant_id, first):
            n = min(cached.validated, len(messages) - split)
            if n and messages[split : split + n] == cached.raws[:n]:
                self._proof = (messages, cached, n)
                return range(split, split + n)
        return range(0)

    def proven(self, messages: list[dict[str, Any]], cached: SessionTurns) -> int:
        """Leading turns of `messages` that `seen_prefix` found equal to `cached.raws`.

        Valid while `cached` is the same entry: entries are replaced, not edited,
        except for appending our answer, which leaves the compared turns as they were.
        """
        proof = self._proof
        if proof is None or proof[0] is not messages or proof[1] is not cached:
            return 0
        return proof[2]

    def put(self, entry: SessionTurns) -> None:
        sid = entry.session.id
        entry.first_hash = entry.hashes[0] if entry.hashes else ""
        self.drop(sid)
        self._by_session[sid] = entry
        key = f"{entry.session.tenant_id}:{entry.first_hash}"
        ids = self._by_first.setdefault(key, [])
        ids.append(sid)
        del ids[:-8]  # forks of one conversation: keep the latest few
        while len(self._by_session) > self._max:
            old_id, old = self._by_session.popitem(last=False)
            self._unindex(old_id, old)

    def drop(self, session_id: str) -> None:
        old = self._by_session.pop(session_id, None)
        if old is not None:
            self._unindex(session_id, old)

    def _unindex(self, session_id: str, entry: SessionTurns) -> None:
        key = f"{entry.session.tenant_id}:{entry.first_hash}"
        ids = self._by_first.get(key)
        if ids and session_id in ids:
            ids.remove(session_id)
            if not ids:
                del self._by_first[key]


def build_conversation(
    counter: TokenCounter,
    messages: list[dict[str, Any]],
    reuse: SessionTurns | None = None,
    shared: int = 0,
) -> Conversation:
    """Split, hash and count the client's messages, reusing `shared` cached turns."""
    split = split_system(messages)
    raws = messages[split:]
    if reuse is not None and shared:
        turns = reuse.turns[:shared]
        hashes = reuse.hashes[:shared]
        chain = reuse.chain[:shared]
    else:
        turns, hashes, chain, shared = [], [], [], 0
    new = raws[shared:]
    new_hashes = [message_hash(m) for m in new]
    turns = [*turns, *(make_turn(counter, m, shared + i) for i, m in enumerate(new))]
    hashes = [*hashes, *new_hashes]
    chain = [*chain, *chain_hashes(new_hashes, chain[-1] if chain else "")]
    return Conversation(messages[:split], raws, turns, hashes, chain)


def system_turns(counter: TokenCounter, system: Sequence[dict[str, Any]]) -> list[Turn]:
    """Leading system messages as turns with negative ordinals (never stored)."""
    return [make_turn(counter, m, i - len(system)) for i, m in enumerate(system)]
