"""An estimate replaced by the outcome it estimated ("估分540分左右" … "分数出来了！552分",
"estimated at around $4,000" … "the final bill came in at $4,600"). Our own sentences,
and look-alikes that must not trigger."""

from __future__ import annotations

from tests.unit.extraction_support import active_values


def _after(lines: list[str], system: str = "You are a helpful assistant.") -> str:
    return "\n".join(active_values(lines, system))


# -- estimate, then outcome ------------------------------------------------------------


def test_estimated_score_replaced_by_the_result_announced_before_it_zh() -> None:
    out = _after(["儿子自己估分540分左右，想先了解一下本科线。",
                  "分数出来了！552分，比估的高一些。"])  # fmt: skip
    assert "552分" in out
    assert "540分" not in out


def test_estimated_amount_replaced_by_the_final_one_en() -> None:
    out = _after(["We estimated the roof repair at around $4,000.",
                  "The final bill came in at $4,600."])  # fmt: skip
    assert "$4,600" in out
    assert "$4,000" not in out


def test_estimate_outcome_look_alikes() -> None:
    # another guess, not an outcome
    out = _after(["We estimated the roof repair at around $4,000.", "Maybe $4,500, who knows."])
    assert "$4,000" in out
    # an outcome of something else, far from the estimate
    out = _after(["装修预计花15万左右。", "结果出来了，抽奖中了300元购物卡。"])
    assert "15万" in out
    # the outcome asked about, not told
    out = _after(["儿子自己估分540分左右。", "成绩出来了吗？听说今年要考到560分才稳？"])
    assert "540分" in out
