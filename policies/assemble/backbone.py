"""The backbone: the user's own words, in order, as the spine of the context.

DESIGN "The backbone". The user's turns are a small share of a conversation
and carry its requirements, revisions and revocations in order; the model
reads "120 guests" early and "we're 150 now" later and knows which stands.
So the managed context is

    system -> older turns (frozen) -> recent turns (whole) -> recalled -> notes -> tail

- *Frozen* turns (before the session's compaction mark, `summary_upto`):
  each user turn verbatim (byte-identical to the client's message), each
  assistant turn reduced to its digest (`policies.assemble.digest`: the list a later
  pick refers to, values it worked out that the user took up, what it
  committed to), each tool result to its key fields, an older result about
  the same object replaced by the newer one. A user statement the user
  later changed or withdrew is annotated where it stands, in the digest
  message that follows it, so the user's message itself stays verbatim.
- *Recent* turns (from the mark on) are forwarded whole.
- Between compactions each prompt is the previous one plus the new turns:
  the frozen part only changes at a compaction (new turns frozen at its
  end) or when an annotation appears. The frozen part has a fixed room
  (`1 - live_high` of the history budget); when it outgrows it, it is made
  smaller in steps of `evict_step` (so most compactions only append), and
  what goes first is what carries nothing current: chit-chat exchanges,
  then assistant digests, then statements whose every item was superseded,
  then user turns cut to their informative sentences, then the oldest
  exchanges (found again by recall). The first exchange (who and what the
  conversation is about) goes last.

Invariants (as every assembler): system prompt and tail never cut, tool
call/result pairs kept or dropped together, within the budget unless the
mandatory part alone exceeds it, the client's messages byte-identical when
everything fits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from policies.assemble.budget import group_turns, is_forwardable, message_tokens
from policies.assemble.digest import accepts, call_keys, clip_call, digest_assistant, digest_tool
from policies.assemble.evidence import (
    dated_hits,
    evidence_room,
    frozen_cut,
    order_hits,
    rival_hits,
    room_needed,
    standing_ordinals,
)
from policies.assemble.layers import CONFLICT_MARK, Generated, nothing, one_line, plan_recall
from policies.assemble.params import RecallParams
from policies.assemble.question import read_question
from policies.assemble.summary import DatedTurn, SummaryParams, summarize_turn
from policies.extract.choices import chosen_option, list_options
from policies.language.text import term_set
from policies.memory.staleness import CHANGED_MARK, StaleFilter, changed_clause
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    AssembledContext,
    Candidate,
    MemoryItem,
    RecallHit,
    Section,
    Turn,
)

if TYPE_CHECKING:
    from policies.assemble.assembly import AssemblyInput

NOTE_PREFIX = "[memory] "
CONDENSED_PREFIX = "[condensed] "
NOTES_HEADER = "To confirm with the user:"
WITHDRAWN_NOTE = "(the user later withdrew a rule stated here)"
# An annotation says what the statement changed to in the clause that holds
# the new value, when that clause is at most this long: the rest of the later
# statement (why it changed) is paid on every request and is in the context
# anyway while its turn is shown.
NOTE_CHARS = 120
EVIDENCE_CUT = "evidence: room for turns recalled for a question about the past"
_LIVE = frozenset({"active", "pending"})
# Assistant rendering levels (see `_Unit`).
FULL_DIGEST, TOOLS_ONLY = 2, 1


class BackboneParams(BaseModel):
    """Parameters of the backbone preset (`memory.policy_params.full`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Most of the history budget the frozen part may take: the rest is room
    # for the recent turns to grow between compactions. Fixed by the budget,
    # so the frozen part's text does not depend on how far the recent turns
    # have grown since the last compaction.
    frozen_share: float = Field(default=1.0, gt=0, le=1)
    # A compaction freezes the recent turns down to this share (the last
    # exchange always stays whole).
    live_keep: float = Field(default=0.15, ge=0, lt=1)
    # The frozen part is made smaller in steps of this share of the history
    # budget: the next compactions then only append to it.
    evict_step: float = Field(default=0.1, gt=0, le=1)
    assistant_sentences: int = Field(default=2, ge=0)
    assistant_max_chars: int = Field(default=240, ge=40)
    annotate: bool = True
    # Recalled turns (of exchanges that had to go) take at most this share,
    # out of what the rest leaves.
    recall_share: float = Field(default=0.15, ge=0, le=1)
    # When the current input asks about the past (`policies.assemble.question`), the
    # recalled turns may take this share, the frozen part giving way from its
    # end for that request only (`policies.assemble.evidence`).
    evidence_share: float = Field(default=0.9, ge=0, le=1)
    notes_share: float = Field(default=0.1, ge=0, le=1)
    # The assistant message left where a reply's digest is empty ("": none;
    # litellm merges consecutive user messages for providers that require
    # alternation, and each placeholder costs ~5 tokens).
    placeholder: str = ""
    # A user turn is condensed to its informative sentences only when that
    # saves at least this share of it (else it stays verbatim, or goes whole).
    # 1.0 (the default): never. A condensed turn is the proxy's text, and the
    # engine cannot tell every value in it that changed later; a turn in the
    # user's own words can hold an old value without presenting it as current.
    # Measured on the fresh* sets, whole-or-nothing recalls as much or more.
    condense_saving: float = Field(default=1.0, ge=0, le=1)
    # More hits than the recall share usually shows: a question about the past
    # gets the evidence share, and the hits are reordered by what it asks.
    recall: RecallParams = RecallParams(max_hits=40)
    # The rolling summary written at each compaction (kept for the
    # inspector, the LLM summariser and recall's dating), and the sentences
    # a condensed user turn keeps.
    summarizer: SummaryParams = SummaryParams()


# --- units --------------------------------------------------------------------


@dataclass(slots=True)
class _Unit:
    """A user turn and the assistant / tool groups up to the next user turn."""

    user: Turn | None
    groups: list[list[Turn]]
    # Current rendering level: user 2 verbatim, 1 condensed, 0 gone;
    # assistant 2 digest + tools, 1 tools (or a placeholder), 0 gone.
    user_level: int = 2
    assistant_level: int = FULL_DIGEST
    reason: str = ""

    @property
    def first_ordinal(self) -> int:
        if self.user is not None:
            return self.user.ordinal
        return self.groups[0][0].ordinal

    def turns(self) -> list[Turn]:
        own = [self.user] if self.user is not None else []
        return own + [t for g in self.groups for t in g]


def _user_text(unit: _Unit) -> str:
    return unit.user.text if unit.user is not None else ""


def _units(turns: Sequence[Turn]) -> list[_Unit]:
    units: list[_Unit] = []
    for group in group_turns(turns):
        if not is_forwardable(group):
            continue
        if group[0].role == "user" and len(group) == 1:
            units.append(_Unit(group[0], []))
        elif units:
            units[-1].groups.append(group)
        else:
            units.append(_Unit(None, [group]))
    return units


# --- what the engine knows about each user turn --------------------------------


def _successor(item: MemoryItem, by_id: dict[str, MemoryItem]) -> MemoryItem | None:
    seen: set[str] = set()
    cur = item
    while cur.superseded_by and cur.superseded_by in by_id and cur.id not in seen:
        seen.add(cur.id)
        cur = by_id[cur.superseded_by]
    return cur if cur is not item and cur.status in _LIVE else None


@dataclass(slots=True)
class _Knowledge:
    """Per user ordinal: its live items, its annotations, whether all it said is outdated."""

    live: dict[int, int] = field(default_factory=dict)
    outdated: dict[int, int] = field(default_factory=dict)
    notes: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # (item id, note)
    # Per annotated item: the ordinal of the turn that stated its successor
    # and the successor's value (absent: it was withdrawn).
    changed_at: dict[str, tuple[int, str]] = field(default_factory=dict)


def _change_note(old: MemoryItem, new: MemoryItem, said: str | None) -> str:
    """What an annotation says `old` changed to: the clause of `new` that holds
    the new value, whole (a clipped clause can lose what it says). `new` as it
    is when that clause is itself long, or when `new` has words its turn
    (`said`) does not: a value the engine worked out ("two more than I said")
    says how, and is short already."""
    short = one_line(changed_clause(old.value, new.value))
    own = said is not None and term_set(new.value) <= term_set(said)
    if not own or len(short) > NOTE_CHARS:
        short = _clip(one_line(new.value), 200)
    return CHANGED_MARK.format(short)


def _knowledge(items: Sequence[MemoryItem], annotate: bool, texts: Mapping[int, str]) -> _Knowledge:
    """What the engine knows of each user turn (`texts`: each turn's text, by ordinal)."""
    by_id = {it.id: it for it in items}
    k = _Knowledge()
    for it in items:
        if it.source != "user":
            continue
        o = it.source_ordinal
        if it.status in _LIVE:
            k.live[o] = k.live.get(o, 0) + 1
            continue
        if it.status not in ("superseded", "revoked"):
            continue
        k.outdated[o] = k.outdated.get(o, 0) + 1
        if not annotate:
            continue
        if it.status == "revoked":
            note = WITHDRAWN_NOTE
        else:
            succ = _successor(it, by_id)
            if succ is None or succ.source_ordinal == o:
                # Gone, or corrected in the same message: its words say what stands.
                continue
            note = _change_note(it, succ, texts.get(succ.source_ordinal))
            k.changed_at[it.id] = (succ.source_ordinal, succ.value)
        notes = k.notes.setdefault(o, [])
        if all(n != note for _, n in notes):
            notes.append((it.id, note))
    return k


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=8192)
def _informative(text: str, role: str, params: SummaryParams) -> tuple[str, ...]:
    """The sentences the rule summariser keeps of a turn (none: small talk)."""
    turn = Turn(0, role, text, {}, 0)
    line = summarize_turn(DatedTurn(turn, ""), params)
    return line.sentences if line is not None else ()


