"""No evaluation text in the code: comments, strings and rule examples are our own words.

The scenario sets measure whether the rules generalise; a sentence copied from one of
them into a rule, a comment or a test measures nothing and hides the fit. This test
finds every run that a comment, a string literal or a data file under `policies/`,
`proxy/`, `tests/` (not `tests/golden/`, which records eval outputs on purpose) or
`bench/*.py` shares with a user turn of a scenario set: at least `CJK_RUN` CJK
characters (other characters in between, up to `CJK_GAP` of them, do not break a run)
or at least `LATIN_RUN` characters of other text, compared after NFKC, case folding
and whitespace folding. It uses n-gram hash sets, so it takes a few seconds.

Run `python -m tests.unit.test_no_eval_copies` for the full list of hits.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH_SCENARIOS = REPO / "bench" / "scenarios"
SHARED_SCENARIOS = REPO.parent / "shared" / "eval" / "scenarios"
# The held-out probe is read by nothing but its own evaluation run, this guard included:
# a guard that printed its sentences would leak them into whoever reads the report.
HELD_OUT = frozenset({"fresh14"})

CJK_RUN = 12
CJK_GAP = 8
LATIN_RUN = 40

SCANNED_DIRS = ("policies", "proxy", "tests")
SKIPPED_DIRS = (REPO / "tests" / "golden",)
TEXT_SUFFIXES = frozenset({".json", ".yaml", ".yml", ".txt", ".md", ".toml", ".jsonl"})
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
        or 0x3040 <= code <= 0x30FF
    )


def _fold(text: str) -> list[tuple[str, int]]:
    """Folded characters of `text`, each with its offset in `text`.

    NFKC and case folding per character (offsets stay exact); whitespace runs become
    one space, and a space next to a CJK character is dropped, since CJK writing puts
    none there and a quoted copy may add or lose one.
    """
    out: list[tuple[str, int]] = []
    pending_space = -1
    for offset, raw in enumerate(text):
        if raw.isspace():
            if pending_space < 0:
                pending_space = offset
            continue
        for ch in unicodedata.normalize("NFKC", raw).casefold().translate(_QUOTES):
            if ch.isspace():
                if pending_space < 0:
                    pending_space = offset
                continue
            if pending_space >= 0:
                if out and not _is_cjk(out[-1][0]) and not _is_cjk(ch):
                    out.append((" ", pending_space))
                pending_space = -1
            out.append((ch, offset))
    return out


def _cjk_segments(folded: list[tuple[str, int]]) -> Iterator[list[tuple[str, int]]]:
    """Runs of CJK characters, bridging gaps of at most `CJK_GAP` other characters."""
    segment: list[tuple[str, int]] = []
    gap = 0
    for ch, offset in folded:
        if _is_cjk(ch):
            segment.append((ch, offset))
            gap = 0
        else:
            gap += 1
            if gap > CJK_GAP and segment:
                yield segment
                segment = []
    if segment:
        yield segment


def _latin_segments(folded: list[tuple[str, int]]) -> Iterator[list[tuple[str, int]]]:
    """Runs of text with no CJK character in them."""
    segment: list[tuple[str, int]] = []
    for ch, offset in folded:
        if _is_cjk(ch):
            if segment:
                yield segment
            segment = []
        else:
            segment.append((ch, offset))
    if segment:
        yield segment


@dataclass(frozen=True)
class Corpus:
    cjk: frozenset[str]
    latin: frozenset[str]
    turns: int


def _windows(segment: list[tuple[str, int]], size: int) -> Iterator[str]:
    chars = "".join(ch for ch, _ in segment)
    for start in range(len(chars) - size + 1):
        yield chars[start : start + size]


def _user_turns(path: Path) -> Iterator[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    for message in data.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]
    final = data.get("final_user")
    if isinstance(final, str):
        yield final


def scenario_files(include_shared: bool = True) -> list[Path]:
    files = [
        path
        for path in sorted(BENCH_SCENARIOS.rglob("*.json"))
        if not HELD_OUT.intersection(path.relative_to(BENCH_SCENARIOS).parts)
    ]
    if include_shared and SHARED_SCENARIOS.is_dir():
        files += sorted(SHARED_SCENARIOS.glob("*.json"))
    return files


def build_corpus(files: list[Path]) -> Corpus:
    cjk: set[str] = set()
    latin: set[str] = set()
    turns = 0
    for path in files:
        for turn in _user_turns(path):
            turns += 1
            folded = _fold(turn)
            for segment in _cjk_segments(folded):
                cjk.update(_windows(segment, CJK_RUN))
            for segment in _latin_segments(folded):
                latin.update(_windows(segment, LATIN_RUN))
    return Corpus(frozenset(cjk), frozenset(latin), turns)


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    run: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.run!r}"


def _shared_runs(
    segment: list[tuple[str, int]], size: int, grams: frozenset[str]
) -> Iterator[tuple[str, int]]:
    """Maximal runs of `segment` made of windows found in `grams`: (run, first offset)."""
    chars = "".join(ch for ch, _ in segment)
    start = end = -1
    for i in range(len(chars) - size + 1):
        if chars[i : i + size] in grams:
            if start >= 0 and i <= end:
                end = i + size
            else:
                if start >= 0:
                    yield chars[start:end], segment[start][1]
                start, end = i, i + size
    if start >= 0:
        yield chars[start:end], segment[start][1]


def find_runs(text: str, corpus: Corpus) -> Iterator[tuple[str, int]]:
    folded = _fold(text)
    for segment in _cjk_segments(folded):
        yield from _shared_runs(segment, CJK_RUN, corpus.cjk)
    for segment in _latin_segments(folded):
        yield from _shared_runs(segment, LATIN_RUN, corpus.latin)


def _python_texts(source: str) -> Iterator[tuple[str, int]]:
    """Comment blocks and string literals of a module, each with its first line."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value, node.lineno
    block: list[str] = []
    first = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if block and line == last + 1:
            block.append(token.string.lstrip("#"))
        else:
            if block:
                yield "\n".join(block), first
            block, first = [token.string.lstrip("#")], line
        last = line
    if block:
        yield "\n".join(block), first


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED_DIRS:
        for path in sorted((REPO / name).rglob("*")):
            if not path.is_file() or any(path.is_relative_to(d) for d in SKIPPED_DIRS):
                continue
            if "__pycache__" in path.parts:
                continue
            if path.suffix == ".py" or path.suffix in TEXT_SUFFIXES:
                files.append(path)
    files += sorted((REPO / "bench").glob("*.py"))
    return files


