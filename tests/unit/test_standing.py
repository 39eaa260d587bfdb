"""What earns the working-memory block's room (`policies.memory.standing`)."""

from __future__ import annotations

from typing import Any

from policies.assemble.assembly import FullAssembler
from policies.assemble.generated import MEMORY_HEADER
from policies.assemble.params import FullParams
from policies.memory.standing import cap_incidental, is_standing
from tests.unit.test_assembly import count, msg
from tests.unit.test_lifecycle_assembly import chat, item, make

# A user who talks about their week: true, but none of it is a requirement.
_CHATTER = (
    "I really enjoy baking sourdough with my nephew on rainy afternoons.",
    "My neighbour's garden looks lovely since she planted those tulips.",
    "Honestly the old bridge by the river is my favourite walk in town.",
    "I find jigsaw puzzles calming after a long shift at the library.",
    "Our cat sleeps on the warm laptop whenever she gets the chance.",
    "I adore the smell of fresh coffee in the market hall downtown.",
    "Watching the swallows come back every spring makes me happy.",
    "My brother keeps sending me photos of his vintage motorbike.",
    "I love how quiet the park gets when the first snow falls.",
    "Those long chats with my aunt on the balcony always cheer me up.",
    "I am fond of the little bookshop that sells secondhand atlases.",
    "Painting clouds in watercolour has become my favourite hobby lately.",
)
# 2 + len(_CHATTER) ordinals: what the user set and gave comes after the chatter.
_RULES = (
    ("rule", "Never schedule anything before 10 in the morning.", "constraint"),
    ("tone", "Always keep the replies short and in plain words.", "directive"),
    ("rent", "My rent is 1,150 euros a month.", "fact"),
    ("ref", "The lease reference is LSE-30417.", "fact"),
)


def _items() -> list[Any]:
    chatter = [
        item(f"c{i}", text, 2 + i, "preference" if i % 2 else "fact", importance=0.65)
        for i, text in enumerate(_CHATTER)
    ]
    rules = [
        item(key, text, 40 + i, kind, importance=0.85) for i, (key, text, kind) in enumerate(_RULES)
    ]
    return [*chatter, *rules]


def test_rules_values_revisions_and_pins_stand_plain_statements_do_not() -> None:
    assert is_standing(item("a", "Please always cite the page numbers.", 1, "directive"))
    assert is_standing(item("b", "Do not include any photos of the kids.", 1, "constraint"))
    assert is_standing(item("c", "Finish the grant draft for the museum.", 1, "goal"))
    # Withdrawing a rule is what holds now, with or without a value in it.
    assert is_standing(item("w", "行程里不用再标出发时间了。", 1, "state"))
    assert is_standing(item("d", "The kitchen quote came to 4,300 dollars.", 1, "fact"))
    assert is_standing(item("e", "My member number is GYM-88120.", 1, "fact"))
    assert is_standing(item("f", "The venue is the north hall.", 1, "fact", replaces="south hall"))
    assert is_standing(item("g", "I like the green one.", 1, "preference", pinned=True))
    assert not is_standing(item("h", "I like the green one.", 1, "preference"))
    assert not is_standing(item("i", "My sister loves hiking in the hills.", 1, "fact"))
    # What the assistant concluded is never the user's standing word.
    inferred = item("j", "Never schedule before 10.", 1, "inferred", source="assistant")
    assert not is_standing(inferred)
    assert not is_standing(item("k", "Never schedule before 10.", 1, "constraint", source="tool"))


def test_cap_incidental_keeps_order_and_every_standing_entry() -> None:
    entries = [
        (item("r", "Never use the red ink.", 1, "constraint"), 30),
        (item("p1", "I enjoy long walks.", 2, "preference"), 10),
        (item("p2", "I enjoy short naps too.", 3, "preference"), 10),
        (item("v", "The deadline is 3 June.", 4, "fact"), 12),
        (item("p3", "I enjoy quiet cafes.", 5, "preference"), 5),
    ]
    kept = cap_incidental(entries, lambda e: e[0], lambda e: e[1], 17)
    # p1 (11 with its newline) fits, p2 would pass 17, p3 (6) still fits after it.
    assert [e[0].id for e in kept] == ["r", "p1", "v", "p3"]
    assert [e[0].id for e in cap_incidental(entries, lambda e: e[0], lambda e: e[1], 0)] == [
        "r",
        "v",
    ]


def _block(params: FullParams) -> tuple[str, Any]:
    messages = [*chat(30), msg("user", "Can you plan my Saturday?")]
    inp = make(messages, 1600, items=_items())
    ctx = FullAssembler(params).assemble(inp)
    block = next(m["content"] for m in ctx.messages if m["content"].startswith(MEMORY_HEADER))
    return block, ctx


def test_plain_statements_take_at_most_their_share_of_the_block() -> None:
    params = FullParams.model_validate({"incidental_share": 0.1})
    block, ctx = _block(params)
    # Everything the user set or gave is on show...
    for _, text, _ in _RULES:
        assert text in block
    # ...and the statements about their week within their share.
    shown = [text for text in _CHATTER if text in block]
    history_budget = 1600 - count("You plan trips.") - count("Can you plan my Saturday?")
    assert sum(count(text) for text in shown) <= 0.1 * history_budget
    assert 0 < len(shown) < len(_CHATTER)
    left = {c.ref: c.reason for c in ctx.candidates if c.kind == "item" and c.decision != "kept"}
    assert left
    assert all(ref.startswith("c") for ref in left)
    assert set(left.values()) == {"over working-memory share"}
    # With a share large enough for all of them, the same block holds more.
    roomy, _ = _block(FullParams.model_validate({"incidental_share": 0.4}))
    assert sum(text in roomy for text in _CHATTER) > len(shown)
    assert count(roomy) > count(block)
