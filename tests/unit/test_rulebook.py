"""`policies.rulebook`: a rule of both languages joined into one pattern, on first use."""

from __future__ import annotations

import re

import pytest

from policies import rulebook


def test_joined_is_both_halves_in_the_order_asked_case_insensitive() -> None:
    en = rulebook.rules("cues", "en")["constraint.condition"].source
    zh = rulebook.rules("cues", "zh")["constraint.condition"].source
    assert rulebook.joined("cues", "constraint.condition").pattern == f"{en}|{zh}"
    pattern = rulebook.joined("cues", "constraint.condition", ("zh", "en"))
    assert pattern.pattern == f"{zh}|{en}"
    assert pattern.flags & re.IGNORECASE


def test_joined_runs_on_either_script_and_keeps_the_match() -> None:
    found = rulebook.Joined("cues", "change.self_correction").search("Typo, sorry: 写错了")
    assert found is not None
    assert found.group(0).lower() == "typo"
    stripped = rulebook.Joined("cues", "change.self_correction").sub(" ", "我说错了，是周二")
    assert "说错了" not in stripped


def test_joined_compiles_nothing_until_used() -> None:
    lazy = rulebook.Joined("cues", "no_such_rule")
    with pytest.raises(KeyError):
        lazy.search("anything")


def test_a_table_keeps_its_rows_in_file_order_per_language() -> None:
    rows = rulebook.table_rows("cues", "change")
    langs = [lang for _weight, lang, _source in rows]
    assert langs == sorted(langs)  # en rows, then zh rows
    en = [name for name, rule in rulebook.rules("cues", "en").items() if rule.table == "change"]
    assert en[:2] == ["change.replacement", "change.self_correction"]
