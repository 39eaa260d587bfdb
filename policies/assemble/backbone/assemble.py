"""The backbone assembler: one request's context, in named steps.

Lay the history out (frozen units at their levels, a compaction when the
recent turns no longer fit beside them), make room for the evidence a
question about the past needs, hold back new annotations, render the frozen
part, recall what had to go, and put the sections together.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.backbone.annotations import defer_annotations, shown
from policies.assemble.backbone.candidates import (
    mandatory_candidates,
    merge_runs,
    unit_candidates,
)
from policies.assemble.backbone.knowledge import Knowledge, read_knowledge
from policies.assemble.backbone.notes import conflict_notes
from policies.assemble.backbone.overflow import fit_frozen, frozen_tokens
from policies.assemble.backbone.params import EVIDENCE_CUT, FULL_DIGEST, BackboneParams
from policies.assemble.backbone.render import Renderer
from policies.assemble.backbone.restated import Restated
from policies.assemble.backbone.tools import replaced_calls
from policies.assemble.backbone.units import (
    Unit,
    live_split,
    split_units,
    total_tokens,
    turns_of,
    user_text,
)
from policies.assemble.evidence import (
    dated_hits,
    evidence_room,
    frozen_cut,
    order_hits,
    rival_hits,
    room_needed,
    standing_ordinals,
)
from policies.assemble.generated import Generated, nothing
from policies.assemble.question import Question, read_question
from policies.assemble.quoted_turns import plan_recall
from policies.language.questions import recap_request
from policies.language.text import term_set
from policies.memory.staleness import StaleFilter
from policies.types import AssembledContext, Candidate, RecallHit, Section, Turn

# A question of these kinds wants the day a turn was said.
_DATED_KINDS = frozenset({"temporal", "contradiction"})


@dataclass(slots=True)
class _Layout:
    """The history as units: the first `n` frozen, the rest recent (whole)."""

    units: list[Unit]
    r: Renderer
    k: Knowledge
    hist_room: int
    n: int
    live_tokens: int
    # Where this request compacted (the new `summary_upto`); None: no compaction.
    compact: int | None = None

    def frozen_ordinals(self) -> set[int]:
        return {t.ordinal for u in self.units[: self.n] for t in u.turns()}


@dataclass(slots=True)
class _Recall:
    """What the current input asks, and recall's room for it (`policies.assemble.evidence`)."""

    question: Question
    query: frozenset[str]
    by_ordinal: dict[int, Turn]
    cap: int
    p: BackboneParams
    stale: StaleFilter | None
    count: Any

    def within(self, hits: Sequence[RecallHit], cap: int, shown: Collection[int]) -> Generated:
        return plan_recall(
            order_hits(dated_hits(hits, self.question), self.question, self.query),
            self.query,
            cap,
            self.p.recall.snippet_chars,
            self.count,
            self.stale,
            lambda o: self.by_ordinal.get(o) if o in shown else None,
        )


def assemble_backbone(inp: AssemblyInput, p: BackboneParams) -> AssembledContext:
    """The backbone context for one request."""
    sys_t, tail_t = total_tokens(inp.system), total_tokens(inp.tail)
    room = inp.budget - sys_t - tail_t
    stale = StaleFilter(inp.items) if inp.items else None
    texts = {t.ordinal: t.text for t in [*inp.history, *inp.tail]}
    restated = Restated.of(texts.items())
    k = read_knowledge(inp.items, p.annotate, texts, restated)
    notes = conflict_notes(inp.conflict_notes, int(room * p.notes_share), inp.count)
    lay = _lay_out(inp, p, k, stale, restated, room - notes.tokens)
    _compact(inp, p, lay)
    rec = _read_input(inp, p, stale, lay.hist_room)
    cut = _evidence_cut(inp, lay, rec)
    _hold_back_annotations(inp, lay, cut)
    frozen_msgs, gone, frozen_candidates = _frozen_part(lay, cut, rec.question)
    frozen_t = sum(lay.r.render(i).tokens for i in range(lay.n) if i not in cut)
    live_turns = [t for u in lay.units[lay.n :] for t in u.turns()]
    recalled = _recalled(inp, lay, rec, gone, lay.hist_room - frozen_t - lay.live_tokens)
    candidates = [
        *mandatory_candidates(inp.system, inp.tail),
        *frozen_candidates,
        *(
            Candidate("turn", str(t.ordinal), t.tokens, 0.0, "kept", "recent: whole", "recent")
            for t in live_turns
        ),
        *recalled.candidates,
        *notes.candidates,
    ]
    sections = [
        Section("system", sys_t, len(inp.system)),
        Section("backbone", frozen_t, len(frozen_msgs)),
        Section("recent", lay.live_tokens, len(live_turns)),
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
        candidates=merge_runs(candidates),
    )
    _carry_over(ctx, lay, cut)
    ctx.stable_messages = len(inp.system) + len(frozen_msgs) + len(live_turns)
    return ctx


