"""A proposal put up for an opinion and then leaned to ("年满50岁的加一个骨密度检测，你觉得
值不值得？我个人倾向于加", "Add a second photographer, what do you think? I'm leaning yes") is
the user's plan. Our own sentences, and look-alikes that must not trigger."""

from __future__ import annotations

from policies.extract.statements import read_statements
from policies.language.matching import key_terms

_TOPIC = key_terms("你是一名企业行政助理，帮助HR同事安排公司事务。We plan a wedding reception.")


def _kept(message: str) -> list[str]:
    return [st.text for st in read_statements(message, _TOPIC, opening=False)]


def test_proposal_leaned_to_is_kept_zh() -> None:
    kept = _kept(
        "还有，年满50岁的同事加一个骨密度检测，你觉得值不值得？我个人倾向于加，好几个老同事腰不好。"
    )
    assert any("骨密度" in t and "倾向" in t for t in kept)


def test_proposal_leaned_to_is_kept_en() -> None:
    kept = _kept("Add a second photographer for the reception, what do you think? I'm leaning yes.")
    assert any("second photographer" in t for t in kept)


def test_leaned_proposal_look_alikes() -> None:
    # an aside about the user's cat, off the conversation's topic
    assert not any(
        "猫" in t for t in _kept("我家猫最近老是半夜跑酷，你觉得正常吗？我倾向于不管它。")
    )
    # asked without a leaning: still only a question
    assert not any("骨密度" in t for t in _kept("年满50岁的同事加一个骨密度检测，你觉得有必要吗？"))
    # a supposition put up, then leaned to, is still a supposition
    assert not any(
        "photographer" in t
        for t in _kept("If we add a photographer, what do you think? I'm leaning yes.")
    )
