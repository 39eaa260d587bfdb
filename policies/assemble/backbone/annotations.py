"""Annotations held back: a new annotation rewrites the prompt from where it
stands, so it waits (while the user's words that changed it are in the
context) until the prompt changes there anyway."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from policies.assemble.backbone.render import Rendered, Renderer
from policies.assemble.backbone.units import Unit


def _signature(rendered: Rendered) -> int:
    """Equal for equal renderings (compared within the process only: each frozen
    unit, every request). Messages of text fields only (nearly all) are hashed as
    their sorted fields, whose strings keep their hash, without encoding them as
    JSON; any other value takes the JSON form."""
    fields = []
    for m in rendered.messages:
        if not all(v is None or type(v) is str for v in m.values()):
            return hash(json.dumps(rendered.messages, sort_keys=True, ensure_ascii=False))
        fields.append(tuple(sorted(m.items())))
    return hash(tuple(fields))


def shown(r: Renderer, i: int) -> tuple[int, tuple[str, ...]]:
    """What unit `i` showed: its rendering's signature and the annotations in it."""
    u = r.units[i]
    ids = tuple(n[0] for n in r.notes(i, u.user.ordinal)) if u.user is not None else ()
    return _signature(r.render(i)), ids


def _said_in(change: tuple[int, str] | None, texts: Mapping[int, str]) -> bool:
    """Whether the new value of a change is in the context in the user's words."""
    if change is None or change[0] not in texts:
        return False
    return " ".join(change[1].split()) in texts[change[0]]


def defer_annotations(
    units: Sequence[Unit],
    n: int,
    r: Renderer,
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
    than I said") are shown at once. A digest line stating a figure that a
    later turn changed (`Renderer.held`) waits as well. From
    the first exchange that changes on, every annotation is shown
    (`Renderer.notes`).
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
        if _signature(r.render(i)) == shown[0]:
            continue
        # A digest line whose figure a later turn changed waits the same way.
        r.held.add(i)
        if _signature(r.render(i)) != shown[0]:
            r.held.discard(i)
            del r.shown_notes[i]
            return