# --- rendering ---------------------------------------------------------------------


@dataclass(slots=True)
class _Rendered:
    messages: list[dict[str, Any]]
    tokens: int


class _Renderer:
    """Renders frozen units at their levels; memoises per (unit, levels)."""

    def __init__(
        self,
        units: Sequence[_Unit],
        next_user: Sequence[str],
        knowledge: _Knowledge,
        stale: StaleFilter | None,
        replaced: frozenset[str],
        p: BackboneParams,
        count: Any,
    ) -> None:
        self.units, self.next_user, self.k = units, next_user, knowledge
        self.stale, self.replaced, self.p, self.count = stale, replaced, p, count
        self._memo: dict[tuple[int, int, int, frozenset[str] | None], _Rendered] = {}
        # Per unit index: the annotations it may show (absent: all of them).
        self.shown_notes: dict[int, frozenset[str]] = {}

    def render(self, i: int) -> _Rendered:
        u = self.units[i]
        key = (i, u.user_level, u.assistant_level, self.shown_notes.get(i))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._render(i, u)
        return hit

    def notes(self, i: int, ordinal: int) -> list[tuple[str, str]]:
        """The annotations unit `i` (its user turn at `ordinal`) shows."""
        notes = self.k.notes.get(ordinal, [])
        allowed = self.shown_notes.get(i)
        return notes if allowed is None else [n for n in notes if n[0] in allowed]

    def _tokens(self, messages: list[dict[str, Any]], turns: dict[int, Turn]) -> int:
        total = 0
        for m in messages:
            turn = turns.get(id(m))
            total += turn.tokens if turn is not None else message_tokens(m, self.count)
        return total

    def _render(self, i: int, u: _Unit) -> _Rendered:
        out: list[dict[str, Any]] = []
        verbatim: dict[int, Turn] = {}
        if u.user is not None and u.user_level == 2:
            out.append(u.user.raw)
            verbatim[id(u.user.raw)] = u.user
        elif u.user is not None and u.user_level == 1:
            condensed = self._condensed(u.user)
            if condensed:
                out.append({"role": "user", "content": CONDENSED_PREFIX + condensed})
        if u.assistant_level > 0:
            out += self._assistant(i, u, u.user is not None and u.user_level == 2)
        elif u.user is not None and u.user_level == 2 and self.notes(i, u.user.ordinal):
            # The reply went for room; what changed since still stands beside the words.
            notes = [NOTE_PREFIX + n for _, n in self.notes(i, u.user.ordinal)]
            out.append({"role": "assistant", "content": "\n".join(notes)})
        elif out and u.groups and self.p.placeholder:
            out.append({"role": "assistant", "content": self.p.placeholder})
        return _Rendered(out, self._tokens(out, verbatim))

    def condensable(self, turn: Turn) -> bool:
        """Whether its informative sentences are much shorter than the turn."""
        kept = sum(len(x) for x in _informative(turn.text, "user", self.p.summarizer))
        return kept <= len(turn.text) * (1 - self.p.condense_saving)

    def _condensed(self, turn: Turn) -> str:
        sentences = list(_informative(turn.text, "user", self.p.summarizer))
        if self.stale:
            sentences = self.stale.clean(sentences, set(), turn.ordinal, "user")
        return " ".join(sentences)

    def _assistant(self, i: int, u: _Unit, annotate: bool) -> list[dict[str, Any]]:
        notes = []
        if annotate and u.user is not None:
            notes = [NOTE_PREFIX + n for _, n in self.notes(i, u.user.ordinal)]
        out: list[dict[str, Any]] = []
        for group in u.groups:
            head = group[0]
            if head.role == "assistant" and head.tool_call_ids:
                out += self._tool_group(group, u.assistant_level)
                continue
            if u.assistant_level < FULL_DIGEST or head.role != "assistant":
                continue
            digest = digest_assistant(
                head.text,
                self.next_user[i],
                self.p.assistant_sentences,
                self.p.assistant_max_chars,
            )
            if digest and self.stale:
                digest = "\n".join(line for line in digest.splitlines() if not self._outdated(line))
            if digest:
                out.append({"role": "assistant", "content": digest})
        if notes:
            text = "\n".join(notes)
            if out and out[-1]["role"] == "assistant" and isinstance(out[-1].get("content"), str):
                if not out[-1].get("tool_calls"):
                    out[-1] = {**out[-1], "content": f"{text}\n{out[-1]['content']}"}
                else:
                    out.append({"role": "assistant", "content": text})
            else:
                out.append({"role": "assistant", "content": text})
        if not out and u.groups and self.p.placeholder:
            out.append({"role": "assistant", "content": self.p.placeholder})
        return out

    def _outdated(self, line: str) -> bool:
        """A line of the assistant's that repeats a value the user changed since:
        the digest leaves it out (the user's own words say what stands)."""
        assert self.stale is not None
        return self.stale.echoes(line) or bool(self.stale.matches(line))

    def _tool_group(self, group: list[Turn], level: int) -> list[dict[str, Any]]:
        head = group[0]
        results = group[1:]
        replaced = [t for t in results if (t.tool_call_id or "") in self.replaced]
        if level < 2 and len(replaced) == len(results):
            return []  # every result has a newer one: the pair goes whole
        # A shortened call is the proxy's text: one whose arguments still name
        # a value the user changed since would read as current, so such a call
        # stays as the client sent it (the record of what was done).
        calls = head.raw.get("tool_calls") or []
        verbatim = bool(self.stale) and any(self._outdated(_call_text(c)) for c in calls)
        call = dict(head.raw)
        if calls and not verbatim:
            call["tool_calls"] = [clip_call(c) for c in calls]
        content = call.get("content")
        if not verbatim and isinstance(content, str) and len(content) > self.p.assistant_max_chars:
            call["content"] = (
                digest_assistant(
                    content, "", self.p.assistant_sentences, self.p.assistant_max_chars
                )
                or None
            )
        out: list[dict[str, Any]] = [call]
        for t in results:
            if t in replaced:
                text = "(replaced by a later result)"
            else:
                text = digest_tool(t.text)
                if self.stale and self._outdated(text):
                    text = "(superseded by a later result)"
            msg: dict[str, Any] = {"role": "tool", "tool_call_id": t.tool_call_id, "content": text}
            if "name" in t.raw:
                msg["name"] = t.raw["name"]
            out.append(msg)
        return out


