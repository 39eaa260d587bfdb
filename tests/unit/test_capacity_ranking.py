"""What keeps its place when the budget is tiny: a contact the user named once ranks
like a value; a rule that points at its object only with a pronoun ranks below the
facts that name things. Sentences of our own, zh and en."""

from __future__ import annotations

from policies.extract.statements import read_statements
from policies.language.names import names_contact, person_names
from policies.memory.scoring import ScoringParams, score_item
from policies.types import MemoryItem
from tests.unit.extraction_support import active_values


def user_item(id_: str, value: str, type_: str, importance: float) -> MemoryItem:
    return MemoryItem(
        id=id_, type=type_, slot=id_, value=value, source="user",  # type: ignore[arg-type]
        source_ordinal=10, importance=importance,
    )  # fmt: skip


def score(it: MemoryItem) -> float:
    return score_item(it, current_ordinal=30, query_terms=(), params=ScoringParams())


def test_zh_colleague_named_by_nickname_is_remembered() -> None:
    active = active_values(
        ["我们在给奶茶店做会员系统。", "对了，店里的收银小林是这个项目的联系人，系统问题都找她。"],
        "你是一个帮小店老板梳理需求的助手。",
    )
    assert any("小林" in v for v in active)


def test_zh_nickname_needs_a_role_or_a_predicate() -> None:
    assert person_names("仓库钥匙交给老郑，他每天最早到。")
    assert not person_names("小区门口新开了一家小吃店。")


def test_a_named_contact_ranks_like_a_value() -> None:
    contact = user_item("c", "Our contact at the printer is Marguerite Olsen.", "entity", 0.6)
    remark = user_item("r", "The printer's lobby smells like fresh coffee.", "fact", 0.65)
    rule = user_item("k", "Keep every flyer in the brand colours.", "constraint", 0.85)
    assert names_contact(contact.value)
    assert score(contact) > score(remark)
    assert score(contact) >= score(rule) - 0.05


def test_zh_named_contact_ranks_like_a_value() -> None:
    contact = user_item("c", "场地那边的负责人是赵经理，有事直接打给他。", "entity", 0.6)
    remark = user_item("r", "场地旁边有个挺大的停车场。", "fact", 0.65)
    assert score(contact) > score(remark)


def test_a_rule_about_a_pronoun_ranks_below_a_named_fact() -> None:
    (vague,) = read_statements("Never throw those away.", frozenset(), opening=False)
    (named,) = read_statements(
        "Never reorder the chapters in the printed guide.", frozenset(), opening=False
    )
    assert vague.importance < 0.65 < named.importance


def test_zh_rule_about_a_pronoun_ranks_below_a_named_rule() -> None:
    (vague,) = read_statements("这些一定要收好。", frozenset(), opening=False)
    (named,) = read_statements("发票原件一律不许寄出去。", frozenset(), opening=False)
    assert vague.importance < named.importance


def test_phone_numbers_are_references() -> None:
    from policies.language.values import extract_values

    for text, phone in (
        ("Call the caterer at 415-555-0199 before noon.", "415-555-0199"),
        ("The office line is (212) 555-0147.", "(212) 555-0147"),
        ("物业的电话是13912345678，白天都在。", "13912345678"),
    ):
        assert [(v.kind, v.text) for v in extract_values(text)] == [("id", phone)]


def test_an_old_id_keeps_up_with_a_newer_value() -> None:
    ref = user_item("r", "The venue's booking reference is BK-44810.", "fact", 0.75)
    ref.source_ordinal = 4
    dated = user_item("d", "The caterer arrives at 5pm on the day.", "fact", 0.65)
    dated.source_ordinal = 30
    assert score_item(ref, current_ordinal=60, query_terms=(), params=ScoringParams()) > (
        score_item(dated, current_ordinal=60, query_terms=(), params=ScoringParams())
    )
