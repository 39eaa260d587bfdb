"""The backbone (`policies.assemble.backbone`, `policies.assemble.digest`): the user's words
verbatim, older replies digested, tool results cut to key fields, revisions annotated in place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from policies.assemble.assembly import BackboneAssembler, UserTurnsAssembler
from policies.assemble.backbone import NOTE_CHARS, NOTE_PREFIX, WITHDRAWN_NOTE, BackboneParams
from policies.assemble.backbone.overflow import LEAN_DIGEST, explanatory
from policies.assemble.backbone.units import Unit, split_units
from policies.assemble.digest import CUES, digest_assistant
from policies.memory.stale_values import REPLACED_VALUE
from policies.types import MemoryItem
from tests.unit.test_assembly import call, count, make_input, turns_from

SYSTEM = {"role": "system", "content": "You help plan small events."}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


LONG_REPLY = (
    "That is a lovely idea and there is a lot to think about. "
    "Weather can change quickly in the hills, so pack layers. "
    "Many groups enjoy a short walk before lunch. "
) * 6


@pytest.mark.parametrize("cue", [*CUES, REPLACED_VALUE], ids=lambda c: c.name)
def test_every_cue_matches_its_examples_and_rejects_its_look_alikes(cue: Any) -> None:
    for text in cue.matches:
        assert cue.pattern.search(text), (cue.name, text)
    for text in cue.rejects:
        assert not cue.pattern.search(text), (cue.name, text)


@pytest.mark.parametrize(
    ("reply", "pick", "option"),
    [
        (
            "Three venues fit:\n1. **Maple Barn** — rustic, 80 seats\n2. **Quay Loft** — "
            "river view, 60 seats\n3. **Old Mill** — garden, 100 seats\nTell me which one.",
            "Let's go with the second one.",
            "Quay Loft",
        ),
        (
            "有三个场地可选：\n1. 枫林小院：可坐八十人\n2. 江畔阁楼：能看江景\n"
            "3. 老磨坊：带花园\n你看选哪个？",
            "就第三个吧，花园好。",
            "老磨坊",
        ),
    ],
)
def test_a_digest_keeps_the_list_a_later_pick_refers_to(reply: str, pick: str, option: str) -> None:
    digest = digest_assistant(reply, pick, 2, 240)
    assert option in digest
    # Without a pick the list is not kept for its own sake.
    assert "Options offered" not in digest_assistant(reply, "How is the weather there?", 2, 240)


@pytest.mark.parametrize(
    ("reply", "accept", "value"),
    [
        (
            "Catering is $1,800 and the room is $650. With the $120 cleaning fee that comes "
            "to $2,570 in all. Let me know if you want a cheaper menu.",
            "Sounds good, let's lock that in.",
            "$2,570",
        ),
        (
            "场地1200元，餐费每人85元，二十人就是1700元。合计2900元，定金付了500元以后还剩2400元。",
            "好的，就按这个来。",
            "2400元",
        ),
    ],
)
def test_a_digest_keeps_a_derived_value_the_user_accepted(
    reply: str, accept: str, value: str
) -> None:
    assert value in digest_assistant(reply, accept, 2, 240)


def _item(  # ordinals count the system prompt: the first user turn is 1
    iid: str, ordinal: int, value: str, status: str = "active", by: str | None = None
) -> MemoryItem:
    return MemoryItem(
        id=iid,
        type="constraint",
        slot="headcount",
        value=value,
        source="user",
        source_ordinal=ordinal,
        status=status,  # type: ignore[arg-type]
        superseded_by=by,
    )


def _changed(old_at: int, old: str, new_at: int, new: str) -> list[MemoryItem]:
    """A statement and the later one that replaced it."""
    return [_item("a", old_at, old, "superseded", by="b"), _item("b", new_at, new)]


def _proxy_text(sent: list[dict[str, Any]], client: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The forwarded messages the client did not send (the proxy's own text)."""
    return [m for m in sent if m not in client]


def _conversation(revision: str, withdrawal: str) -> list[dict[str, Any]]:
    return [
        SYSTEM,
        user("We are planning a retreat for about 40 people in the hills."),
        assistant(LONG_REPLY),
        user("Always answer in short bullet points, please."),
        assistant(LONG_REPLY),
        user(revision),
        assistant(LONG_REPLY),
        user(withdrawal),
        assistant(LONG_REPLY),
        user("What should we pack?"),
    ]


