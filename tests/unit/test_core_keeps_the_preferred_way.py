"""A rule's core line keeps a clause that names the preferred way as a comparison
("…, plain text is easier to copy", "…，这样更方便"): next to "stop doing X" it is
the new way, and a core without it says only what was dropped. Clauses with no
comparison still go. Our own sentences."""

from __future__ import annotations

from policies.assemble.compact import core_value


def test_en_the_comparison_naming_the_new_way_stays() -> None:
    core = core_value(
        "You can stop doing charts, short numbered steps are easier on a small screen."
    )
    assert "numbered steps" in core


def test_zh_the_comparison_naming_the_new_way_stays() -> None:
    core = core_value("以后别发长图了，发文字版更方便，我在地铁上看。")
    assert "文字版" in core


def test_a_reason_without_comparison_still_goes() -> None:
    core = core_value("Stop adding emoji to the notices, our chair reads them out at the meeting.")
    assert "chair" not in core
    assert "Stop adding emoji" in core
