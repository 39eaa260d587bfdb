"""What a document must say is a requirement whoever the grammatical subject is:
"The lease has to state that pets are allowed", "the invoice needs to show the PO
number", "租房合同里得写明押金一个月", "收据上要注明付款方式". Our own sentences, and
look-alikes that must not trigger."""

from __future__ import annotations

from policies.extract.statements import read_statements
from policies.language.cues import read_cues
from policies.language.matching import key_terms

_TOPIC = key_terms("You help tenants and freelancers check leases, invoices and contracts.")


def test_what_a_document_must_say_en() -> None:
    assert read_cues("The lease has to state that pets are allowed.").constraint >= 3
    assert read_cues("Each invoice needs to show the PO number.").constraint >= 3


def test_what_a_document_must_say_zh() -> None:
    assert read_cues("租房合同里得写明押金只收一个月。").constraint >= 3
    assert read_cues("收据上要注明付款方式。").constraint >= 3


def test_it_is_kept_after_a_refusal_in_the_same_message() -> None:
    kept = [
        st.text
        for st in read_statements(
            "No, I won't sign a non-compete. The contract has to say I can take other"
            " clients, and they can't stop me from working for their competitors.",
            _TOPIC,
            opening=False,
        )
    ]
    assert any("other clients" in t for t in kept)


def test_look_alikes_are_no_document_rule() -> None:
    assert read_cues("It has to rain eventually.").constraint == 0
    # "show up" is arriving, not what a document shows
    assert read_cues("The vendors should show up at nine.").constraint == 0
    assert read_cues("我得写完这份报告才能睡。").constraint == 0