def _live_tokens(units: Sequence[Unit], n: int) -> int:
    return sum(t.tokens for u in units[n:] for t in u.turns())


def _lay_out(
    inp: AssemblyInput,
    p: BackboneParams,
    k: Knowledge,
    stale: StaleFilter | None,
    restated: Restated,
    hist_room: int,
) -> _Layout:
    """The units, frozen up to the session's compaction mark (`summary_upto`)."""
    units = split_units(inp.history)
    frozen_n = sum(1 for u in units if u.first_ordinal < inp.summary_upto)
    # The newest exchange is followed by the current input when that opens with
    # the user's turn: the same text its next unit will hold from the next
    # request on, so what depends on it renders the same bytes then.
    after_last = inp.tail[0].text if inp.tail and inp.tail[0].role == "user" else ""
    next_user = [
        user_text(units[i + 1]) if i + 1 < len(units) else after_last for i in range(len(units))
    ]
    r = Renderer(units, next_user, k, stale, restated, replaced_calls(inp.history), p, inp.count)
    return _Layout(units, r, k, hist_room, frozen_n, _live_tokens(units, frozen_n))


def _compact(inp: AssemblyInput, p: BackboneParams, lay: _Layout) -> None:
    """Fit the frozen part to its room; compact when the recent turns do not fit beside it."""
    f_cap = int(lay.hist_room * p.frozen_share)
    step = max(1, int(lay.hist_room * p.evict_step))

    def fit(n: int) -> None:
        fit_frozen(lay.units, n, f_cap, lay.r, lay.k, step, inp.backbone_levels)

    fit(lay.n)
    if frozen_tokens(lay.r, lay.n) + lay.live_tokens <= lay.hist_room:
        return
    # A compaction: the recent turns are frozen down to `live_keep`, or
    # all of them when even the last exchange does not fit beside the rest.
    split = lay.n + live_split(lay.units[lay.n :], int(lay.hist_room * p.live_keep))
    fit(split)
    if frozen_tokens(lay.r, split) + _live_tokens(lay.units, split) > lay.hist_room:
        split = len(lay.units)
        fit(split)
    if split > lay.n:
        lay.compact = (
            lay.units[split].first_ordinal
            if split < len(lay.units)
            else (inp.tail[0].ordinal if inp.tail else inp.current_ordinal + 1)
        )
    lay.n = split
    lay.live_tokens = _live_tokens(lay.units, split)


# The rule name a question gets when it points back by naming a speaker.
NAMES_SPEAKER = "names_speaker"


def _read_input(
    inp: AssemblyInput, p: BackboneParams, stale: StaleFilter | None, hist_room: int
) -> _Recall:
    """The evidence a question about the past needs: what it asks and recall's room."""
    asked = "\n".join(t.text for t in inp.tail if t.role == "user")
    question = read_question(asked)
    if question.seeks_past and not question.refers_back and inp.names_speaker:
        # "What does Dana do on weekends?": what a speaker of the conversation
        # does or is, asked in the present, is still what they said before.
        question = replace(question, points_back_by=NAMES_SPEAKER)
    return _Recall(
        question,
        term_set(asked),
        {t.ordinal: t for t in inp.history},
        evidence_room(question, hist_room, _recall_share(p, asked), p.evidence_share),
        p,
        stale,
        inp.count,
    )


def _recall_share(p: BackboneParams, asked: str) -> float:
    """Recall's share for an input that does not ask about the past: a request to
    read back what was agreed gets it (what had to go may be part of the answer);
    anything else (a statement, a work request, chat) gets none unless
    `recall_every_input`. Turns chosen by each input's own words change from one
    request to the next, and a part that changes is billed again in full under
    prompt caching, while what such an input needs is in the backbone."""
    return p.recall_share if p.recall_every_input or recap_request(asked) else 0.0


