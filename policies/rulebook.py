"""Named cue rules kept as data, one file per language and module.

`policies/rules/<lang>/<module>.yaml` maps a rule's name to its pattern and the
sentences it must and must not match:

    challenge:
      note: why the rule exists, in principle
      any:                      # branches, joined with "|" (or `pattern:` as one string)
        - '^why did you\\b'
      ignore_case: true         # default for en; zh has no case
      also: [accepted]          # other rules of the file appended as branches
      must: ['Why did you move the meeting?']
      must_not: ['Why is the sky blue?']

A rule may be a row of a weighted cue table (`table: directive`, `weight: 3`): the
rows of one weight are joined into one alternation per language, strongest first, and
run on lower-cased text, so their examples are lower-cased before matching. A
top-level `fragments:` mapping names pieces that patterns include as `{=name}`; a
fragment of another module's file of the same language is `{=module.name}` (the
number words of `values` in a rule of `relative`: `{=values.word_number}`), and code
that composes its own pattern from one reads its source with `fragment(module, lang,
name)`.
Code that runs one pattern over text of either script, and uses the match itself,
reads a rule's halves joined into one (`Joined`), in the order the code needs.

The examples are sentences written for the rule, never taken from an evaluation
set (`tests/unit/test_no_eval_copies.py` checks), and `tests/unit/test_rule_examples.py`
runs every one of them. Files are read on first use, not at import: importing a policy
module costs no I/O and no regex compilation.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

RULES_DIR = Path(__file__).with_name("rules")
LANGUAGES = ("en", "zh")


@dataclass(frozen=True, slots=True)
class Rule:
    """One named pattern of one language, with the examples that pin it down."""

    module: str
    lang: str
    name: str
    source: str
    ignore_case: bool
    must: tuple[str, ...]
    must_not: tuple[str, ...]
    note: str = ""
    table: str = ""  # the weighted cue table this rule is a row of, if any
    weight: int = 0

    def matches(self, text: str) -> bool:
        """Does the rule fire on `text`, read as the code reads it?"""
        return self.compile().search(text.lower() if self.table else text) is not None

    def compile(self) -> re.Pattern[str]:
        return re.compile(self.source, re.IGNORECASE if self.ignore_case else 0)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"{where}: expected a string or a list of strings")


_FRAGMENT = re.compile(r"\{=(?:(\w+)\.)?(\w+)\}")
_KEYS = frozenset(
    {"note", "any", "pattern", "ignore_case", "also", "must", "must_not", "table", "weight"}
)


def _source(
    entry: dict[str, Any], where: str, module: str, lang: str, local: dict[str, str]
) -> str:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping")
    if ("any" in entry) == ("pattern" in entry):
        raise ValueError(f"{where}: give exactly one of `any` and `pattern`")
    if "pattern" in entry:
        source = "".join(_strings(entry["pattern"], where))
    else:
        source = "|".join(_strings(entry["any"], where))

    def include(m: re.Match[str]) -> str:
        other, name = m.group(1), m.group(2)
        if other is None or other == module:
            if name not in local:
                raise ValueError(f"{where}: no fragment {name!r} above it in {module}")
            return local[name]
        return fragment(other, lang, name)

    return _FRAGMENT.sub(include, source)


@cache
def rule_file(module: str, lang: str) -> dict[str, Any]:
    """The raw mapping of one data file ({} when it does not exist)."""
    path = RULES_DIR / lang / f"{module}.yaml"
    if not path.is_file():
        return {}
    import yaml  # only when a rule is first used: importing a policy reads nothing

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of rule names")
    return data


@cache
def fragments(module: str, lang: str) -> dict[str, str]:
    """The named fragments of `module` in `lang`, each with its own includes resolved."""
    out: dict[str, str] = {}
    where = RULES_DIR / lang / f"{module}.yaml"
    for name, entry in (rule_file(module, lang).get("fragments") or {}).items():
        out[str(name)] = _source(entry, f"{where}:fragments.{name}", module, lang, out)
    return out


def fragment(module: str, lang: str, name: str) -> str:
    """The source of one fragment, for a rule of another file or for code that composes
    a pattern of its own from it (read on first use, like the rules)."""
    found = fragments(module, lang).get(name)
    if found is None:
        raise KeyError(f"{lang}/{module}: no fragment {name!r}")
    return found


@cache
def rules(module: str, lang: str) -> dict[str, Rule]:
    """Every rule of `module` in `lang`, by name ({} when the file does not exist)."""
    path = RULES_DIR / lang / f"{module}.yaml"
    local = fragments(module, lang)
    raw: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, entry in rule_file(module, lang).items():
        if name == "fragments":
            continue
        where = f"{path}:{name}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a mapping")
        unknown = set(entry) - _KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        raw[str(name)] = (_source(entry, where, module, lang, local), entry)
    out: dict[str, Rule] = {}
    for name, (source, entry) in raw.items():
        for other in _strings(entry.get("also"), f"{path}:{name}"):
            source = f"{source}|{raw[other][0]}"
        out[name] = Rule(
            module=module,
            lang=lang,
            name=name,
            source=source,
            ignore_case=bool(entry.get("ignore_case", lang == "en")),
            must=_strings(entry.get("must"), f"{path}:{name}"),
            must_not=_strings(entry.get("must_not"), f"{path}:{name}"),
            note=str(entry.get("note", "")),
            table=str(entry.get("table", "")),
            weight=int(entry.get("weight", 0)),
        )
    return out


def table_rows(module: str, table: str) -> list[tuple[int, str, str]]:
    """The rows of a weighted cue table: (weight, language, pattern), in file order."""
    return [
        (rule.weight, lang, rule.source)
        for lang in LANGUAGES
        for rule in rules(module, lang).values()
        if rule.table == table
    ]


@cache
def compiled(module: str, lang: str, name: str) -> re.Pattern[str] | None:
    """The compiled pattern of one rule; None when `lang` has no such rule."""
    rule = rules(module, lang).get(name)
    return rule.compile() if rule is not None else None


def all_rules() -> list[Rule]:
    """Every rule of every data file, for the example test and for listings."""
    out: list[Rule] = []
    for lang in LANGUAGES:
        for path in sorted((RULES_DIR / lang).glob("*.yaml")):
            out.extend(rules(path.stem, lang).values())
    return out


@cache
def joined(
    module: str, parts: tuple[tuple[str, str], ...], flags: int | None = None
) -> re.Pattern[str]:
    """The rules `parts` ((language, name) pairs, in this order) as one alternation.

    For code that runs a rule on text of either script in one pass and uses the match
    itself (its span, a group, a substitution), not only whether one half fires. With
    no `flags`, the pattern ignores case when any part does.
    """
    found = [rules(module, lang).get(name) for lang, name in parts]
    pairs = zip(parts, found, strict=True)
    missing = [f"{lang}:{name}" for (lang, name), rule in pairs if rule is None]
    if missing or not parts:
        raise KeyError(f"{module}: no rule {', '.join(missing) or 'of that name'}")
    present = [rule for rule in found if rule is not None]
    if flags is None:
        flags = re.IGNORECASE if any(rule.ignore_case for rule in present) else 0
    return re.compile("|".join(rule.source for rule in present), flags)


class Joined:
    """A rule of both languages as one pattern, compiled on first use.

    `Joined(module, name)` joins the languages of `order` that have the rule;
    `Joined.of(module, (lang, name), ...)` joins the parts given, in that order, for a
    pattern whose branches alternate between the languages.
    """

    __slots__ = ("_flags", "_module", "_name", "_order", "_parts", "_pattern")

    def __init__(
        self,
        module: str,
        name: str = "",
        order: tuple[str, ...] = LANGUAGES,
        flags: int | None = None,
        parts: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self._module, self._name, self._order = module, name, order
        self._flags, self._parts = flags, parts
        self._pattern: re.Pattern[str] | None = None

    @classmethod
    def of(cls, module: str, *parts: tuple[str, str], flags: int | None = None) -> Joined:
        return cls(module, flags=flags, parts=parts)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._pattern is None:
            module, name = self._module, self._name
            parts = self._parts or tuple(
                (lang, name) for lang in self._order if name in rules(module, lang)
            )
            self._pattern = joined(self._module, parts, self._flags)
        return self._pattern

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(text, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count=count)

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)
