"""Start-up warnings for a config that validates but will not do what it says.

Two mistakes cost a new user the most, and neither fails validation, because
LiteLLM's sections accept any key:

- an `os.environ/NAME` whose variable is unset: the model fails only when it is
  called (`Upstream.resolve` then answers 502 naming the variable);
- a misspelt key (`api_bse`): litellm ignores it, and traffic goes to the
  provider's public endpoint instead of the local server the key meant.

Known names come from `litellm_names.json` (kept equal to litellm's own lists
by `tests/unit/test_known_litellm_names.py`), so this never imports litellm.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path

from proxy.settings import RouterSettings, Settings

# memproxy's own keys in sections that LiteLLM defines.
_OWN_ROUTER_KEYS = frozenset(RouterSettings.model_fields)
_OWN_MODEL_INFO_KEYS = frozenset({"max_input_tokens"})


@cache
def known_names() -> dict[str, frozenset[str]]:
    data = json.loads(Path(__file__).with_name("litellm_names.json").read_text(encoding="utf-8"))
    return {section: frozenset(names) for section, names in data.items()}


_PASSED_ON = "passed to litellm as is; it may ignore it"


def _unknown(
    where: str, keys: list[str], known: frozenset[str], consequence: str = _PASSED_ON
) -> list[str]:
    out = []
    for key in keys:
        if key in known:
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        out.append(f"{where}: unknown key {key!r}{hint} ({consequence})")
    return out


def startup_warnings(settings: Settings) -> list[str]:
    """One line per problem, naming the model and the key or variable."""
    names = known_names()
    out: list[str] = []
    for i, entry in enumerate(settings.model_list):
        label = f"model_list[{i}] ({entry.model_name})"
        for key, var in entry.missing_env:
            out.append(
                f"{label}: environment variable {var} is not set "
                f"(litellm_params.{key}: os.environ/{var}); requests to "
                f"{entry.model_name!r} will fail with 502 until memproxy is restarted with it"
            )
        out += _unknown(
            f"{label} litellm_params", list(entry.litellm_params), names["litellm_params"]
        )
        out += _unknown(
            f"{label} model_info",
            list(entry.model_info),
            names["model_info"] | _OWN_MODEL_INFO_KEYS,
            "ignored",
        )
    router = settings.router_settings
    given = list(dict.fromkeys([*router.model_fields_set, *(router.model_extra or {})]))
    out += _unknown(
        "router_settings", given, names["router_settings"] | _OWN_ROUTER_KEYS, "ignored"
    )
    return out
