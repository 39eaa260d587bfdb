"""Policies by name, and the presets that reproduce the seeds' comparison.

- `raw` (A): the client's full history, unchanged;
- `window` (B): the budget, recent turns only (a sliding window);
- `summary_buffer` (C): the budget and three layers of history: a rolling
  summary of older turns, older turns recalled for the current input, the
  recent turns verbatim (compacted in steps);
- `full` (D, the default): the backbone (`policies.assemble.backbone`): the user's
  own words verbatim and in order, annotated where a later turn changed them,
  the assistant's older turns digested, tool results cut to key fields, the
  recent turns whole; the rule engine annotates and decides what gives way
  when the backbone outgrows the budget;
- `user_turns`: the simplest baseline, reported beside `full`: the system
  prompt and every user turn verbatim, nothing else;
- `layered`: the previous default: C plus structured working memory (with
  graded forgetting), anchors and replay.

Three tables build every policy by the name config.yaml uses: `ASSEMBLERS`
(one per preset, with its params model), `EXTRACTORS` (`memory.extractor`)
and `SUMMARIZERS` (`memory.summarizer`). Params come from
`memory.policy_params.<preset>` and are validated at start-up. An LLM-backed
policy (`policies.llm`) gets the completion callable the proxy injects
(`Injected.complete`): `policies/` never sees litellm or the proxy. The
response path never waits for a model, so every extractor and summariser is
the rule-based one there; an LLM-backed name adds a *refiner* that redoes the
request's work off the response path and falls back to the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from policies.assemble.assembly import (
    BackboneAssembler,
    FullAssembler,
    RawAssembler,
    SummaryBufferAssembler,
    UserTurnsAssembler,
    WindowAssembler,
)
from policies.assemble.backbone import BackboneParams
from policies.assemble.params import FullParams, RecallParams, SummaryBufferParams, WindowParams
from policies.assemble.summary import RuleSummarizer, SummaryParams
from policies.base import AssemblyPolicy, ExtractionPolicy
from policies.extract.extraction import RuleExtractor
from policies.hybrid import HybridExtractor
from policies.llm.calls import Complete
from policies.llm.extractor import LLMExtractor
from policies.llm.summarizer import LLMSummarizer


@dataclass(frozen=True, slots=True)
class Injected:
    """What the proxy hands the policies it builds (None: no model configured)."""

    complete: Complete | None = None
    # Each LLM-backed call's own deadline (then: the rules' answer).
    timeout_s: float = 30.0

    def completion(self, role: str, name: str = "llm") -> Complete:
        if self.complete is None:
            raise ValueError(
                f"memory.{role}: {name} needs memory.llm_model (a completion callable)"
            )
        return self.complete


@dataclass(frozen=True, slots=True)
class Extractor:
    """A configured extractor: the rules on the response path, and its refiner."""

    rules: ExtractionPolicy
    refiner: LLMExtractor | HybridExtractor | None = None


@dataclass(frozen=True, slots=True)
class Summarizer:
    """A configured summariser: the rules on the response path, and its refiner."""

    rules: RuleSummarizer
    refiner: LLMSummarizer | None = None


def _rule_extractor(_: Injected) -> Extractor:
    return Extractor(RuleExtractor())


def _llm_extractor(injected: Injected) -> Extractor:
    rules = RuleExtractor()
    return Extractor(
        rules, LLMExtractor(injected.completion("extractor"), rules, injected.timeout_s)
    )


def _rule_summarizer(params: SummaryParams, _: Injected) -> Summarizer:
    return Summarizer(RuleSummarizer(params))


def _llm_summarizer(params: SummaryParams, injected: Injected) -> Summarizer:
    rules = RuleSummarizer(params)
    complete = injected.completion("summarizer")
    return Summarizer(rules, LLMSummarizer(complete, rules, injected.timeout_s))


def _hybrid_extractor(injected: Injected) -> Extractor:
    rules = RuleExtractor()
    complete = injected.completion("extractor", "hybrid")
    return Extractor(rules, HybridExtractor(complete, rules, injected.timeout_s))


EXTRACTORS: dict[str, Callable[[Injected], Extractor]] = {
    "rules": _rule_extractor,
    "llm": _llm_extractor,
    "hybrid": _hybrid_extractor,
}
SUMMARIZERS: dict[str, Callable[[SummaryParams, Injected], Summarizer]] = {
    "rules": _rule_summarizer,
    "llm": _llm_summarizer,
}


@dataclass(frozen=True, slots=True)
class AssemblerSpec:
    """How a preset's assembler is built: its params model (None: it takes none),
    whether the preset keeps working memory (then it extracts), and whether it
    keeps a rolling summary (then its params carry `summarizer`, `recall` and
    `recall_share`)."""

    build: Callable[[Any], AssemblyPolicy]
    params: type[BaseModel] | None
    extracts: bool
    summarizes: bool = False


ASSEMBLERS: dict[str, AssemblerSpec] = {
    "raw": AssemblerSpec(lambda _: RawAssembler(), None, extracts=False),
    "window": AssemblerSpec(WindowAssembler, WindowParams, extracts=True),
    "summary_buffer": AssemblerSpec(
        SummaryBufferAssembler, SummaryBufferParams, extracts=True, summarizes=True
    ),
    "full": AssemblerSpec(BackboneAssembler, BackboneParams, extracts=True, summarizes=True),
    "user_turns": AssemblerSpec(lambda _: UserTurnsAssembler(), None, extracts=False),
    "layered": AssemblerSpec(FullAssembler, FullParams, extracts=True, summarizes=True),
}
PRESET_NAMES = tuple(ASSEMBLERS)


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    assembler: AssemblyPolicy | None
    extractor: ExtractionPolicy | None
    # Presets with a rolling summary compact with this (None: no summary).
    summarizer: RuleSummarizer | None = None
    # Presets that recall older turns search with these (None: no recall).
    recall: RecallParams | None = None
    # Off the response path, in session order: the model redoes the request's
    # extraction / new summary chunks (None: the rules' result stands).
    # (`hybrid`: the model settles only the rules' uncertain links.)
    extract_refiner: LLMExtractor | HybridExtractor | None = None
    summary_refiner: LLMSummarizer | None = None


def _params(model: type[BaseModel], raw: Mapping[str, Any] | None, key: str) -> Any:
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as err:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        raise ValueError(f"memory.policy_params.{key}: {detail}") from None


def _choose(table: Mapping[str, object], name: str, key: str) -> None:
    if name not in table:
        raise ValueError(
            f"memory.{key}: unknown {key} {name!r}; expected one of {', '.join(table)}"
        )


def build_preset(
    name: str,
    raw: Mapping[str, Any] | None,
    extractor: Extractor,
    summarizer: str = "rules",
    injected: Injected | None = None,
) -> Preset:
    """The preset called `name`, its params validated from `raw`."""
    spec = ASSEMBLERS[name]
    params: Any = None if spec.params is None else _params(spec.params, raw, name)
    assembler = spec.build(params)
    chosen = extractor if spec.extracts else None
    summary: Summarizer | None = None
    recall: RecallParams | None = None
    if spec.summarizes:
        summary = SUMMARIZERS[summarizer](params.summarizer, injected or Injected())
        recall = params.recall if params.recall_share > 0 else None
    return Preset(
        name,
        assembler,
        chosen.rules if chosen else None,
        summary.rules if summary else None,
        recall,
        chosen.refiner if chosen else None,
        summary.refiner if summary else None,
    )


class Policies:
    def __init__(self, presets: dict[str, Preset], default: str) -> None:
        self._presets = presets
        self.default = default

    @classmethod
    def from_settings(
        cls,
        default: str,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        extractor: str = "rules",
        summarizer: str = "rules",
        injected: Injected | None = None,
    ) -> Policies:
        """Every preset, built by name; ValueError naming the config key if anything is off."""
        params = params or {}
        unknown = set(params) - set(PRESET_NAMES)
        if unknown:
            raise ValueError(
                f"memory.policy_params: unknown preset(s) {sorted(unknown)}; "
                f"expected {', '.join(PRESET_NAMES)}"
            )
        if default not in PRESET_NAMES:
            raise ValueError(
                f"memory.policy: unknown preset {default!r}; expected one of "
                f"{', '.join(PRESET_NAMES)}"
            )
        _choose(EXTRACTORS, extractor, "extractor")
        _choose(SUMMARIZERS, summarizer, "summarizer")
        injected = injected or Injected()
        # One extractor for every preset: it keeps no state between turns.
        shared = EXTRACTORS[extractor](injected)
        presets = {
            name: build_preset(name, params.get(name), shared, summarizer, injected)
            for name in PRESET_NAMES
        }
        return cls(presets, default)

    def preset(self, name: str | None) -> Preset:
        """The named preset (None: the configured default); ValueError if unknown."""
        key = (name or self.default).strip().lower()
        if key not in self._presets:
            raise ValueError(
                f"unknown memory policy {name!r}; expected one of {', '.join(PRESET_NAMES)}"
            )
        return self._presets[key]