def _call_text(call: Any) -> str:
    fn = call.get("function") if isinstance(call, dict) else None
    return str(fn.get("arguments", "")) if isinstance(fn, dict) else ""


def _replaced_calls(turns: Sequence[Turn]) -> frozenset[str]:
    """Ids of tool calls asked again later about the same object: only the
    newest result of each stands."""
    last: dict[str, str] = {}
    ids: list[tuple[str, str]] = []
    for t in turns:
        if t.role == "assistant" and t.tool_call_ids:
            for call_id, key in call_keys(t.raw).items():
                last[key] = call_id
                ids.append((call_id, key))
    return frozenset(call_id for call_id, key in ids if last[key] != call_id)


# --- overflow ----------------------------------------------------------------------


def _referenced(text: str, next_user: str) -> bool:
    """Whether the next user turn builds on this assistant reply (a pick from its
    list, or taking up what it worked out)."""
    if not next_user:
        return False
    options = list_options(text)
    return (bool(options) and chosen_option(next_user, options) is not None) or accepts(next_user)


Move = tuple[int, int, int, str]


def _chatter(units: Sequence[_Unit], r: _Renderer, k: _Knowledge) -> set[int]:
    """Exchanges (not the first) whose user turn carries nothing current: no
    item of the engine's and no informative sentence."""
    out: set[int] = set()
    for i, u in enumerate(units):
        if i == 0 or u.user is None:
            continue
        o = u.user.ordinal
        if k.live.get(o) or k.outdated.get(o):
            continue
        if not _informative(u.user.text, "user", r.p.summarizer):
            out.add(i)
    return out


