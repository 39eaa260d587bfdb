"""What a call cost: litellm's (local) cost map, a model_list entry's own
prices, and a memo of the models litellm cannot price.

It never imports litellm: it prices with the module `proxy.upstream` loaded
(`Upstream.litellm`), which also hands litellm's logging class to
`remember_pricing_failures` when it quiets litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.errors import ProxyError
from proxy.upstream_wire import field_of

if TYPE_CHECKING:
    from proxy.upstream import Upstream

# Price keys a model_list entry may set itself (litellm's custom pricing names).
PRICE_KEYS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
)

# (requested model, model the response names) that litellm could not price: a
# local or self-hosted model. litellm looks such a model up again on every call,
# through every pricing fallback (~2-3 ms of CPU per call); the answer does not
# change while the process runs. Bounded: passthrough models may be any name.
UNPRICED: set[tuple[str | None, str | None]] = set()
_UNPRICED_MAX = 1024


class Pricing:
    """Prices and costs of the models `upstream` routes to (`Upstream.pricing`)."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream
        self._price_info: dict[str, dict[str, Any]] = {}

    def price_info(self, model_name: str) -> dict[str, Any]:
        """A model's per-token prices: litellm's cost map, then the entry's own figures
        (litellm_params / model_info). Empty for a model without a price."""
        if model_name in self._price_info:
            return self._price_info[model_name]
        info: dict[str, Any] = {}
        try:
            target = self._upstream.resolve(model_name)
        except ProxyError:
            return info
        try:
            found = self._upstream.litellm.get_model_info(target.provider_model)
            info = {k: found.get(k) for k in PRICE_KEYS if found.get(k) is not None}
        except Exception:  # unknown model: only the entry's own figures
            info = {}
        entry = self._upstream.settings.find_model(model_name)
        if entry is not None:
            for source in (entry.model_info, entry.litellm_params):
                info.update({k: source[k] for k in PRICE_KEYS if source.get(k) is not None})
        self._price_info[model_name] = info
        return info

    def prices(self, model_name: str) -> dict[str, float] | None:
        """A model_list model's prices per token from litellm's (local) cost map:
        `input`, `output`, `cache_read`, `cache_write`; None when it has no price."""
        up = self._upstream
        try:
            info = up.litellm.get_model_info(up.resolve(model_name).provider_model)
        except Exception:  # unknown model (local servers, stubs)
            return None
        source = {
            "input": "input_cost_per_token",
            "output": "output_cost_per_token",
            "cache_read": "cache_read_input_token_cost",
            "cache_write": "cache_creation_input_token_cost",
        }
        out = {k: info.get(v) for k, v in source.items()}
        if not isinstance(out["input"], int | float) or not isinstance(out["output"], int | float):
            return None
        # A model with no cache price bills cached tokens as ordinary input.
        return {k: float(v if isinstance(v, int | float) else out["input"]) for k, v in out.items()}

    def cost(self, response: Any) -> float | None:
        # litellm prices every response while building it; pricing it again
        # cost ~1 ms per request.
        hidden = getattr(response, "_hidden_params", None) or {}
        known = hidden.get("response_cost")
        if isinstance(known, int | float):
            return float(known)
        if pricing_key(hidden.get("litellm_model_name"), response) in UNPRICED:
            return None  # litellm already failed to price this model: it would again
        try:
            return float(self._upstream.litellm.completion_cost(completion_response=response))
        except Exception:  # models without a price (local servers, stubs)
            return None

    def usage_cost(self, model_name: str, usage: dict[str, Any]) -> float | None:
        """Price a streamed answer from the usage its last chunk reported."""
        try:
            prompt, completion = self._upstream.litellm.cost_per_token(
                model=self._upstream.resolve(model_name).provider_model,
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
            return float(prompt) + float(completion)
        except Exception:  # models without a price, malformed usage
            return None

    def passthrough_cost(self, result: Any, function: str) -> float | None:
        known = (getattr(result, "_hidden_params", None) or {}).get("response_cost")
        if isinstance(known, int | float):
            return float(known)
        try:
            return float(self._upstream.litellm.completion_cost(result, call_type=function))
        except Exception:  # models without a price (local servers, stubs), binary answers
            return None

    def embedding_cost(self, response: Any) -> float | None:
        try:
            return float(self._upstream.litellm.completion_cost(response, call_type="aembedding"))
        except Exception:  # models without a price (local servers, stubs)
            return None


def pricing_key(model: Any, result: Any) -> tuple[str | None, str | None]:
    answered = field_of(result, "model") if result is not None else None
    return (
        model if isinstance(model, str) else None,
        answered if isinstance(answered, str) else None,
    )


def remember_pricing_failures(logging_class: Any) -> bool:
    """Price a model litellm cannot price once per process, not on every response.

    litellm prices every response while building it (`Logging.
    response_cost_calculator`, on the response path; `logging_class` is that
    `Logging`). For a model missing from its cost map that fails after trying
    every fallback spelling of the name; the failure is remembered here and
    the lookup skipped next time (the cost stays None, as before). Models
    with custom pricing never fail, so never skip. Returns False if litellm's
    method is missing (a test fails loudly).
    """
    original = getattr(logging_class, "response_cost_calculator", None)
    if original is None:
        return False
    if getattr(original, "_memproxy_memo", False):
        return True

    def response_cost_calculator(self: Any, result: Any, *args: Any, **kwargs: Any) -> Any:
        name = kwargs.get("litellm_model_name") or getattr(self, "model", None)
        key = pricing_key(name, result)
        if key in UNPRICED and not getattr(self, "custom_pricing", False):
            return None
        cost = original(self, result, *args, **kwargs)
        details = getattr(self, "model_call_details", None) or {}
        if cost is None and details.get("response_cost_failure_debug_information"):
            if len(UNPRICED) >= _UNPRICED_MAX:
                UNPRICED.clear()
            UNPRICED.add(key)
        return cost

    response_cost_calculator._memproxy_memo = True  # type: ignore[attr-defined]
    logging_class.response_cost_calculator = response_cost_calculator
    return True
