"""Answer scores (`proxy.answers`) and verdict parsing (`proxy.judge`), as pure functions."""

from __future__ import annotations

import pytest

from proxy.answers import Tokens, bill, score_answer, usage_tokens
from proxy.judge import CheckVerdict, PairVerdict, parse_verdict

PICKUP = {"id": "pickup", "expect_any": ["4:30 pm"], "stale_any": ["3 pm"]}
COLOUR = {"id": "colour", "expect_any": ["teal", "蓝绿色"], "stale_any": ["orange", "橙色"]}


def test_final_value_present_and_missing() -> None:
    score = score_answer([PICKUP, COLOUR], "Pick-up is at 4:30 PM.\nNo colour chosen yet.")
    assert score.present == ["pickup"]
    assert score.missed == ["colour"]
    assert score.stale == []


def test_stale_value_stated_as_current_is_stale() -> None:
    score = score_answer([PICKUP], "- pick-up: 3 pm\n- (some said 4:30 pm)")
    assert score.present == ["pickup"]  # given somewhere, but the old one is asserted
    assert score.stale == ["pickup"]


def test_old_value_named_beside_the_new_one_is_not_stale() -> None:
    score = score_answer([PICKUP], "Pick-up moved from 3 pm to 4:30 pm.")
    assert (score.present, score.stale) == (["pickup"], [])


def test_same_normal_form_as_the_context_scores() -> None:
    # Full-width letters and digits (NFKC), case, and runs of spaces all fold.
    score = score_answer([PICKUP, COLOUR], "横幅用蓝绿色。\n接人时间 ４:３０   ＰＭ")
    assert score.present == ["pickup", "colour"]
    stale = score_answer([COLOUR], "横幅颜色：橙色")
    assert (stale.missed, stale.stale) == (["colour"], ["colour"])


def test_usage_with_cache_and_bill() -> None:
    openai = {"prompt_tokens": 1000, "completion_tokens": 50,
              "prompt_tokens_details": {"cached_tokens": 800}}  # fmt: skip
    anthropic = {"prompt_tokens": 1000, "completion_tokens": 50,
                 "cache_read_input_tokens": 600, "cache_creation_input_tokens": 300}  # fmt: skip
    assert usage_tokens(openai) == Tokens(1000, 50, 800, 0)
    assert usage_tokens(anthropic) == Tokens(1000, 50, 600, 300)
    assert usage_tokens(None) == Tokens()
    prices = {"input": 1.0, "output": 4.0, "cache_read": 0.1, "cache_write": 1.25}
    assert bill(prices, usage_tokens(anthropic)) == pytest.approx(100 + 60 + 375 + 200)
    assert bill(None, Tokens(10, 10)) is None


def test_verdicts_parse_fenced_json_and_say_what_is_wrong() -> None:
    text = 'Here you go:\n```json\n{"verdict": "stale", "reason": "says 3 pm"}\n```'
    assert parse_verdict(text, CheckVerdict).verdict == "stale"
    with pytest.raises(ValueError, match="no JSON object"):
        parse_verdict("looks right to me", CheckVerdict)
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_verdict('{"verdict": correct}', CheckVerdict)
    with pytest.raises(ValueError, match="verdict"):
        parse_verdict('{"verdict": "maybe"}', CheckVerdict)
    pair = '{"a": {"verdict": "correct"}, "b": {"verdict": "missing"}, "better": "a"}'
    assert parse_verdict(pair, PairVerdict).better == "a"
