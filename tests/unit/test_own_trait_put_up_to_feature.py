"""What the user's own product or practice is, put up for whether to feature it:
"我们家的蜜不加糖…，这点要不要在直播时多提一下？", "Our honey is never heated, should
I mention that on stream?". The trait is theirs whatever the answer: kept as a fact.
Not someone else's practice, not a question about the practice itself, not a
supposition.
"""

from __future__ import annotations

import pytest

from tests.unit.extraction_support import active_values

_ZH = "你好，我在老家帮爸妈做直播卖土蜂蜜。"
_EN = "Hi, I help my parents sell honey from our farm on livestreams."


@pytest.mark.parametrize(
    ("opening", "message", "kept"),
    [
        (_ZH, "我们家的蜜不加糖，也不兑水，都是自己摇的，这点要不要在直播时多提一下？", "不兑水"),
        (
            _EN,
            "Our honey has no added sugar and is never heated, should I mention that on stream?",
            "never heated",
        ),
        (
            _EN,
            "Our jars are reused and sterilised. Should we highlight that in the description?",
            "sterilised",
        ),
    ],
)
def test_own_trait_before_a_feature_ask_is_kept(opening: str, message: str, kept: str) -> None:
    assert any(kept in v for v in active_values([opening, message])[1:])


@pytest.mark.parametrize(
    ("opening", "message"),
    [
        (_ZH, "别人家的蜜都兑水，这点要不要在直播时提一下？"),
        (_ZH, "我们家的蜜要不要先加热再装瓶？"),
        (_EN, "If our honey has no added sugar, should I mention that?"),
        (_EN, "The shop down the road heats its honey, should I mention that on stream?"),
        (_EN, "Our honey, should we heat it before bottling?"),
    ],
)
def test_look_alikes_keep_nothing(opening: str, message: str) -> None:
    assert active_values([opening, message])[1:] == []
