"""Figures a later turn restated (`policies.assemble.backbone.restated`): an older
reply's line with the earlier figure is out of date, in the digest and in the notes."""

from __future__ import annotations

from typing import Any

import pytest

from policies.assemble.assembly import BackboneAssembler
from policies.assemble.backbone.restated import Restated, keyed_values
from tests.unit.test_assembly import make_input


@pytest.mark.parametrize(
    ("line", "later", "outdated"),
    [
        # A count with its unit, given another figure later.
        ("That makes 12 chairs for the hall.", "Let's get 14 chairs instead.", True),
        ("那就订8张桌子。", "桌子改成10张吧。", True),
        # A labelled amount, given another figure under the same label.
        ("So the total comes to $1,240.", "With the rush fee the new total is $1,310.", True),
        ("押金是2000元，入住时付。", "房东说押金要3000元。", True),
        # The same figure again: still current.
        ("That makes 12 chairs for the hall.", "Confirmed, 12 chairs.", False),
        # Unlabelled prices of options: one option's price says nothing of another's.
        ("Option B runs $980 for the weekend.", "Option C runs $1,050.", False),
        ("A方案3000元，含早餐。", "B方案3500元。", False),
        # Different kinds of thing counted, or labelled differently.
        ("That makes 12 chairs for the hall.", "We also need 3 tables.", False),
        ("The deposit is $300.", "The total is $2,400.", False),
        # Bare numbers and times are not compared.
        ("Start at 9:30, about 40 minutes each.", "Start at 10:15 then.", False),
    ],
)
def test_a_line_is_outdated_when_a_later_turn_gives_its_figure_another(
    line: str, later: str, outdated: bool
) -> None:
    restated = Restated.of([(3, line), (5, later)])
    assert restated.outdated(line, 3) is outdated


def test_only_later_turns_make_a_line_outdated() -> None:
    restated = Restated.of([(1, "We said 10 guests."), (3, "So 12 guests it is.")])
    assert restated.outdated("So 12 guests it is.", 3) is False
    assert restated.outdated("We said 10 guests.", 1) is True


def test_counts_only_leaves_amounts_alone() -> None:
    restated = Restated.of([(1, "The budget is $500."), (3, "Budget now $650.")])
    assert restated.outdated("The budget is $500.", 1) is True
    assert restated.outdated("The budget is $500.", 1, counts_only=True) is False


def test_values_without_a_clear_kind_have_no_key() -> None:
    assert keyed_values("It costs about 40 and takes 2:30.") == ()
    assert [k for k, _ in keyed_values("预算大概8000元，要6个人。")] == ["money:cny:预算", "qty:人"]


def _msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


_FILLER = "Pack a warm layer, the evenings get cold by the lake. " * 8


def _outing(*exchanges: tuple[str, str], last: str) -> list[dict[str, Any]]:
    """A club outing: the boat hire priced first, then `exchanges`, then `last`."""
    messages = [
        _msg("system", "You help plan club outings."),
        _msg("user", "We're planning the spring outing, can you price the boat hire?"),
        _msg("assistant", "For the boat hire the total is $860 for the day. " + _FILLER),
    ]
    for asked, answered in exchanges:
        messages += [_msg("user", asked), _msg("assistant", answered + " " + _FILLER)]
    return [*messages, _msg("user", last)]


def test_an_older_digest_leaves_out_a_figure_a_later_turn_changed() -> None:
    messages = _outing(
        ("The club added a second boat.", "With two boats the new total is $1,420 for the day."),
        ("And lunch?", "Lunch on the island is easy to arrange."),
        last="What should we bring?",
    )
    ctx = BackboneAssembler().assemble(make_input(messages, 260, summary_upto=7))
    sent = "\n".join(str(m.get("content")) for m in ctx.messages)
    assert "$1,420" in sent
    assert "$860" not in sent


def test_a_changed_figure_waits_until_the_prompt_changes_at_its_digest() -> None:
    # Shown once, the older digest keeps its line while nothing else changes
    # there: dropping it would rewrite the cached prompt from that point.
    messages = _outing(
        ("And lunch?", "Lunch on the island is easy to arrange."),
        ("Any news?", "Nothing new on my side."),
        last="The club added a second boat, so the new total is $1,420.",
    )
    a = BackboneAssembler()
    first = a.assemble(make_input(messages[:-2], 250, summary_upto=5))
    second = a.assemble(
        make_input(
            messages,
            250,
            summary_upto=5,
            backbone_levels=first.backbone_levels or {},
            backbone_shown=first.backbone_shown or {},
        )
    )
    assert second.messages[:4] == first.messages[:4]
    assert "$860" in str(second.messages[2]["content"])
    # Laid out afresh, the line is left out.
    fresh = BackboneAssembler().assemble(make_input(messages, 250, summary_upto=5))
    assert "$860" not in "\n".join(str(m.get("content")) for m in fresh.messages)
