"""What the current input asks of the past (`policies.assemble.question`), zh + en."""

from __future__ import annotations

import pytest

from policies.assemble.question import read_question


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        # a plain question about something said earlier
        ("What colour did we pick for the hallway?", {"lookup"}),
        ("Where did Priya say the spare key is", {"lookup"}),
        ("我们之前订的是哪家餐厅？", {"lookup"}),
        # temporal: the dates of the events
        ("When did Tomas start the night shifts?", {"lookup", "temporal"}),
        ("How long after the move did the boiler break?", {"lookup", "temporal"}),
        ("狗是什么时候做的绝育？", {"lookup", "temporal"}),
        ("先去的杭州还是先去的苏州？", {"lookup", "temporal"}),
        # the user's own words
        ("What did I say about the neighbour's fence?", {"lookup", "own_words"}),
        ("我之前说过阳台想种什么来着？", {"lookup", "own_words"}),
        # both statements of a contradiction
        ("Did I change my mind about the rental car?", {"lookup", "contradiction"}),
        ("装修预算一开始是怎么说的？", {"lookup", "contradiction"}),
        # several things tied together
        ("Which hobbies do Ana and her brother both have?", {"lookup", "bridging"}),
        ("我和老周都喜欢哪些电影？", {"lookup", "bridging"}),
    ],
)
def test_questions_about_the_past(text: str, kinds: set[str]) -> None:
    q = read_question(text)
    assert q.seeks_past
    assert set(q.kinds) == kinds


@pytest.mark.parametrize(
    "text",
    [
        # work on the task, even when phrased as a question
        "Can you make the second paragraph shorter?",
        "Could you write the invitation in a friendlier tone?",
        "Give me the full current list of everything we settled for the trip.",
        "你帮我把现在定下来的所有安排完整列一遍，以最新的为准。",
        "能不能帮我把这段改得正式一点？",
        # statements, even with a time word
        "Let me know when the draft is ready.",
        "The plumber comes tomorrow at nine.",
        "我下周三去面试。",
        "",
    ],
)
def test_requests_and_statements_are_not_lookups(text: str) -> None:
    assert not read_question(text).seeks_past


def test_the_rules_that_fired_are_named() -> None:
    q = read_question("When did I tell you about the allergy?")
    assert {"when", "said_by_me"} <= set(q.rules)


@pytest.mark.parametrize(
    ("text", "back"),
    [
        ("When did we book the ferry to the island?", True),
        ("What did Priya say about the caterer last week?", True),
        ("我之前说过婚礼定在哪天？", True),
        ("上次去的那家火锅店叫什么？", True),
        ("我们是在哪家店订的蛋糕？", True),
        # advice on the task, phrased as a question: no evidence cut
        ("What's a good stretching routine after a long ride?", False),
        ("When should I start the seedlings indoors?", False),
        ("这种面料适合做夏天的衬衫吗？", False),
        ("周末适合去哪里骑车？", False),
        # a deadline and a yes/no question about now are not the past
        ("Can the tiles be delivered before the plumber comes?", False),
        ("这个插座是不是防水的？", False),
        ("窗帘是不是要遮光的那种？", False),
        ("你推荐的那款是国产的吗？", False),
        ("这套沙发是什么时候送到的？", True),
        ("那张发票是谁开的？", True),
        # news told before the question is not a question about the past
        ("The kiln run went well and nothing cracked. What glaze goes with stoneware?", False),
        ("上周末去爬山了，累坏了。这种护膝适合跑步用吗？", False),
        ("Thanks! What did Omar say about the parking?", True),
        # a past tense about what was just told (its subject an anaphor) asks
        # about the recent turns, not the conversation's past
        ("That mug is lovely! Did you make it?", False),
        ("Sounds like a long drive. How was it?", False),
        ("Ha, what were they so excited about?", False),
        ("What made you start the cello?", False),
        # ... unless it names the thing, carries a marker of its own or asks
        # what the assistant said or proposed
        ("Did you make the booking I asked for last week?", True),
        ("What did you suggest for the dipping sauce?", True),
        ("What did the landlord decide about the deposit?", True),
        ("Was the plumber's quote higher than the tiler's?", True),
        ("How long did it take them to fix the roof?", True),
    ],
)
def test_only_a_question_pointing_back_may_push_the_backbone_aside(text: str, back: bool) -> None:
    q = read_question(text)
    assert q.seeks_past
    assert q.refers_back is back