def _phases(units: Sequence[_Unit], r: _Renderer, k: _Knowledge) -> tuple[list[Move], list[Move]]:
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
            at_once.append((i, 2, TOOLS_ONLY, "overflow: assistant digest no later turn builds on"))
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
    # subject) last.
    def holds_live(i: int) -> bool:
        user = units[i].user
        return user is not None and bool(k.live.get(user.ordinal))

    rest = [i for i in range(1, n) if i not in chatter]
    for i in [*(i for i in rest if not holds_live(i)), *(i for i in rest if holds_live(i)), 0]:
        stepwise.append((i, 0, 0, "overflow: oldest exchanges left to recall"))
    return at_once, stepwise


def _apply(units: list[_Unit], r: _Renderer, move: Move) -> int:
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


def _shrink(units: list[_Unit], r: _Renderer, k: _Knowledge, free: int) -> None:
    """Free at least `free` tokens of the frozen part (see `_phases`)."""
    if free <= 0:
        return
    at_once, stepwise = _phases(units, r, k)
    for move in at_once:
        free -= _apply(units, r, move)
    for move in stepwise:
        if free <= 0:
            return
        free -= _apply(units, r, move)


# --- the assembler -------------------------------------------------------------------


def _tokens(turns: Sequence[Turn]) -> int:
    return sum(t.tokens for t in turns)