def test_a_changed_statement_is_annotated_where_it_stands_and_stays_verbatim() -> None:
    messages = _conversation(
        "Headcount update: we are 46 now.", "You can drop the bullet points from now on."
    )
    items = [
        _item("a", 1, "about 40 people", "superseded", by="b"),
        _item("b", 5, "we are 46 now"),
        _item("c", 3, "Always answer in short bullet points", "revoked"),
    ]
    inp = make_input(messages, 260, items=items, summary_upto=8)
    ctx = BackboneAssembler().assemble(inp)
    sent = ctx.messages
    assert ctx.tokens <= 260
    # The user's own words are forwarded as the client sent them.
    assert messages[1] in sent
    assert messages[5] in sent
    after_first = sent[sent.index(messages[1]) + 1]
    assert after_first["role"] == "assistant"
    assert f"{NOTE_PREFIX}(later changed: we are 46 now)" in after_first["content"]
    assert "40" not in after_first["content"]  # the note names the new value, not the old
    after_rule = sent[sent.index(messages[3]) + 1]
    assert WITHDRAWN_NOTE in after_rule["content"]
    # Older replies are digested, not forwarded whole.
    assert all(m.get("content") != LONG_REPLY for m in sent)


def test_chinese_statements_are_annotated_too() -> None:
    messages = [
        SYSTEM,
        user("周末团建一共三十人，预算一万五。"),
        assistant(LONG_REPLY),
        user("人数有变，改成三十六人。"),
        assistant(LONG_REPLY),
        user("出发前要准备什么？"),
    ]
    items = _changed(1, "一共三十人", 3, "改成三十六人")
    ctx = BackboneAssembler().assemble(make_input(messages, 200, items=items, summary_upto=4))
    note = ctx.messages[ctx.messages.index(messages[1]) + 1]["content"]
    assert "(later changed: 改成三十六人)" in note
    assert messages[3] in ctx.messages


