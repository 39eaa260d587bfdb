"""The rule extractor's operations over every scenario set equal the golden corpus.

A failure prints which messages now add, supersede, revoke or flag something
else; if the change is meant, `python -m bench.golden --update` rewrites the
corpus and the commit shows its diff. Each set's decisions per linker
must match `tests/golden/linkers.json` too. The eval figures are checked by
`python -m bench.golden` (they take minutes), not here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from bench.extraction_check import token_counter
from bench.golden import (
    diff_lines,
    read_golden,
    read_linkers,
    scenario_sets,
    set_lines,
)

SETS = scenario_sets()


@pytest.fixture(scope="module")
def count() -> Callable[[str], int]:
    return token_counter()


@pytest.mark.parametrize("name", sorted(SETS))
def test_extraction_matches_golden(name: str, count: Callable[[str], int]) -> None:
    golden = read_golden(name)
    if not golden:
        pytest.skip(f"no golden file for {name} (python -m bench.golden --update)")
    counter = Counter[str]()
    lines, texts = set_lines(SETS[name], count, counter)
    diff = diff_lines(name, golden, lines, texts)
    assert not diff, "extraction differs from tests/golden:\n" + "\n".join(diff[:80])
    # The same decisions, made by the same linkers.
    assert dict(sorted(counter.items())) == read_linkers().get(name, {})


def test_every_set_has_a_golden_file() -> None:
    missing = [name for name in SETS if not read_golden(name)]
    assert not missing, f"no golden file for {missing}: python -m bench.golden --update"


def test_held_out_set_is_never_read() -> None:
    assert "fresh14" not in SETS
