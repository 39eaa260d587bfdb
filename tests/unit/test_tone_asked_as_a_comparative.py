"""A tone asked for as a comparative ("口语化一点", "接地气些", "a bit more relaxed") is
a rule on how the assistant writes; right after a revoked tone it is what replaces it.
Look-alikes: a comparative describing a thing ("今年的蜜比去年稀一些"), a one-off
ask for more ("这段再详细一点"), a tone word inside a noun phrase ("more formal
training for our volunteers") set no tone.
"""

from __future__ import annotations

from policies.language.cues import read_cues
from tests.unit.extraction_support import active_values

_ZH_OPEN = "你好，我在老家帮爸妈做直播卖土蜂蜜。"
_EN_OPEN = "Hi, I run a small podcast about the history of our town."


def test_zh_tone_comparative_replaces_the_revoked_tone() -> None:
    values = active_values(
        [
            _ZH_OPEN,
            "开场白我希望正式一些，显得我们专业。",
            "开场白别那么正式了，听着像念稿子。口语化一点，像跟老街坊聊天那样。",
        ]
    )
    assert "开场白我希望正式一些，显得我们专业。" not in values
    assert any("口语化一点" in v for v in values)


def test_en_tone_comparative_replaces_the_revoked_tone() -> None:
    values = active_values(
        [
            _EN_OPEN,
            "Write the show intros in a formal register, we want to look professional.",
            "Stop with the formal register, it sounds like a script. A bit more relaxed, "
            "like chatting with a neighbour.",
        ]
    )
    assert any("more relaxed" in v for v in values)


def test_tone_comparative_is_a_directive_cue() -> None:
    assert read_cues("回复接地气些，别端着。").directive >= 3
    assert read_cues("Make the captions a little more playful, please.").directive >= 3


def test_comparatives_that_set_no_tone() -> None:
    assert read_cues("今年的蜜比去年稀一些，颜色也浅一点。").directive == 0
    assert read_cues("这段再详细一点。").directive == 0
    assert read_cues("We need more formal training for our volunteers.").directive == 0