def test_a_newer_tool_result_about_the_same_object_replaces_the_older() -> None:
    lookup = '{"booking": "R-1"}'
    messages = [
        SYSTEM,
        user("Check my booking please."),
        call("c1", args=lookup),
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps(
                {"booking_id": "R-1", "status": "pending", "date": "2026-03-02", "notes": "x" * 400}
            ),
        },
        assistant("It is pending for March 2."),
        user("And now?"),
        call("c2", args=lookup),
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": json.dumps(
                {"booking_id": "R-1", "status": "confirmed", "date": "2026-03-02"}
            ),
        },
        assistant("It is confirmed."),
        user("Great, what time should I arrive?"),
    ]
    kept = BackboneParams(lean_digests=False)
    ctx = BackboneAssembler(kept).assemble(make_input(messages, 170, summary_upto=9))
    tools = [m for m in ctx.messages if m["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == ["c1", "c2"]
    assert "replaced by a later result" in tools[0]["content"]
    assert "status=confirmed" in tools[1]["content"]
    assert "x" * 50 not in tools[1]["content"]  # key fields only
    # With `lean_digests` (the default) the reply about the older result goes
    # at once, and with it the round whose every result has a newer one.
    lean = BackboneAssembler().assemble(make_input(messages, 170, summary_upto=9))
    tools = [m for m in lean.messages if m["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == ["c2"]
    assert "status=confirmed" in tools[0]["content"]


def test_roles_stay_valid_and_tool_pairs_atomic_under_pressure() -> None:
    messages = [SYSTEM]
    for i in range(12):
        messages += [
            user(f"Step {i}: the room for group {i} needs {10 + i} chairs."),
            call(f"c{i}", args=json.dumps({"room": i})),
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": json.dumps({"room": i, "free": True}),
            },
            assistant(LONG_REPLY),
        ]
    messages.append(user("Summarise the chairs."))
    for budget in (150, 300, 600):
        ctx = BackboneAssembler(BackboneParams()).assemble(
            make_input(messages, budget, summary_upto=len(messages) - 1)
        )
        assert ctx.tokens <= budget
        sent = ctx.messages
        assert sent[0] == SYSTEM
        assert sent[-1] == messages[-1]
        for i, m in enumerate(sent):
            if m["role"] == "tool":
                # A result always follows its call (or another result of it).
                prev = next(p for p in reversed(sent[:i]) if p["role"] != "tool")
                assert m["tool_call_id"] in {c["id"] for c in prev.get("tool_calls") or ()}
            if m.get("tool_calls"):
                answered = {t["tool_call_id"] for t in sent[i + 1 :] if t["role"] == "tool"}
                assert {c["id"] for c in m["tool_calls"]} <= answered


def test_user_turns_baseline_keeps_only_the_users_words() -> None:
    messages = _conversation("We are 46 now.", "No more bullet points.")
    ctx = UserTurnsAssembler().assemble(make_input(messages, 120))
    assert all(m["role"] in ("system", "user") for m in ctx.messages)
    assert ctx.tokens <= 120
    assert ctx.messages[-1] == messages[-1]


def test_a_digest_drops_what_the_assistant_said_about_a_changed_value() -> None:
    messages = [
        SYSTEM,
        user("The dinner is for 12 guests."),
        assistant("Great, a table for 12 guests works well in a private room."),
        user("Actually we are 15 guests now."),
        assistant(LONG_REPLY),
        user("Which wine?"),
    ]
    items = _changed(1, "12 guests", 3, "15 guests")
    ctx = BackboneAssembler().assemble(make_input(messages, 200, items=items, summary_upto=4))
    generated = _proxy_text(ctx.messages, messages)
    assert not any("12 guests" in str(m.get("content")) for m in generated)


def _fill(n: int) -> str:
    return " ".join(["Our cousins arrive from the coast on the early ferry."] * n)


def test_exchanges_that_stated_nothing_standing_go_before_older_ones_that_did() -> None:
    # The newest turn with a standing requirement outlives an older aside that
    # the engine found nothing in, although whole exchanges go oldest first.
    messages = [
        SYSTEM,
        user("We are planning a retreat for about 40 people in the hills."),
        assistant(LONG_REPLY),
        user("The venue must have step-free access for my grandmother."),
        assistant(LONG_REPLY),
        user(_fill(6)),
        assistant(LONG_REPLY),
        user("Budget is 9,000 euros for everything."),
        assistant(LONG_REPLY),
        user("What should we pack?"),
    ]
    items = [
        _item("a", 1, "about 40 people"),
        _item("b", 3, "step-free access"),
        _item("c", 7, "Budget is 9,000 euros"),
    ]
    inp = make_input(messages, 150, items=items, summary_upto=9)
    sent = BackboneAssembler().assemble(inp).messages
    assert messages[3] in sent
    assert messages[7] in sent
    assert messages[5] not in sent


def test_a_turn_stating_a_changed_value_is_never_condensed_nor_recalled() -> None:
    # Condensed or recalled text is the proxy's: it would state the old value.
    old = "Dinner for 40 on Friday at the lakeside hall. " + _fill(4)
    messages = [
        SYSTEM,
        user("Start with the venue list."),
        assistant(LONG_REPLY),
        user(old),
        assistant(LONG_REPLY),
        user("Change of plan: dinner is for 52 people now."),
        assistant(LONG_REPLY),
        user("What should we pack?"),
    ]
    items = _changed(3, "Dinner for 40 on Friday", 5, "dinner is for 52 people now")
    for budget in (90, 120, 160, 220):
        ctx = BackboneAssembler().assemble(
            make_input(messages, budget, items=items, summary_upto=7)
        )
        generated = _proxy_text(ctx.messages, messages)
        assert not any("for 40" in str(m.get("content")) for m in generated), budget


def test_a_tool_call_naming_a_changed_value_stays_as_the_client_sent_it() -> None:
    args = json.dumps({"room": "Cedar", "guests": 40, "notes": "window seats please " * 8})
    messages = [
        SYSTEM,
        user("Reserve the Cedar room for 40 guests."),
        call("c1", args=args),
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "held", "ref": "H-7"}'},
        assistant("Held under H-7."),
        user("We are 48 guests now, not 40."),
        assistant(LONG_REPLY),
        user("What time is check-in?"),
    ]
    items = _changed(1, "Cedar room for 40 guests", 5, "We are 48 guests now")
    ctx = BackboneAssembler().assemble(make_input(messages, 250, items=items, summary_upto=7))
    assert all(m.get("content") != LONG_REPLY for m in ctx.messages)  # under pressure
    assert messages[2] in ctx.messages  # the whole call, arguments unclipped
    # Without a changed value in it, an older call's long arguments are clipped.
    plain = [*messages[:5], user("Lovely, thanks."), *messages[6:]]
    ctx = BackboneAssembler().assemble(
        make_input(plain, 250, items=[_item("a", 1, "Cedar room for 40 guests")], summary_upto=7)
    )
    assert messages[2] not in ctx.messages
    assert any(m.get("tool_calls") for m in ctx.messages)


def _frozen(ctx: Any, upto: dict[str, Any]) -> list[dict[str, Any]]:
    """The forwarded messages before the client's message `upto`."""
    return ctx.messages[: ctx.messages.index(upto)]


def _revised_in_the_input(first: str, revision: str, old: str, new: str) -> tuple[Any, ...]:
    """Two requests in a row: the conversation with `first` stating `old`, then the
    same with the next exchange and `revision` (which makes it `new`) as the input.
    The messages of the second, and both contexts (the second laid out after the first)."""
    asked = [*_conversation("Any tips for the drive up?", "Sounds good."), assistant(LONG_REPLY)]
    asked = [*asked, user(revision)]
    asked[1] = user(first)
    a = BackboneAssembler()
    ctx1 = a.assemble(make_input(asked[:-2], 900, items=[_item("a", 1, old)], summary_upto=8))
    again = make_input(
        asked,
        900,
        items=_changed(1, old, len(asked) - 1, new),
        summary_upto=8,
        backbone_levels=ctx1.backbone_levels or {},
        backbone_shown=ctx1.backbone_shown or {},
    )
    return asked, ctx1, a.assemble(again)


@pytest.mark.parametrize(
    ("first", "revision", "old", "new"),
    [
        (
            "We are planning a retreat for about 40 people in the hills.",
            "Headcount update: we are 46 now.",
            "about 40 people",
            "we are 46 now",
        ),
        (
            "周末团建一共三十人，预算一万五。",
            "人数有变，改成三十六人。",
            "一共三十人",
            "改成三十六人",
        ),
    ],
)
def test_an_annotation_waits_until_the_prompt_changes_at_its_statement(
    first: str, revision: str, old: str, new: str
) -> None:
    asked, ctx1, ctx2 = _revised_in_the_input(first, revision, old, new)
    # The frozen part goes out as before, byte for byte: the words that changed
    # the value are right there in the current input.
    assert _frozen(ctx2, asked[9]) == _frozen(ctx1, asked[9])
    assert all(new not in str(m.get("content")) for m in _frozen(ctx2, asked[9]))
    assert asked[-1] in ctx2.messages
    # Laid out afresh (no previous request), the statement is annotated where it stands.
    items = _changed(1, old, len(asked) - 1, new)
    fresh = BackboneAssembler().assemble(make_input(asked, 900, items=items, summary_upto=8))
    after_first = fresh.messages[fresh.messages.index(asked[1]) + 1]
    assert f"(later changed: {new})" in after_first["content"]


def test_an_annotation_whose_value_the_users_words_do_not_say_is_shown_at_once() -> None:
    # The new value is worked out ("six more"): only the annotation says it.
    asked, _, ctx2 = _revised_in_the_input(
        "We are planning a retreat for about 40 people in the hills.",
        "Add six more people to the headcount.",
        "about 40",
        "46 people (40 + 6)",
    )
    after_first = ctx2.messages[ctx2.messages.index(asked[1]) + 1]
    assert "(later changed: 46 people (40 + 6))" in after_first["content"]


@pytest.mark.parametrize(
    ("old", "revision", "clause", "reason"),
    [
        (
            "about 40 people",
            "The caterer called back and the old quote had a typo in it; "
            "we are 46 now, with the photographer and the drivers.",
            "we are 46 now",
            "caterer",
        ),
        (
            "一共三十人",
            "刚才财务那边来电话说名单统计漏了两个部门，人数改成三十六人，车也要换大的。",
            "人数改成三十六人",
            "财务",
        ),
    ],
)
def test_an_annotation_holds_the_clause_with_the_new_value_not_the_whole_statement(
    old: str, revision: str, clause: str, reason: str
) -> None:
    messages = _conversation(revision, "Thanks, that helps.")
    items = _changed(1, old, 5, revision)
    ctx = BackboneAssembler().assemble(make_input(messages, 260, items=items, summary_upto=8))
    note = ctx.messages[ctx.messages.index(messages[1]) + 1]["content"]
    assert clause in note
    # The rest of the later statement (why it changed) is not repeated.
    assert reason not in note
    assert len(note.splitlines()[0]) <= len(NOTE_PREFIX) + len("(later changed: )") + NOTE_CHARS


@pytest.mark.parametrize(
    ("said", "old", "new"),
    [
        ("We need 12 tables, no wait, 14 tables for the dinner.", "12 tables", "14 tables"),
        ("晚宴要订十二桌，不对，是十四桌。", "十二桌", "是十四桌"),
    ],
)
def test_a_statement_corrected_in_its_own_message_is_not_annotated(
    said: str, old: str, new: str
) -> None:
    messages = _conversation("Any tips for the drive up?", "Sounds good.")
    messages[1] = user(said)
    items = _changed(1, old, 1, new)
    ctx = BackboneAssembler().assemble(make_input(messages, 260, items=items, summary_upto=8))
    assert messages[1] in ctx.messages
    # The user's own words already say which value stands.
    assert all("later changed" not in str(m.get("content")) for m in ctx.messages)


def test_a_worked_out_value_is_annotated_whole() -> None:
    messages = _conversation(
        "The caterer called back about the quote; add six more people to the headcount.",
        "Thanks, that helps.",
    )
    # The engine's own text: how the new value follows from what the user said.
    worked_out = 'we are 46 people (40 + 6: "add six more people to the headcount")'
    items = _changed(1, "about 40 people", 5, worked_out)
    ctx = BackboneAssembler().assemble(make_input(messages, 260, items=items, summary_upto=8))
    note = ctx.messages[ctx.messages.index(messages[1]) + 1]["content"]
    assert f"(later changed: {worked_out})" in note


def _long_opening(opening: str, later: list[str], question: str) -> list[dict[str, Any]]:
    messages = [SYSTEM, user(opening), assistant(LONG_REPLY)]
    for text in later:
        messages += [user(text), assistant(LONG_REPLY)]
    return [*messages, user(question)]


@pytest.mark.parametrize(
    ("opening", "later", "question", "budget"),
    [
        (
            "Hello! I keep bees on two allotments at the edge of town and sell the honey "
            "at a Saturday market stall; this year I want to label every jar properly, "
            "track which hive each batch came from and price the spring and summer "
            "harvests differently, because the spring honey sets hard within weeks.",
            [
                "Labels must show the allotment name, not the hive number.",
                "Spring jars are 8 pounds each now, summer ones stay at 6.",
                "Print the labels on kraft paper, never on glossy stock.",
            ],
            "Draft the label text, please.",
            120,
        ),
        (
            "你好，我在城郊两块菜地上养了十几箱蜜蜂，周六在集市摆摊卖蜂蜜。今年想把每一罐都"
            "贴上规范的标签，记录每批蜜来自哪一箱，还要把春蜜和夏蜜分开定价，因为春蜜放几周"
            "就会结晶，顾客总以为是掺了糖，每次都要解释半天，很麻烦。",
            [
                "标签上写菜地的名字，不要写蜂箱编号。",
                "春蜜现在每罐卖60元，夏蜜还是45元。",
                "标签要印在牛皮纸上，不要用亮面纸。",
            ],
            "帮我拟一下标签上的文字。",
            60,
        ),
    ],
)
def test_a_long_opening_at_a_small_budget_goes_before_the_turns_that_came_after_it(
    opening: str, later: list[str], question: str, budget: int
) -> None:
    messages = _long_opening(opening, later, question)
    items = [_item(chr(ord("a") + i), 3 + 2 * i, text) for i, text in enumerate(later)]
    upto = len(messages) - 1
    inp = make_input(messages, budget, items=items, summary_upto=upto)
    sent = BackboneAssembler().assemble(inp).messages
    # The opening takes more than the share of the room it may hold on to:
    # it goes first, and every later statement stays in the user's words.
    assert messages[1] not in sent
    assert all(user(text) in sent for text in later)
    # Always kept last, it stays, and the oldest later statement goes for it.
    kept_last = BackboneAssembler(BackboneParams(first_keep_share=1.0)).assemble(inp).messages
    assert messages[1] in kept_last
    assert user(later[0]) not in kept_last


def _side_chat() -> list[dict[str, Any]]:
    return [
        SYSTEM,
        user("We are planning a picnic for the chess club next month."),
        assistant("A shaded park works best. Riverside Green has tables for 40 people."),
        user("We need tables for 25 people and some shade in the afternoon."),
        assistant("Shade matters in July. The hardware store rents pop-up tents for $35 a day."),
        # The user repeats the price: the reply holds no figure of its own.
        user("Anyway, $35 is no problem. Will it be warm enough in the park by then?"),
        assistant("Great, I'll hold Riverside Green for the second Saturday. " * 3),
        user("What games should we bring? Something for twelve players. " * 2),
        assistant("Bring two travel chess sets, a frisbee and a deck of cards. " * 3),
        user("And snacks?"),
    ]


def test_lean_digests_leave_out_an_unreferenced_reply_while_there_is_room() -> None:
    inp = make_input(_side_chat(), 220, summary_upto=7)
    kept = BackboneAssembler(BackboneParams(lean_digests=False)).assemble(inp)
    lean = BackboneAssembler(BackboneParams()).assemble(
        make_input(_side_chat(), 220, summary_upto=7)
    )
    assert "pop-up tents" in "\n".join(str(m["content"]) for m in kept.messages)
    lean_text = "\n".join(str(m["content"]) for m in lean.messages)
    assert "pop-up tents" not in lean_text
    assert lean.tokens < kept.tokens <= 220
    # The record says which option left the reply out, not an overflow.
    assert any(c.reason == LEAN_DIGEST for c in lean.candidates)
    assert not any(c.reason == LEAN_DIGEST for c in kept.candidates)
    # The user's own words stay verbatim either way.
    assert "We are planning a picnic for the chess club next month." in lean_text
    assert "We need tables for 25 people and some shade in the afternoon." in lean_text


def _alternating(lines: list[str]) -> list[dict[str, Any]]:
    roles = [user, assistant]
    return [SYSTEM, *(roles[i % 2](text) for i, text in enumerate(lines))]


# A chat between two people replayed with one of them as the assistant: both
# sides' turns are of a length, each stating their own facts.
_TWO_PEOPLE = {
    "en": [
        "I started pottery classes on Tuesday evenings this spring.",
        "Nice, I joined a choir at the library around the same time.",
        "My teacher says my bowls are finally even. I am proud of that.",
        "My sister came over from the coast and stayed with me the whole week.",
        "Did she like the city? I have never been there myself.",
    ],
    "zh": [
        "我今年春天开始每周二晚上去上陶艺课。",
        "真好，我差不多同时在图书馆加入了合唱团。",
        "老师说我做的碗终于不歪了，我挺得意的。",
        "我姐姐从海边过来，在我这儿住了整整一个星期。",
        "她喜欢这座城市吗？我自己还没去过。",
    ],
}
# An assistant that explains: its replies are several times the user's turns.
_EXPLAINING = {
    "en": [
        "Which glaze should I use for mugs that go in the dishwasher?",
        "For dishwasher-safe mugs pick a glaze rated food-safe at your kiln's cone. "
        "Stoneware glazes fired to maturity hold up best; avoid matte glazes on the "
        "inside, as they stain and are harder to clean. Test a tile first.",
        "And for the outside?",
    ],
    "zh": [
        "放洗碗机的杯子用哪种釉好？",
        "要放洗碗机的杯子，选在你窑温下烧成后标明食品安全的釉。烧到成熟温度的炻器釉"
        "最耐用；杯子内侧别用哑光釉，容易染色也难清洗。先烧一块试片看看。",
        "那外侧呢？",
    ],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lean_digests_apply_only_where_the_assistant_explains(lang: str) -> None:
    # Between two people the "assistant" states facts a later question asks
    # about; nothing marks them as built on, yet they are no explanation to
    # digest away (`lean_min_reply_ratio`).
    def units(lines: list[str]) -> list[Unit]:
        return split_units(turns_from(_alternating(lines), count)[1:])

    assert not explanatory(units(_TWO_PEOPLE[lang]), BackboneParams().lean_min_reply_ratio)
    assert explanatory(units(_EXPLAINING[lang]), BackboneParams().lean_min_reply_ratio)


def test_lean_digests_stay_off_below_the_reply_ratio() -> None:
    # Where the replies are not the longer side by the ratio, the frozen part
    # keeps them as with lean_digests off.
    inp = make_input(_side_chat(), 220, summary_upto=7)
    out = BackboneAssembler(BackboneParams(lean_min_reply_ratio=50)).assemble(inp)
    assert "pop-up tents" in "\n".join(str(m["content"]) for m in out.messages)
    assert not any(c.reason == LEAN_DIGEST for c in out.candidates)


def _worked_out(reply: str, closing: str, figures: str) -> list[dict[str, Any]]:
    return [
        SYSTEM,
        user(figures),
        assistant(reply),
        user(closing),
        assistant("Noted, take your time with it. " * 12),
        user("Anything else I should know?"),
    ]


@pytest.mark.parametrize(
    ("figures", "reply", "closing", "worked_out"),
    [
        (
            "The hall charges 300 for the evening and cleaning is extra.",
            "Cleaning runs 80, so the evening comes to 380 in all.",
            "Let me think about the music first.",
            "380",
        ),
        (
            "场地一晚300块，打扫另算。",
            "打扫费是80块，所以一晚合计380块。",
            "我先想想音乐的事。",
            "380",
        ),
    ],
)
def test_lean_digests_keep_a_reply_holding_a_figure_no_user_turn_stated(
    figures: str, reply: str, closing: str, worked_out: str
) -> None:
    # The next turn does not take the figure up, but the user's words alone do
    # not carry it: the digest stays while there is room.
    ctx = BackboneAssembler().assemble(
        make_input(_worked_out(reply, closing, figures), 130, summary_upto=5)
    )
    shown = "\n".join(str(m["content"]) for m in ctx.messages if m["role"] == "assistant")
    assert worked_out in shown
    assert not any(c.reason == LEAN_DIGEST and c.ref.startswith("2") for c in ctx.candidates)


@pytest.mark.parametrize(
    ("figures", "reply", "closing"),
    [
        (
            "The hall charges 300 for the evening and cleaning is 80.",
            "So the evening is 300 plus 80 for cleaning.",
            "Let me think about the music first.",
        ),
        (
            "场地一晚300块，打扫80块。",
            "也就是场地300块，再加打扫80块。",
            "我先想想音乐的事。",
        ),
    ],
)
def test_lean_digests_leave_out_a_reply_that_only_repeats_the_users_figures(
    figures: str, reply: str, closing: str
) -> None:
    ctx = BackboneAssembler().assemble(
        make_input(_worked_out(reply, closing, figures), 130, summary_upto=5)
    )
    shown = "\n".join(str(m["content"]) for m in ctx.messages if m["role"] == "assistant")
    assert reply not in shown
    assert any(c.reason == LEAN_DIGEST for c in ctx.candidates)


def test_the_newest_frozen_reply_renders_the_same_bytes_on_the_next_request() -> None:
    # Everything frozen (the last exchange does not fit beside the rest): the
    # newest reply is followed by the current input, which the next request
    # holds as that exchange's next turn; what the reply keeps depends on it.
    options = "Here are three caterers that do launch parties in town:\n" + "\n".join(
        f"{i}. {name}, with a set menu and staff for the evening, booked two weeks ahead"
        for i, name in enumerate(("Olive Table", "Copper Pot", "Green Fork"), 1)
    )
    history = [
        SYSTEM,
        user("We are choosing a caterer for the launch party."),
        assistant("Happy to help with the launch party. " * 12),
        user("Which caterers would you suggest for 60 guests on a Friday evening?"),
        assistant(options),
    ]
    pick = user("Let's go with the second one.")
    now = BackboneAssembler().assemble(make_input([*history, pick], 130, summary_upto=5))
    later = BackboneAssembler().assemble(
        make_input([*history, pick, assistant("Done. " * 30), user("Menu?")], 130, summary_upto=7)
    )

    def options_reply(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            m for m in messages if m["role"] == "assistant" and "Copper Pot" in str(m["content"])
        ]

    assert len(options_reply(now.messages)) == 1
    assert options_reply(now.messages) == options_reply(later.messages)
