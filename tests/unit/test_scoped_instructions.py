"""An instruction whose scope is said first ("For the quiz night, use the score sheet
Omar made", "On the invoices, put the PO number first", "邀请函的话，用宋体", "报销单这块，
统一按部门排") is an instruction like one that opens with its verb. Our own sentences,
and look-alikes that must not trigger."""

from __future__ import annotations

from policies.language.cues import read_cues


def _directive(text: str) -> int:
    return read_cues(text).directive


def test_instruction_after_its_scope_en() -> None:
    assert _directive("For the quiz night, use the score sheet Omar made.") >= 2
    assert _directive("On the invoices, put the PO number first.") >= 2


def test_instruction_after_its_scope_zh() -> None:
    assert _directive("邀请函的话，用宋体。") >= 2
    assert _directive("报销单这块，统一按部门排。") >= 2


def test_scope_look_alikes_are_no_instruction() -> None:
    # the user's own habit, a discourse phrase, a condition about the user's plans
    assert _directive("For dinner, I usually use the rice cooker.") == 0
    assert _directive("In the end, use whatever works.") == 0
    assert _directive("In any case, use whatever works.") == 0
    assert _directive("如果下雨的话，我们就不去了。") == 0


def test_pick_said_as_an_order() -> None:
    assert _directive("Go with the green banner.") >= 2
    assert _directive("Set the sign-up form up in Tally then.") >= 2
    assert _directive("Then switch the newsletter to Buttondown.") >= 2


def test_pick_look_alikes_are_no_order() -> None:
    # a noun "set up", and the user's own past
    assert _directive("Set up was painful last year.") == 0
    assert _directive("We went with the green banner last year.") == 0
