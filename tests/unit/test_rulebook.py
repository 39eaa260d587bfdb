"""`policies.rulebook`: rules of both languages joined into one pattern, on first use."""

from __future__ import annotations

import re
from typing import Any

import pytest

from policies import rulebook


def test_joined_is_the_parts_in_the_order_given() -> None:
    en = rulebook.rules("cues", "en")["constraint.condition"].source
    zh = rulebook.rules("cues", "zh")["constraint.condition"].source
    both = (("en", "constraint.condition"), ("zh", "constraint.condition"))
    assert rulebook.joined("cues", both).pattern == f"{en}|{zh}"
    assert rulebook.joined("cues", both[::-1]).pattern == f"{zh}|{en}"
    lazy = rulebook.Joined("cues", "constraint.condition", ("zh", "en"))
    assert lazy.compiled.pattern == f"{zh}|{en}"


def test_joined_ignores_case_when_a_part_does_unless_told() -> None:
    # Table rows are written for lower-cased text: they do not ignore case themselves.
    row = rulebook.Joined("cues", "change.self_correction")
    assert not row.compiled.flags & re.IGNORECASE
    told = rulebook.Joined("cues", "change.self_correction", flags=re.IGNORECASE)
    assert told.compiled.flags & re.IGNORECASE
    # en ignores case, zh has none
    assert rulebook.Joined("questions", "challenge").compiled.flags & re.IGNORECASE
    assert not rulebook.Joined("questions", "challenge", ("zh",)).compiled.flags & re.IGNORECASE


def test_joined_runs_on_either_script_and_keeps_the_match() -> None:
    fix = rulebook.Joined("cues", "change.self_correction", flags=re.IGNORECASE)
    found = fix.search("Typo, sorry: 写错了")
    assert found is not None
    assert found.group(0) == "Typo"
    assert "说错了" not in fix.sub(" ", "我说错了，是周二")
    assert fix.match("我说错了") is None


def test_of_joins_parts_that_alternate_between_languages() -> None:
    parts = (("zh", "constraint.weak"), ("en", "constraint.weak"), ("zh", "constraint.refusal"))
    sources = [rulebook.rules("cues", lang)[name].source for lang, name in parts]
    assert rulebook.Joined.of("cues", *parts).compiled.pattern == "|".join(sources)


def test_a_missing_rule_fails_when_first_used_not_when_named() -> None:
    lazy = rulebook.Joined("cues", "no_such_rule")
    with pytest.raises(KeyError):
        lazy.search("anything")
    with pytest.raises(KeyError):
        rulebook.Joined.of("cues", ("zh", "no_such_rule")).search("什么")


def test_a_table_keeps_its_rows_in_file_order_per_language() -> None:
    rows = rulebook.table_rows("cues", "change")
    langs = [lang for _weight, lang, _source in rows]
    assert langs == sorted(langs)  # en rows, then zh rows
    en = [name for name, rule in rulebook.rules("cues", "en").items() if rule.table == "change"]
    assert en[:2] == ["change.replacement", "change.self_correction"]


def test_joined_searches_and_matches_from_a_position_like_a_pattern() -> None:
    fix = rulebook.Joined("segment", "part_fix")
    text = "card 4410 2290 3318, sorry, 3381 at the end"
    at = text.index("3381")
    assert fix.match(text) is None
    found = fix.match(text, at)
    assert found is not None
    assert found.group("a") == "3381"
    assert fix.search(text, 0, at) is None


@pytest.fixture
def rules_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A rules directory of our own, read afresh (the loaders cache per file)."""

    def fresh() -> None:
        for loader in (rulebook.rule_file, rulebook.fragments, rulebook.rules):
            loader.cache_clear()

    monkeypatch.setattr(rulebook, "RULES_DIR", tmp_path)
    fresh()
    yield tmp_path
    fresh()


def _write(root: Any, lang: str, module: str, text: str) -> None:
    (root / lang).mkdir(exist_ok=True)
    (root / lang / f"{module}.yaml").write_text(text, encoding="utf-8")


def test_a_rule_includes_a_fragment_of_another_modules_file(rules_dir: Any) -> None:
    _write(
        rules_dir,
        "en",
        "numbers",
        "fragments:\n  small: {any: ['one', 'two', 'three']}\n"
        "  counted: {pattern: '(?:{=small}) (?:cups|jars)'}\n",
    )
    _write(
        rules_dir,
        "en",
        "orders",
        "more_of:\n  pattern: '\\b{=numbers.counted} more\\b'\n"
        "  must: ['Add two jars more.']\n  must_not: ['Add twelve jars more.']\n",
    )
    rule = rulebook.rules("orders", "en")["more_of"]
    assert rule.matches("Add two jars more.")
    assert not rule.matches("Add twelve jars more.")
    # code composing its own pattern reads the fragment with its includes resolved
    assert rulebook.fragment("numbers", "en", "counted") == "(?:one|two|three) (?:cups|jars)"


def test_a_missing_fragment_is_named_in_the_error(rules_dir: Any) -> None:
    _write(rules_dir, "en", "numbers", "fragments:\n  small: {any: ['one']}\n")
    _write(rules_dir, "en", "orders", "bad:\n  pattern: '{=numbers.large}'\n")
    _write(rules_dir, "en", "local", "bad:\n  pattern: '{=nowhere}'\n")
    with pytest.raises(KeyError, match="large"):
        rulebook.rules("orders", "en")
    with pytest.raises(ValueError, match="nowhere"):
        rulebook.rules("local", "en")
    with pytest.raises(KeyError, match="small2"):
        rulebook.fragment("numbers", "en", "small2")
