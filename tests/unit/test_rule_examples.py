"""Every rule kept as data matches its own must-examples and none of its must-nots.

The examples sit beside each rule in `policies/rules/<lang>/<module>.yaml`: adding or
widening a rule means adding the sentences it is for and the look-alikes it must leave
alone (see docs/rules.md).
"""

from __future__ import annotations

import pytest

from policies.rulebook import LANGUAGES, RULES_DIR, Rule, all_rules, rules

RULES = all_rules()


def _id(rule: Rule) -> str:
    return f"{rule.lang}/{rule.module}:{rule.name}"


def test_there_are_rules_for_every_language() -> None:
    assert {rule.lang for rule in RULES} == set(LANGUAGES)


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_rule_has_examples_both_ways(rule: Rule) -> None:
    assert rule.must, "a rule needs sentences it must match"
    assert rule.must_not, "a rule needs look-alikes it must not match"
    assert rule.note, "a rule says why it exists"


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_rule_matches_its_examples(rule: Rule) -> None:
    missed = [s for s in rule.must if not rule.matches(s)]
    wrong = [s for s in rule.must_not if rule.matches(s)]
    assert not missed, f"must match but does not: {missed}"
    assert not wrong, f"must not match but does: {wrong}"


def test_files_name_only_known_languages() -> None:
    assert {p.name for p in RULES_DIR.iterdir() if p.is_dir()} <= set(LANGUAGES)


def test_a_missing_file_is_no_rules() -> None:
    assert rules("no_such_module", "en") == {}
