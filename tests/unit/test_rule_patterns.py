"""`Joined(module, name)`: a rule kept as data, run as the one regex of both halves' branches.

It stands in for a module-level `re.compile` of mixed English and Chinese branches:
the same branches (English first), the same flags, on any text, compiled on first use.
"""

from __future__ import annotations

import re

import pytest

from policies.rulebook import Joined, joined, rules


def test_joined_is_both_halves_english_first() -> None:
    en, zh = rules("statements", "en")["we"], rules("statements", "zh")["we"]
    pattern = joined("statements", (("en", "we"), ("zh", "we")))
    assert pattern.pattern == f"{en.source}|{zh.source}"
    assert pattern.flags & re.IGNORECASE


def test_case_kept_when_no_half_ignores_it() -> None:
    assert not Joined("statements", "naming").compiled.flags & re.IGNORECASE


def test_a_rule_of_one_language_is_that_half_alone() -> None:
    assert Joined("statements", "others_offer_help").compiled.pattern == (
        rules("statements", "zh")["others_offer_help"].source
    )


def test_runs_both_halves_on_mixed_text() -> None:
    we = Joined("statements", "we")
    assert we.search("周五 our team 休息") is not None
    assert we.search("Friday 我们 rest") is not None
    assert we.match("我们 rest") is not None
    assert we.sub("", "我们 and us") == " and "


def test_compiled_on_first_use_only() -> None:
    pattern = Joined("statements", "no_such_rule")
    with pytest.raises(KeyError):
        pattern.search("anything")


def test_confirm_is_both_files_words_in_the_frame_of_the_rules() -> None:
    from policies.language.social import CONFIRM
    from policies.rulebook import fragment

    def words(name: str) -> tuple[str, str]:
        return fragment("social", "en", name), fragment("social", "zh", name)

    (head_en, head_zh), (tail_en, tail_zh) = words("confirm_head"), words("confirm_tail")
    mixed = CONFIRM.compiled.pattern
    one_file = {
        "en": mixed.replace(f"{head_en}|{head_zh}", head_en).replace(
            f"{tail_en}|{tail_zh}", tail_en
        ),
        "zh": mixed.replace(f"{head_en}|{head_zh}", head_zh).replace(
            f"{tail_en}|{tail_zh}", tail_zh
        ),
    }
    for lang, source in one_file.items():
        assert rules("social", lang)["confirm"].source == source
    assert CONFIRM.compiled.flags & re.IGNORECASE
    assert CONFIRM.match("好的 thanks!")
    assert CONFIRM.match("OK，谢谢")
    assert not CONFIRM.match("好的 but later")
