"""Core lines: a block over its room shows a rule by the clauses that state it.

Whole clauses go (reasons, the story around the rule, a clause that only
restates the replaced value), never a value, a negation, a name or a scope
word the rule needs. Sentences of our own, zh and en.
"""

from __future__ import annotations

from policies.assemble.compact import core_value
from policies.assemble.generated import MEMORY_HEADER
from policies.assemble.item_lines import core_line, render_item_line
from policies.assemble.layered import MemoryQuery, plan_memory
from policies.assemble.params import FullParams
from policies.types import MemoryItem


def test_zh_reasons_and_the_replaced_value_go() -> None:
    text = "我们去看了场地，东边那家停车太难，西边那家又太吵，场地预算还是提高到每场3000吧。"
    assert core_value(text, "场地预算每场2000以内") == "场地预算还是提高到每场3000吧。"
    # The old value quoted to say why it went: the "(replaces: …)" note shows it already.
    text = "东边那家每场2000以内但停车太难，场地预算还是提高到每场3000吧。"
    assert core_value(text, "场地预算每场2000以内") == "场地预算还是提高到每场3000吧。"


def test_en_the_story_before_the_decision_goes() -> None:
    text = (
        "We toured the venues and honestly the hall by the station felt dark,"
        " so let's book Maple Hall for the 9th."
    )
    assert core_value(text) == "let's book Maple Hall for the 9th."
    text = "Drop the tables, they break on my phone, just use short bullet points."
    assert core_value(text) == "Drop the tables, just use short bullet points."


def test_a_value_in_the_reason_clause_stays() -> None:
    # The rule has no value of its own: the one in its reason is what it needs.
    text = "Because the gym only holds 80 people, we should stop taking sign-ups."
    assert core_value(text) == text
    text = "场地最多坐60人，报名就别再收了，大家理解一下。"
    assert core_value(text) == "场地最多坐60人，报名就别再收了。"
    # Not a value the rule replaced, so not dropped as one either.
    text = "东边那家每场1500但停车太难，场地预算还是提高到每场3000吧。"
    assert "1500" in core_value(text, "场地预算每场2000以内")


def test_negation_and_scope_words_stay() -> None:
    text = "The kids were cranky again, so no screens after 8pm, ever."
    assert core_value(text) == "no screens after 8pm, ever."
    text = "讲作文的时候别直接改好给她，她会直接抄，先圈出问题，让她自己改。"
    assert core_value(text) == text


def test_a_clause_that_leans_back_keeps_what_it_is_about() -> None:
    # "他俩" stands for someone named two clauses back.
    text = "我爸妈早就离婚了，见面也尴尬，他俩不能同桌。"
    assert core_value(text) == text
    text = "Our neighbour recommended a plumber, Dana Reyes, she fixed their boiler in a day."
    assert core_value(text).startswith("Our neighbour recommended a plumber, Dana Reyes")


def test_a_topic_before_the_rule_stays() -> None:
    assert core_value("至于午餐，盒饭实在太油了，这次订轻食吧。") == "至于午餐，这次订轻食吧。"


def test_nothing_to_cut_gives_the_text() -> None:
    assert core_value("Please keep the summary short.") == "Please keep the summary short."
    assert core_value("以后回复都用中文。") == "以后回复都用中文。"


def item(
    id_: str, value: str, type_: str = "constraint", ordinal: int = 1, replaces: str | None = None
) -> MemoryItem:
    return MemoryItem(
        id=id_, type=type_, slot=id_, value=value, source="user",  # type: ignore[arg-type]
        source_ordinal=ordinal, importance=0.8, replaces=replaces,
    )  # fmt: skip


def test_a_fact_keeps_its_line_whole() -> None:
    # Each clause of a fact may be what is asked back: no core.
    fact = item("f", "爷爷今年80岁，寿宴订在江边那家酒楼的大厅，晚上那场。", "fact")
    assert core_line(fact) == render_item_line(fact)
    rule = item("r", "Drop the tables, they break on my phone, just use short bullet points.")
    assert core_line(rule) == "- [constraint] Drop the tables, just use short bullet points."