def _evidence_cut(inp: AssemblyInput, lay: _Layout, rec: _Recall) -> set[int]:
    """The frozen units that give way, for this request only, to the evidence
    (`policies.assemble.evidence`)."""
    frozen_ordinals = lay.frozen_ordinals()
    # A user turn the backbone shows in the user's own words needs no room as
    # evidence, unless the question wants the day it was said.
    dated_kinds = bool(rec.question.kinds & _DATED_KINDS)
    verbatim = {
        u.user.ordinal
        for u in lay.units[: lay.n]
        if u.user is not None and u.user_level == 2 and not dated_kinds
    }
    wanted = [h for h in inp.recalled if h.ordinal in frozen_ordinals and h.ordinal not in verbatim]
    free = room_needed(
        rec.question,
        rec.cap,
        lay.hist_room - frozen_tokens(lay.r, lay.n) - lay.live_tokens,
        lambda cap: rec.within(wanted, cap, frozen_ordinals).tokens,
    )
    rules = standing_ordinals(inp.items)
    return frozen_cut(
        [lay.r.render(i).tokens if free else 0 for i in range(lay.n)],
        free,
        {i for i in range(lay.n) if any(t.ordinal in rules for t in lay.units[i].turns())},
    )


def _hold_back_annotations(inp: AssemblyInput, lay: _Layout, cut: set[int]) -> None:
    """Show new annotations only where the prompt changes anyway (`defer_annotations`)."""
    shown_users = [
        u.user
        for i, u in enumerate(lay.units[: lay.n])
        if u.user is not None and u.user_level == 2 and i not in cut
    ] + [t for t in [*turns_of(lay.units[lay.n :]), *inp.tail] if t.role == "user"]
    verbatim_now = {t.ordinal: " ".join(t.text.split()) for t in shown_users}
    defer_annotations(lay.units, min([lay.n, *cut]), lay.r, inp.backbone_shown, verbatim_now)
    # Lines held back are room the fit did not count: they go when it is short.
    kept = sum(lay.r.render(i).tokens for i in range(lay.n) if i not in cut)
    if lay.r.held and kept + lay.live_tokens > lay.hist_room:
        lay.r.held.clear()


def _frozen_part(
    lay: _Layout, cut: set[int], question: Question
) -> tuple[list[dict[str, Any]], set[int], list[Candidate]]:
    """The frozen part's messages, the ordinals recall may bring back, the candidates
    (a turn cut for the evidence names the rule by which the question points back)."""
    cut_reason = f"{EVIDENCE_CUT} ({question.points_back_by})"
    messages: list[dict[str, Any]] = []
    candidates: list[Candidate] = []
    gone: set[int] = set()
    for i in range(lay.n):
        u = lay.units[i]
        if i in cut:
            gone.update(t.ordinal for t in u.turns())
            candidates += [
                Candidate("turn", str(t.ordinal), t.tokens, 0.0, "dropped", cut_reason, "backbone")
                for t in u.turns()
            ]
            continue
        rendered = lay.r.render(i)
        messages += rendered.messages
        candidates += unit_candidates(u, rendered.tokens)
        # Recall brings back what had to go for room, not an exchange whose
        # user turn states a value changed later: its words (and the reply
        # echoing them) would come back undated as the proxy's text.
        if u.user_level < 2 and not (u.user is not None and lay.k.outdated.get(u.user.ordinal)):
            gone.update(t.ordinal for t in u.turns())
        if u.user is not None and u.user_level == 2 and u.assistant_level > 0:
            for item_id, note in lay.r.notes(i, u.user.ordinal):
                candidates.append(
                    Candidate("item", item_id, 0, 0.0, "kept", f"annotation: {note}", "backbone")
                )
    return messages, gone, candidates


def _recalled(
    inp: AssemblyInput, lay: _Layout, rec: _Recall, gone: set[int], left: int
) -> Generated:
    """Recalled turns of what had to go, within what is `left` and recall's room."""
    # A question about when (or about a change of mind) wants the turn's date:
    # a turn still shown without it is recalled too, dated.
    dated = lay.frozen_ordinals() if rec.question.kinds & _DATED_KINDS else set()
    top = max((h.score for h in inp.recalled), default=1.0)
    rivals = rival_hits(rec.question, inp.items, inp.history, rec.query, top)
    found = {h.ordinal for h in rivals}
    hits = [
        h
        for h in [*rivals, *(h for h in inp.recalled if h.ordinal not in found)]
        if h.ordinal in gone or h.ordinal in dated
    ]
    if hits and left > 0:
        return rec.within(hits, min(left, rec.cap), gone)
    return nothing("recalled")


def _carry_over(ctx: AssembledContext, lay: _Layout, cut: set[int]) -> None:
    """What the next request starts from: the compaction mark, the frozen units'
    levels, and what each showed."""
    ctx.compact_upto = lay.compact
    ctx.backbone_levels = {
        u.first_ordinal: (u.user_level, u.assistant_level, u.reason)
        for u in lay.units[: lay.n]
        if (u.user_level, u.assistant_level) != (2, FULL_DIGEST)
    }
    ctx.backbone_shown = {
        u.first_ordinal: shown(lay.r, i) for i, u in enumerate(lay.units[: lay.n]) if i not in cut
    }