def _live_split(units: Sequence[_Unit], target: int) -> int:
    """Index of the first unit of the longest suffix within `target` tokens
    (`len(units)`: not even the last exchange fits, everything is frozen)."""
    total, start = 0, len(units)
    for i in range(len(units) - 1, -1, -1):
        size = sum(t.tokens for t in units[i].turns())
        if total + size > target:
            break
        total += size
        start = i
    return start


def _notes(notes: Sequence[str], cap: int, count: Any) -> Generated:
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


def _frozen_tokens(r: _Renderer, n: int) -> int:
    return sum(r.render(i).tokens for i in range(n))


def _fit(
    units: list[_Unit], n: int, cap: int, r: _Renderer, k: _Knowledge, step: int, start: Any
) -> int:
    for u in units[:n]:
        u.user_level, u.assistant_level, u.reason = start(u)
    over = _frozen_tokens(r, n) - cap
    if over > 0:
        _shrink(units[:n], r, k, math.ceil(over / step) * step)
    return _frozen_tokens(r, n)


def _fit_frozen(
    units: list[_Unit],
    n: int,
    cap: int,
    r: _Renderer,
    k: _Knowledge,
    step: int,
    sticky: Any,
) -> None:
    """Levels for the first `n` units within `cap`: from the previous request's
    (the prompt then only changes where something new gives way), unless laying
    the frozen part out afresh would show more than a step more of it (a rebase)."""
    kept = _fit(
        units, n, cap, r, k, step, lambda u: sticky.get(u.first_ordinal, (2, FULL_DIGEST, ""))
    )
    if not sticky or kept > cap - 2 * step:
        return
    levels = [(u.user_level, u.assistant_level, u.reason) for u in units[:n]]
    if _fit(units, n, cap, r, k, step, lambda u: (2, FULL_DIGEST, "")) < kept + step:
        for u, (a, b, why) in zip(units[:n], levels, strict=True):
            u.user_level, u.assistant_level, u.reason = a, b, why


def _turns_of(units: Sequence[_Unit]) -> list[Turn]:
    return [t for u in units for t in u.turns()]


def _signature(rendered: _Rendered) -> int:
    return hash(json.dumps(rendered.messages, sort_keys=True, ensure_ascii=False))


def _shown(r: _Renderer, i: int) -> tuple[int, tuple[str, ...]]:
    """What unit `i` showed: its rendering's signature and the annotations in it."""
    u = r.units[i]
    ids = tuple(n[0] for n in r.notes(i, u.user.ordinal)) if u.user is not None else ()
    return _signature(r.render(i)), ids


def _said_in(change: tuple[int, str] | None, texts: Mapping[int, str]) -> bool:
    """Whether the new value of a change is in the context in the user's words."""
    if change is None or change[0] not in texts:
        return False
    return " ".join(change[1].split()) in texts[change[0]]


