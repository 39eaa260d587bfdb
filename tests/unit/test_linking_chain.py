"""The linking chain: every decision names the linker that made it and why."""

from __future__ import annotations

from policies.extract.linking import LINKERS, PLACEMENT, decision_line, decisions, reason
from policies.types import Extraction, MemoryItem
from tests.unit.extraction_support import fold_messages

SYSTEM = "You help plan events."


def said(lines: list[str]) -> tuple[list[MemoryItem], list[Extraction]]:
    chat: list[tuple[str, str]] = []
    for text in lines:
        chat += [("user", text), ("assistant", "OK.")]
    return fold_messages(chat, SYSTEM)


def lines_of(extractions: list[Extraction]) -> list[str]:
    return [decision_line(d) for e in extractions for d in decisions(e.ops)]


def test_an_english_revision_names_its_linker_and_the_values_it_changed() -> None:
    items, extractions = said(
        [
            "We're hosting a dinner for 40 guests at the boathouse on Friday.",
            "Actually, make that 55 guests, the rowing club is coming too.",
        ]
    )
    assert lines_of(extractions) == [
        "revised by explicit: change cue on the same subject, 40 guests → 55 guests"
    ]
    old = next(it for it in items if it.status == "superseded")
    assert old.versions[-1].note.startswith(f"superseded by {old.superseded_by} (explicit: ")


def test_a_chinese_revision_and_revocation_are_named_in_the_record() -> None:
    items, extractions = said(
        [
            "年会定在城东的酒店，预计来80位同事。",
            "人数改成95位同事吧，销售部也来。",
            "以后每次回复都先列一个待办清单。",
            "不用再列待办清单了。",
        ]
    )
    assert lines_of(extractions) == [
        "revised by explicit: change cue on the same subject, 80位同事 → 95位同事",
        "revoked by revocation: the revocation names it: “待办清单”",
    ]
    revoked = next(it for it in items if it.status == "revoked")
    assert revoked.versions[-1].note.startswith("revoked (revocation: ")


def test_a_value_fixed_within_the_message_is_named_self_fix() -> None:
    _, english = said(
        ["The venue deposit is $800.", "The deposit is $800 — no wait, $850, I misread it."]
    )
    _, chinese = said(["押金是800元。", "押金800元——不对，是850元。"])
    assert lines_of(english) == ["revised by self_fix: fixed within the message, $800 → $850"]
    assert lines_of(chinese) == ["revised by self_fix: fixed within the message, 800元 → 850元"]


def test_a_bare_new_date_is_linked_by_value_alone() -> None:
    _, extractions = said(["婚礼定在5月18号。", "改到5月25号吧。"])
    assert lines_of(extractions) == ["revised by value_only: same kind of value, 5月18号 → 5月25号"]


def test_unrelated_statements_make_no_decision() -> None:
    # Look-alikes: two numbers of different things, no cue, no shared subject.
    _, extractions = said(["The hall seats 120 people.", "My flight lands at 7pm on Thursday."])
    assert lines_of(extractions) == []


def test_the_chain_is_in_one_explicit_order_and_every_linker_has_a_name() -> None:
    names = [step.linker.name for step in PLACEMENT]
    assert names == [
        "contrast", "explicit", "value_only", "complete", "correction", "implicit",
        "sole_rival", "weekday", "choice", "conflict",
    ]  # fmt: skip
    assert len(set(LINKERS)) == len(LINKERS)
    assert all(step.linker.phrase for step in PLACEMENT)


def test_a_reason_reads_the_values_or_else_the_shared_words() -> None:
    assert reason("same subject", "Book the lakeside venue", "Change the venue booking") == (
        "same subject: “venue, book”"
    )
    assert reason("same subject", "会场定在湖边的礼堂", "会场换到山上的礼堂") == (
        "same subject: “的礼堂, 会场”"
    )
    assert reason("nothing shared", "alpha", "omega") == "nothing shared"