def count(text: str) -> int:
    return len(text) // 4 + 1


RULES = [
    item(
        f"r{i}",
        f"Rule {i}: keep step {i} under {10 + i} minutes, my team gets restless after a while.",
        ordinal=i,
    )
    for i in range(1, 7)
]


# No anchors: the block's priority is then plain rank (newest first here).
PARAMS = FullParams.model_validate({"max_anchors": 0, "min_anchors": 0})


def plan(cap: int, items: list[MemoryItem] = RULES) -> tuple[list[str], frozenset[str]]:
    q = MemoryQuery(items, 40, frozenset(), "", count)
    out = plan_memory(q, None, cap, 0, PARAMS, cap)
    return out.stable.contents[0].splitlines()[1:], out.layout.short_ids


def room_for(lines: list[str]) -> int:
    """What `fit_lines` needs to take all of `lines`."""
    return count(MEMORY_HEADER) + 4 + sum(count(ln) + 1 for ln in lines)


def test_whole_lines_while_everything_fits() -> None:
    whole = [render_item_line(it) for it in RULES]
    room = room_for(whole)
    lines, short = plan(room)
    assert short == frozenset()
    assert sorted(lines) == sorted(whole)


def test_over_room_the_lowest_ranked_lines_go_to_their_core_first() -> None:
    whole = [render_item_line(it) for it in RULES]
    assert all(core_line(it) != render_item_line(it) for it in RULES)
    lines, short = plan(room_for(whole) - 20)
    # Every item is still on show, some of them by their core clauses only.
    assert len(lines) == len(RULES)
    assert short
    assert len(short) < len(RULES)
    assert all(core_line(it) in lines for it in RULES if it.id in short)
    # The newest rules rank first here, so the oldest are the ones cut.
    assert short == frozenset(f"r{i}" for i in range(1, len(short) + 1))
    for it in RULES:
        assert f"under {10 + int(it.id[1:])} minutes" in "\n".join(lines)


def test_the_block_is_rendered_as_laid_out_on_the_next_request() -> None:
    cap = room_for([render_item_line(it) for it in RULES]) - 20
    q = MemoryQuery(RULES, 40, frozenset(), "", count)
    first = plan_memory(q, None, cap, 0, PARAMS, cap)
    again = plan_memory(q, first.layout, cap + 50, 0, PARAMS, cap + 50)
    assert first.layout.short_ids
    assert not again.rebuilt
    assert again.stable.contents == first.stable.contents


def test_the_layout_keeps_its_core_lines_when_stored() -> None:
    from proxy.store.repo import layout_from_json, layout_to_json

    q = MemoryQuery(RULES, 40, frozenset(), "", count)
    cap = room_for([render_item_line(it) for it in RULES]) - 20
    layout = plan_memory(q, None, cap, 0, PARAMS, cap).layout
    assert layout.short_ids
    assert layout_from_json(layout_to_json(layout)) == layout
    # A layout stored before core lines existed reads as all whole.
    old = layout_to_json(layout).replace('"short_ids"', '"ignored"')
    assert layout_from_json(old).short_ids == frozenset()


def test_a_clause_asking_for_something_added_stays() -> None:
    # "括号里附上…", "末尾注明…": a second requirement of the rule, not its reason.
    text = "报价单以后写含税价就行，括号里附上税率，财务那边看得懂。"
    assert "括号里附上税率" in core_value(text, "不要写含税价")
    text = "菜单写中文名就行，末尾注明辣度，我们这边老人多，吃不了太辣的。"
    assert "末尾注明辣度" in core_value(text)
    # a reason clause with no ask in it still goes
    assert "我们这边老人多" not in core_value(text)
