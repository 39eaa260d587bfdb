"""A day of the month named alone ("pencil in the 12th", "on the 14th") is a date.

It is read only after a word that places an event in time and when no noun follows
it: an ordinal that modifies a noun ("the 3rd floor", "the 2nd option") is no date.
In Chinese a bare "15号" is already a value (a label with unit 号), so a later
"改到18号" still replaces it; "第2名" stays a rank.
"""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _dates(text: str) -> list[tuple[str, str, float | None]]:
    return [(v.text, v.unit, v.number) for v in extract_values(text) if v.kind == "date"]


def test_bare_day_of_month_is_a_date() -> None:
    assert _dates("Pencil in the 12th for the open house.") == [("the 12th", "dom", 12.0)]
    assert _dates("Can we do the fitting on the 23rd?") == [("the 23rd", "dom", 23.0)]
    assert _dates("Push the recital to the 30th, please.") == [("the 30th", "dom", 30.0)]
    assert _dates("Reserve the hall for the 1st.") == [("the 1st", "dom", 1.0)]


def test_ordinal_of_a_noun_is_no_date() -> None:
    assert _dates("The studio is on the 3rd floor.") == []
    assert _dates("I'd pick the 2nd option.") == []
    assert _dates("She won in the 4th round.") == []
    assert _dates("We went there for the 2nd time.") == []
    assert [v.kind for v in extract_values("她考了第2名。")] != ["date"]


def test_a_later_day_replaces_the_earlier() -> None:
    en = active_values(
        ["Pencil in the 12th for the open house.", "Move the open house to the 19th."]
    )
    assert en == ["Move the open house to the 19th."]
    zh = active_values(["开放日定在15号。", "开放日改到18号吧。"])
    assert zh == ["开放日改到18号吧。"]
