"""Policies by name, and the presets that reproduce the seeds' comparison.

- `raw` (A): the client's full history, unchanged;
- `window` (B): the budget, recent turns only (a sliding window);
- `summary_buffer` (C): the budget and three layers of history: a rolling
  summary of older turns, older turns recalled for the current input, the
  recent turns verbatim (compacted in steps);
- `full` (D, the default): the backbone (`policies.backbone`): the user's
  own words verbatim and in order, annotated where a later turn changed them,
  the assistant's older turns digested, tool results cut to key fields, the
  recent turns whole; the rule engine annotates and decides what gives way
  when the backbone outgrows the budget;
- `user_turns`: the simplest baseline, reported beside `full`: the system
  prompt and every user turn verbatim, nothing else;
- `layered`: the previous default: C plus structured working memory (with
  graded forgetting), anchors and replay.

Params come from `memory.policy_params.<preset>` in config.yaml and are
validated at start-up. The LLM-backed extractor and summariser
(`policies.llm`, `memory.extractor/summarizer: llm`) need a completion
callable, so the proxy builds them around the rule-based ones named here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from policies.assembly import (
    BackboneAssembler,
    BackboneParams,
    FullAssembler,
    FullParams,
    RawAssembler,
    SummaryBufferAssembler,
    SummaryBufferParams,
    UserTurnsAssembler,
    WindowAssembler,
    WindowParams,
)
from policies.base import AssemblyPolicy, ExtractionPolicy
from policies.extraction import RuleExtractor
from policies.params import RecallParams
from policies.summary import RuleSummarizer

PRESET_NAMES = ("raw", "window", "summary_buffer", "full", "user_turns", "layered")
EXTRACTORS: dict[str, type[Any]] = {"rules": RuleExtractor}
SUMMARIZERS: dict[str, type[Any]] = {"rules": RuleSummarizer}


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    assembler: AssemblyPolicy | None
    extractor: ExtractionPolicy | None
    # Presets with a rolling summary compact with this (None: no summary).
    summarizer: RuleSummarizer | None = None
    # Presets that recall older turns search with these (None: no recall).
    recall: RecallParams | None = None


def _params(model: type[BaseModel], raw: Mapping[str, Any] | None, key: str) -> Any:
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as err:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        raise ValueError(f"memory.policy_params.{key}: {detail}") from None


class Policies:
    def __init__(self, presets: dict[str, Preset], default: str) -> None:
        self._presets = presets
        self.default = default

    @classmethod
    def from_settings(
        cls, default: str, params: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Policies:
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
        extractor = RuleExtractor()
        buffer = _params(SummaryBufferParams, params.get("summary_buffer"), "summary_buffer")
        layered = _params(FullParams, params.get("layered"), "layered")
        full = _params(BackboneParams, params.get("full"), "full")
        presets = {
            "raw": Preset("raw", RawAssembler(), None),
            "window": Preset(
                "window",
                WindowAssembler(_params(WindowParams, params.get("window"), "window")),
                extractor,
            ),
            "summary_buffer": Preset(
                "summary_buffer",
                SummaryBufferAssembler(buffer),
                extractor,
                RuleSummarizer(buffer.summarizer),
                buffer.recall if buffer.recall_share > 0 else None,
            ),
            "full": Preset(
                "full",
                BackboneAssembler(full),
                extractor,
                RuleSummarizer(full.summarizer),
                full.recall if full.recall_share > 0 else None,
            ),
            "user_turns": Preset("user_turns", UserTurnsAssembler(), None),
            "layered": Preset(
                "layered",
                FullAssembler(layered),
                extractor,
                RuleSummarizer(layered.summarizer),
                layered.recall if layered.recall_share > 0 else None,
            ),
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
