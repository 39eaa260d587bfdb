"""Leaving the outdated content out of an answer ("中间改掉的就别写了", "drop the
outdated stuff") withholds what was changed; it revokes no rule of the user's, however
many words it shares with one ("最后", "final"). A rule named after the same cue
("最后那句总结就别写了") still goes.
"""

from __future__ import annotations

import pytest

from tests.unit.extraction_support import active_values

_ZH = "你好，我在老家帮爸妈做直播卖土蜂蜜。"
_EN = "Hi, I help my parents sell honey from our farm on livestreams."
_ZH_RULE = "另外每条回复最后加一句话总结，我好直接念给爸妈听。"
_EN_RULE = "At the end of every answer, add a one-line summary I can read to my parents."


@pytest.mark.parametrize(
    "ask", ["把最后定的整理一下，中间改掉的就别写了。", "只写最后的结果，改过的就不用写了。"]
)
def test_zh_outdated_content_left_out_keeps_the_rules(ask: str) -> None:
    assert _ZH_RULE in active_values([_ZH, _ZH_RULE, "以后别用表格了。", ask])


def test_en_outdated_content_left_out_keeps_the_rules() -> None:
    values = active_values([_EN, _EN_RULE, "Just the final answers, drop the outdated stuff."])
    assert _EN_RULE in values


def test_zh_rule_named_after_the_cue_still_goes() -> None:
    assert _ZH_RULE not in active_values([_ZH, _ZH_RULE, "最后那句总结就别写了。"])
