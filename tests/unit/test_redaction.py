"""Secrets leave stored text as tokens of their own, never out of longer words."""

from __future__ import annotations

from proxy.redaction import redact_secrets, redact_text


def test_a_key_is_replaced_where_it_stands() -> None:
    text = 'key=sk-live-9f8e7d {"api_key": "sk-live-9f8e7d"} sk-live-9f8e7d.'
    out = redact_secrets(text, ["sk-live-9f8e7d"])
    assert "sk-live-9f8e7d" not in out
    assert out.count("[redacted]") == 3


def test_a_short_placeholder_key_leaves_longer_words_alone() -> None:
    text = "The evaluation rubric is in the medieval-history folder; key: eval"
    out = redact_secrets(text, ["eval"])
    assert "evaluation rubric" in out
    assert "medieval-history" in out
    assert out.endswith("key: [redacted]")


def test_keys_under_four_characters_are_not_searched() -> None:
    assert redact_secrets("abc and abc", ["abc"]) == "abc and abc"


def test_bearer_tokens_go_too() -> None:
    out = redact_text("Authorization: Bearer tok_123.abc-XYZ failed", [])
    assert out == "Authorization: Bearer [redacted] failed"


def test_bearer_in_any_case_and_none_left_alone() -> None:
    # The scan is skipped where the text cannot hold the word: every spelling of
    # it still goes, and a text without it comes back as it was.
    out = redact_text("header BEARER abc.DEF-1 and bEaReR\tzz_9 end", [])
    assert out == "header BEARER [redacted] and bEaReR\t[redacted] end"
    plain = "no token here: bear, rer, beaver ünïcödé"
    assert redact_text(plain, []) == plain
