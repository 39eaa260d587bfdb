"""TokenCounter's cache: bounded in entries and in bytes, counts unchanged."""

from __future__ import annotations

import sys

from proxy.tokens import TokenCounter


def test_the_cache_never_holds_more_than_cache_size_texts() -> None:
    counter = TokenCounter(cache_size=20)
    for i in range(200):
        counter(f"the greenhouse sensor {i} reported a humidity of {i % 90} percent")
        assert counter.cached()[0] <= 20
    assert counter.cached()[0] == 20


def test_the_cache_never_holds_more_than_cache_bytes_of_text() -> None:
    budget = 4096
    counter = TokenCounter(cache_bytes=budget)
    texts = [f"shelf {i}: " + "spare bolts and washers " * (i % 7 + 1) for i in range(300)]
    for text in texts:
        counter(text)
        texts_held, held = counter.cached()
        assert held <= budget
        assert texts_held >= 1
    # The count it keeps is the bytes of the texts it keeps.
    kept = list(counter._cache)
    assert held == sum(sys.getsizeof(t) for t in kept)


def test_a_text_over_the_whole_budget_is_counted_but_not_kept() -> None:
    small = TokenCounter(cache_bytes=1000)
    plain = TokenCounter()
    long_text = "the ferry timetable changes on the first of the month " * 100
    assert small(long_text) == plain(long_text) > 0
    assert small.cached() == (0, 0)
    assert small("a short note") == plain("a short note")
    assert small.cached()[0] == 1


def test_counts_are_the_same_from_the_cache_and_without_it() -> None:
    counter = TokenCounter(cache_size=3)
    texts = [f"invoice {i} is due on day {i}" for i in range(10)]
    first = [counter(t) for t in texts]
    again = [counter(t) for t in reversed(texts)]
    assert again == list(reversed(first))