def _defer_annotations(
    units: Sequence[_Unit],
    n: int,
    r: _Renderer,
    before: Mapping[int, tuple[int, tuple[str, ...]]],
    in_context: Mapping[int, str],
) -> None:
    """Hold back new annotations of the frozen part up to the first exchange
    that changes anyway (of the first `n`), as the previous request showed them.

    An annotation written where its statement stands rewrites the prompt from
    there: everything after it is paid again, uncached. Until the prompt is
    rewritten from that point for another reason (a compaction giving way
    there, a digest losing a line, the exchange first frozen), the statement
    stays as it was shown, as long as the user's words that changed it are in
    the context, later, and say the new value as it is (`in_context`: the
    text of each user turn shown verbatim, by ordinal). A withdrawal, a
    change whose words are gone and a value worked out from them ("two more
    than I said") are shown at once. From
    the first exchange that changes on, every annotation is shown
    (`_Renderer.notes`).
    """
    for i in range(n):
        shown = before.get(units[i].first_ordinal)
        if shown is None:
            return
        user = units[i].user
        notes = r.k.notes.get(user.ordinal, []) if user is not None else []
        urgent = {
            item_id for item_id, _ in notes if not _said_in(r.k.changed_at.get(item_id), in_context)
        }
        r.shown_notes[i] = frozenset(shown[1]) | urgent
        if _signature(r.render(i)) != shown[0]:
            del r.shown_notes[i]
            return


