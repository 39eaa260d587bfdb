"""`proxy/litellm_names.json` (what the start-up checks know) matches litellm's own lists.

The start-up check of `litellm_params`, `router_settings` and `model_info` keys
must not import litellm (seconds), so the names live in a JSON file. This test
imports litellm and fails when an upgrade added or removed names; rewrite the
file with `python tests/unit/test_known_litellm_names.py`.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import typing
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

NAMES_FILE = Path(__file__).resolve().parents[2] / "proxy" / "litellm_names.json"


def litellm_names() -> dict[str, list[str]]:
    import litellm
    from litellm.types.router import GenericLiteLLMParams, LiteLLM_Params
    from litellm.types.router import ModelInfo as RouterModelInfo
    from litellm.types.utils import ModelInfo

    def params_of(fn: Any) -> set[str]:
        return {
            name
            for name, p in inspect.signature(fn).parameters.items()
            if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        }

    litellm_params = (
        params_of(litellm.completion)
        | params_of(litellm.embedding)
        | set(GenericLiteLLMParams.model_fields)
        | set(LiteLLM_Params.model_fields)
    ) - {"messages", "model_list", "input"}
    model_info = set(typing.get_type_hints(ModelInfo)) | set(RouterModelInfo.model_fields)
    router = params_of(litellm.Router.__init__) - {"model_list"}
    return {
        "litellm_params": sorted(litellm_params),
        "model_info": sorted(model_info),
        "router_settings": sorted(router),
    }


def test_names_file_matches_litellm() -> None:
    stored = json.loads(NAMES_FILE.read_text(encoding="utf-8"))
    current = litellm_names()
    for section, names in current.items():
        added = sorted(set(names) - set(stored[section]))
        removed = sorted(set(stored[section]) - set(names))
        hint = "run `python tests/unit/test_known_litellm_names.py` to rewrite the file"
        assert not added, f"{section}: litellm now has {added}; {hint}"
        assert not removed, f"{section}: litellm no longer has {removed}; {hint}"


if __name__ == "__main__":
    NAMES_FILE.write_text(json.dumps(litellm_names(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {NAMES_FILE}", file=sys.stderr)
