"""The engine of the cue rules: a pattern in two scripts (`Lexicon`), each half
run only on text of its script, and a table of them by strength (`Table`);
both read, when named, from the rules kept as data
(`policies/rules/<lang>/<module>.yaml`) on first use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from policies import rulebook

_LATIN_RE = re.compile(r"[A-Za-z]")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=8192)
def scripts(text: str) -> tuple[bool, bool]:
    """(has Latin letters, has CJK characters)."""
    return bool(_LATIN_RE.search(text)), bool(_CJK_RE.search(text))


class Lexicon:
    """A cue pattern in two scripts; each half only runs on text of its script.

    Most sentences are in one language, so this halves the regex work; the
    English half is case-insensitive unless told otherwise. A named lexicon
    (`Lexicon.named`) is a rule kept as data in `policies/rules/<lang>/<module>.yaml`,
    read and compiled on first use.
    """

    __slots__ = ("_en", "_rule", "_zh")

    def __init__(self, en: str = "", zh: str = "", flags: int = re.IGNORECASE) -> None:
        self._rule: tuple[str, str] | None = None
        self._en = re.compile(en, flags) if en else None
        self._zh = re.compile(zh) if zh else None

    @classmethod
    def named(cls, module: str, name: str) -> Lexicon:
        """The rule `name` of `module`'s data files, loaded when first used."""
        lexicon = cls()
        lexicon._rule = (module, name)
        return lexicon

    def _load(self) -> None:
        if self._rule is not None:
            module, name = self._rule
            self._en = rulebook.compiled(module, "en", name)
            self._zh = rulebook.compiled(module, "zh", name)
            self._rule = None

    @property
    def en(self) -> re.Pattern[str] | None:
        self._load()
        return self._en

    @property
    def zh(self) -> re.Pattern[str] | None:
        self._load()
        return self._zh

    def search(self, text: str) -> re.Match[str] | None:
        if self._rule is not None:
            self._load()
        latin, cjk = scripts(text)
        found = self._en.search(text) if latin and self._en is not None else None
        if found is None and cjk and self._zh is not None:
            found = self._zh.search(text)
        return found

    def match(self, text: str) -> re.Match[str] | None:
        if self._rule is not None:
            self._load()
        latin, cjk = scripts(text)
        found = self._en.match(text) if latin and self._en is not None else None
        if found is None and cjk and self._zh is not None:
            found = self._zh.match(text)
        return found


class Table:
    """Cue rows by strength, strongest first: (weight, Lexicon) pairs.

    A named table (`Table.named`) is built from the rows kept as data
    (`policies/rules/<lang>/<module>.yaml`, rules with `table:` and `weight:`),
    on first use.
    """

    __slots__ = ("_named", "_rows")

    def __init__(self, rows: tuple[tuple[int, Lexicon], ...] = ()) -> None:
        self._rows = rows
        self._named: tuple[str, str] | None = None

    @classmethod
    def named(cls, module: str, name: str) -> Table:
        table = cls()
        table._named = (module, name)
        return table

    def _load(self) -> tuple[tuple[int, Lexicon], ...]:
        if self._named is not None:
            rows = rulebook.table_rows(*self._named)
            self._rows = _joined((weight, source) for weight, _lang, source in rows)
            self._named = None
        return self._rows

    def __iter__(self) -> Iterator[tuple[int, Lexicon]]:
        return iter(self._load())

    def __getitem__(self, index: int) -> tuple[int, Lexicon]:
        return self._load()[index]


def _joined(rows: Iterable[tuple[int, str]]) -> tuple[tuple[int, Lexicon], ...]:
    """Rows of one strength are joined into one alternation per script, strongest first."""
    by_weight: dict[int, tuple[list[str], list[str]]] = {}
    for weight, pattern in rows:
        en, zh = by_weight.setdefault(weight, ([], []))
        (zh if _CJK_RE.search(pattern) else en).append(f"(?:{pattern})")
    # Table patterns are written in lower case and run on lower-cased text
    # (see `cues._strength`): much faster than IGNORECASE on long alternations.
    return tuple(
        (weight, Lexicon("|".join(en), "|".join(zh), flags=0))
        for weight, (en, zh) in sorted(by_weight.items(), reverse=True)
    )
