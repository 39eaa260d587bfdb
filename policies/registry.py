"""Policies by name, and the presets that reproduce the seeds' comparison.

`raw` (A: full history), `window` (B: budget, recent turns only),
`summary_buffer` (C: budget + summary + recent), `full` (D: C + structured
memory + replay + anchors; the default). Params come from
`memory.policy_params.<preset>` in config.yaml and are validated at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from policies.assembly import (
    FullAssembler,
    FullParams,
    RawAssembler,
    SummaryBufferAssembler,
    SummaryBufferParams,
    WindowAssembler,
    WindowParams,
)
from policies.base import AssemblyPolicy, ExtractionPolicy
from policies.extraction import RuleExtractor

PRESET_NAMES = ("raw", "window", "summary_buffer", "full")
EXTRACTORS: dict[str, type[Any]] = {"rules": RuleExtractor}


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    assembler: AssemblyPolicy | None
    extractor: ExtractionPolicy | None


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
        presets = {
            "raw": Preset("raw", RawAssembler(), None),
            "window": Preset(
                "window",
                WindowAssembler(_params(WindowParams, params.get("window"), "window")),
                extractor,
            ),
            "summary_buffer": Preset(
                "summary_buffer",
                SummaryBufferAssembler(
                    _params(SummaryBufferParams, params.get("summary_buffer"), "summary_buffer")
                ),
                extractor,
            ),
            "full": Preset(
                "full", FullAssembler(_params(FullParams, params.get("full"), "full")), extractor
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