def assemble_backbone(inp: AssemblyInput, p: BackboneParams) -> AssembledContext:
    """The backbone context for one request (`inp`: `policies.assemble.assembly.AssemblyInput`)."""
    sys_t, tail_t = _tokens(inp.system), _tokens(inp.tail)
    room = inp.budget - sys_t - tail_t
    stale = StaleFilter(inp.items) if inp.items else None
    k = _knowledge(inp.items, p.annotate, {t.ordinal: t.text for t in [*inp.history, *inp.tail]})
    notes = _notes(inp.conflict_notes, int(room * p.notes_share), inp.count)
    hist_room = room - notes.tokens
    upto = inp.summary_upto
    all_units = _units(inp.history)
    frozen_n = sum(1 for u in all_units if u.first_ordinal < upto)
    live_tokens = sum(t.tokens for u in all_units[frozen_n:] for t in u.turns())
    next_user = [
        _user_text(all_units[i + 1]) if i + 1 < len(all_units) else ""
        for i in range(len(all_units))
    ]
    r = _Renderer(all_units, next_user, k, stale, _replaced_calls(inp.history), p, inp.count)
    f_cap = int(hist_room * p.frozen_share)
    step = max(1, int(hist_room * p.evict_step))

    sticky = inp.backbone_levels

    def frozen_tokens(n: int) -> int:
        return _frozen_tokens(r, n)

    def fit_frozen(n: int, cap: int) -> None:
        _fit_frozen(all_units, n, cap, r, k, step, sticky)

    compact: int | None = None
    fit_frozen(frozen_n, f_cap)
    if frozen_tokens(frozen_n) + live_tokens > hist_room:
        # A compaction: the recent turns are frozen down to `live_keep`, or
        # all of them when even the last exchange does not fit beside the rest.
        split = frozen_n + _live_split(all_units[frozen_n:], int(hist_room * p.live_keep))
        fit_frozen(split, f_cap)
        rest = sum(t.tokens for u in all_units[split:] for t in u.turns())
        if frozen_tokens(split) + rest > hist_room:
            split = len(all_units)
            fit_frozen(split, f_cap)
        if split > frozen_n:
            compact = (
                all_units[split].first_ordinal
                if split < len(all_units)
                else (inp.tail[0].ordinal if inp.tail else inp.current_ordinal + 1)
            )
        frozen_n = split
        live_tokens = sum(t.tokens for u in all_units[frozen_n:] for t in u.turns())

    frozen_msgs: list[dict[str, Any]] = []
    candidates: list[Candidate] = [
        *(
            Candidate(
                "turn",
                str(t.ordinal),
                t.tokens,
                0.0,
                "mandatory",
                "mandatory: system prompt",
                "system",
            )
            for t in inp.system
        ),
        *(
            Candidate(
                "turn",
                str(t.ordinal),
                t.tokens,
                0.0,
                "mandatory",
                "mandatory: current input",
                "tail",
            )
            for t in inp.tail
        ),
    ]
    # The evidence a question about the past needs: recall's room, and how
    # much of the frozen part gives way to it for this request (`policies.assemble.evidence`).
    question = read_question("\n".join(t.text for t in inp.tail if t.role == "user"))
    query = term_set("\n".join(t.text for t in inp.tail if t.role == "user"))
    by_ordinal = {t.ordinal: t for t in inp.history}
    recall_cap = evidence_room(question, hist_room, p.recall_share, p.evidence_share)

    def recall_within(hits: Sequence[RecallHit], cap: int, shown: Collection[int]) -> Generated:
        return plan_recall(
            order_hits(dated_hits(hits, question), question, query),
            query,
            cap,
            p.recall.snippet_chars,
            inp.count,
            stale,
            lambda o: by_ordinal.get(o) if o in shown else None,
        )

    frozen_ordinals = {t.ordinal for u in all_units[:frozen_n] for t in u.turns()}
    # A user turn the backbone shows in the user's own words needs no room as
    # evidence, unless the question wants the day it was said.
    dated_kinds = bool(question.kinds & {"temporal", "contradiction"})
    verbatim = {
        u.user.ordinal
        for u in all_units[:frozen_n]
        if u.user is not None and u.user_level == 2 and not dated_kinds
    }
    free = room_needed(
        question,
        recall_cap,
        hist_room - frozen_tokens(frozen_n) - live_tokens,
        lambda cap: (
            recall_within(
                [
                    h
                    for h in inp.recalled
                    if h.ordinal in frozen_ordinals and h.ordinal not in verbatim
                ],
                cap,
                frozen_ordinals,
            ).tokens
        ),
    )
    rules = standing_ordinals(inp.items)
    cut = frozen_cut(
        [r.render(i).tokens if free else 0 for i in range(frozen_n)],
        free,
        {i for i in range(frozen_n) if any(t.ordinal in rules for t in all_units[i].turns())},
    )
    shown_users = [
        u.user
        for i, u in enumerate(all_units[:frozen_n])
        if u.user is not None and u.user_level == 2 and i not in cut
    ] + [t for t in [*_turns_of(all_units[frozen_n:]), *inp.tail] if t.role == "user"]
    verbatim_now = {t.ordinal: " ".join(t.text.split()) for t in shown_users}
    _defer_annotations(all_units, min([frozen_n, *cut]), r, inp.backbone_shown, verbatim_now)
    gone: set[int] = set()
    for i in range(frozen_n):
        u = all_units[i]
        if i in cut:
            gone.update(t.ordinal for t in u.turns())
            candidates += [
                Candidate(
                    "turn", str(t.ordinal), t.tokens, 0.0, "dropped", EVIDENCE_CUT, "backbone"
                )
                for t in u.turns()
            ]
            continue
        rendered = r.render(i)
        frozen_msgs += rendered.messages
        candidates += _unit_candidates(u, rendered.tokens)
        # Recall brings back what had to go for room, not an exchange whose
        # user turn states a value changed later: its words (and the reply
        # echoing them) would come back undated as the proxy's text.
        if u.user_level < 2 and not (u.user is not None and k.outdated.get(u.user.ordinal)):
            gone.update(t.ordinal for t in u.turns())
        if u.user is not None and u.user_level == 2 and u.assistant_level > 0:
            for item_id, note in r.notes(i, u.user.ordinal):
                candidates.append(
                    Candidate("item", item_id, 0, 0.0, "kept", f"annotation: {note}", "backbone")
                )
    frozen_t = sum(r.render(i).tokens for i in range(frozen_n) if i not in cut)
    live_turns = [t for u in all_units[frozen_n:] for t in u.turns()]
    candidates += [
        Candidate("turn", str(t.ordinal), t.tokens, 0.0, "kept", "recent: whole", "recent")
        for t in live_turns
    ]
    left = hist_room - frozen_t - live_tokens
    recalled = nothing("recalled")
    # A question about when (or about a change of mind) wants the turn's date:
    # a turn still shown without it is recalled too, dated.
    dated = frozen_ordinals if question.kinds & {"temporal", "contradiction"} else set()
    top = max((h.score for h in inp.recalled), default=1.0)
    rivals = rival_hits(question, inp.items, inp.history, query, top)
    found = {h.ordinal for h in rivals}
    hits = [
        h
        for h in [*rivals, *(h for h in inp.recalled if h.ordinal not in found)]
        if h.ordinal in gone or h.ordinal in dated
    ]
    if hits and left > 0:
        recalled = recall_within(hits, min(left, recall_cap), gone)
        candidates += recalled.candidates
    candidates += notes.candidates
    candidates = _merge_runs(candidates)
    sections = [
        Section("system", sys_t, len(inp.system)),
        Section("backbone", frozen_t, len(frozen_msgs)),
        Section("recent", live_tokens, len(live_turns)),
        *recalled.parts,
        *notes.parts,
        Section("tail", tail_t, len(inp.tail)),
    ]
    messages = [
        *(t.raw for t in inp.system),
        *frozen_msgs,
        *(t.raw for t in live_turns),
        *recalled.messages(),
        *notes.messages(),
        *(t.raw for t in inp.tail),
    ]
    ctx = AssembledContext(
        messages=messages,
        tokens=sum(s.tokens for s in sections),
        budget=inp.budget,
        sections=sections,
        candidates=candidates,
    )
    ctx.compact_upto = compact
    ctx.backbone_levels = {
        u.first_ordinal: (u.user_level, u.assistant_level, u.reason)
        for u in all_units[:frozen_n]
        if (u.user_level, u.assistant_level) != (2, FULL_DIGEST)
    }
    ctx.backbone_shown = {
        u.first_ordinal: _shown(r, i) for i, u in enumerate(all_units[:frozen_n]) if i not in cut
    }
    ctx.stable_messages = len(inp.system) + len(frozen_msgs) + len(live_turns)
    return ctx