def find_hits(corpus: Corpus, files: list[Path] | None = None) -> list[Hit]:
    hits: list[Hit] = []
    for path in files if files is not None else scanned_files():
        source = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO))
        texts = _python_texts(source) if path.suffix == ".py" else iter([(source, 1)])
        for text, first_line in texts:
            for run, offset in find_runs(text, corpus):
                hits.append(Hit(rel, first_line + text.count("\n", 0, offset), run))
    return sorted(set(hits), key=lambda hit: (hit.path, hit.line, hit.run))


def _report(hits: list[Hit], limit: int = 60) -> str:
    shown = "\n".join(str(hit) for hit in hits[:limit])
    more = f"\n… and {len(hits) - limit} more" if len(hits) > limit else ""
    return f"{len(hits)} run(s) shared with scenario user turns:\n{shown}{more}"


def test_code_shares_no_run_with_bench_scenarios() -> None:
    corpus = build_corpus(scenario_files(include_shared=False))
    assert corpus.turns > 0
    hits = find_hits(corpus)
    assert not hits, _report(hits)


def test_code_shares_no_run_with_shared_eval_scenarios() -> None:
    if not SHARED_SCENARIOS.is_dir():
        pytest.skip(f"no shared evaluation set at {SHARED_SCENARIOS}")
    corpus = build_corpus(sorted(SHARED_SCENARIOS.glob("*.json")))
    assert corpus.turns > 0
    hits = find_hits(corpus)
    assert not hits, _report(hits)


# The detector itself, on sentences written for it.
_CORPUS_TURNS = [
    "我们打算把温室里的番茄苗在下个月初全部移栽到露天的菜园里",
    "The lighthouse keeper logs every passing ship in a green leather ledger.",
]


def _tiny_corpus() -> Corpus:
    cjk: set[str] = set()
    latin: set[str] = set()
    for turn in _CORPUS_TURNS:
        folded = _fold(turn)
        for segment in _cjk_segments(folded):
            cjk.update(_windows(segment, CJK_RUN))
        for segment in _latin_segments(folded):
            latin.update(_windows(segment, LATIN_RUN))
    return Corpus(frozenset(cjk), frozenset(latin), len(_CORPUS_TURNS))


@pytest.mark.parametrize(
    "text",
    [
        "注释：温室里的番茄苗在下个月初全部移栽",
        "# THE LIGHTHOUSE keeper   logs every passing ship in a green",
        "温室里的番茄苗 在 下个月初全部",  # spaces a copy adds do not hide it
        "温室里的番茄苗(\\d+)在下个月初全部",  # nor a short regex fragment inside it
    ],
)
def test_detector_finds_a_copied_run(text: str) -> None:
    assert list(find_runs(text, _tiny_corpus()))


@pytest.mark.parametrize(
    "text",
    [
        "温室里的番茄苗在下个",  # too short a CJK run
        "the lighthouse keeper logs every ship",  # too short a Latin run
        "温室里的番茄苗 and then a long aside in another language 在下个月初全部",
        "我们打算把阳台上的辣椒苗在下个月初全部搬进屋里",
    ],
)
def test_detector_ignores_short_or_broken_runs(text: str) -> None:
    assert not list(find_runs(text, _tiny_corpus()))


if __name__ == "__main__":
    for label, include in (("bench/scenarios", False), ("shared eval", True)):
        files = (
            scenario_files(include_shared=False)
            if not include
            else sorted(SHARED_SCENARIOS.glob("*.json"))
        )
        found = find_hits(build_corpus(files))
        print(f"== {label}: {len(found)} hits")
        for hit in found:
            print(hit)