def _merge_runs(candidates: list[Candidate]) -> list[Candidate]:
    """Adjacent turn candidates with one decision and reason as one run ("first-last"):
    long histories are mostly runs, and the record stays independent of length."""
    out: list[Candidate] = []
    run: list[Candidate] = []

    def flush() -> None:
        if len(run) > 2:
            first, last = run[0].ref.split("-")[0], run[-1].ref.split("-")[-1]
            c = run[0]
            out.append(
                Candidate(
                    "turns",
                    f"{first}-{last}",
                    sum(x.tokens for x in run),
                    0.0,
                    c.decision,
                    c.reason,
                    c.section,
                )
            )
        else:
            out.extend(run)
        run.clear()

    for c in candidates:
        same = (
            run
            and c.kind in ("turn", "turns")
            and (c.decision, c.reason, c.section)
            == (run[0].decision, run[0].reason, run[0].section)
        )
        if not same:
            flush()
        if c.kind in ("turn", "turns") and c.decision != "mandatory":
            run.append(c)
        else:
            out.append(c)
    flush()
    return out


def _unit_candidates(u: _Unit, tokens: int) -> list[Candidate]:
    out: list[Candidate] = []
    if u.user is not None:
        decision, reason = {
            2: ("kept", "backbone: the user's own words"),
            1: ("compressed", u.reason),
            0: ("dropped", u.reason),
        }[u.user_level]
        out.append(
            Candidate("turn", str(u.user.ordinal), u.user.tokens, 0.0, decision, reason, "backbone")  # type: ignore[arg-type]
        )
    rest = [t for g in u.groups for t in g]
    if rest:
        ref = f"{rest[0].ordinal}-{rest[-1].ordinal}" if len(rest) > 1 else str(rest[0].ordinal)
        decision, reason = {
            2: ("compressed", "backbone: assistant digest, tool key fields"),
            1: ("compressed", u.reason or "backbone: tool key fields"),
            0: ("dropped", u.reason),
        }[u.assistant_level]
        out.append(
            Candidate("turns", ref, sum(t.tokens for t in rest), 0.0, decision, reason, "backbone")  # type: ignore[arg-type]
        )
    return out


# --- the baseline -----------------------------------------------------------------


def assemble_user_turns(inp: AssemblyInput) -> AssembledContext:
    """The simplest baseline: the system prompt and every user turn verbatim.

    No assistant turns, no extraction. The budget stays the ceiling: when
    the user's turns outgrow it, the oldest go first.
    """
    sys_t, tail_t = _tokens(inp.system), _tokens(inp.tail)
    room = inp.budget - sys_t - tail_t
    users = [t for t in inp.history if t.role == "user"]
    kept: list[Turn] = []
    total = 0
    for t in reversed(users):
        if total + t.tokens > room:
            break
        kept.append(t)
        total += t.tokens
    kept.reverse()
    keep = {t.ordinal for t in kept}
    candidates = [
        Candidate(
            "turn",
            str(t.ordinal),
            t.tokens,
            0.0,
            "kept" if t.ordinal in keep else "dropped",
            "user turn"
            if t.ordinal in keep
            else ("over budget" if t.role == "user" else "not a user turn"),
            "user_turns",
        )
        for t in inp.history
    ]
    return AssembledContext(
        messages=[*(t.raw for t in inp.system), *(t.raw for t in kept), *(t.raw for t in inp.tail)],
        tokens=sys_t + total + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("user_turns", total, len(kept)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=sys_t + tail_t > inp.budget,
    )
