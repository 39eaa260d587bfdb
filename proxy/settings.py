"""Settings: the shape of `config.yaml` and the rules a valid one keeps.

The `model_list` section uses LiteLLM proxy's format so a LiteLLM user can reuse
their file. Reading the file, resolving `os.environ/NAME` values and applying env
overrides is `proxy.config`; a validator's message here names its key, and the
loader prefixes the key's path (`memory.budget_tokens: ...`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from policies.assemble.cache_pricing import FAMILIES
from policies.longterm.params import LongTermParams

Mode = Literal["managed", "raw", "shadow", "compare"]
DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./memproxy.db"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelEntry(BaseModel):
    # LiteLLM's own files carry more keys (model_info, tpm, ...): accepted, mostly ignored.
    model_config = ConfigDict(extra="allow")

    model_name: str = Field(min_length=1)
    litellm_params: dict[str, Any]
    model_info: dict[str, Any] = Field(default_factory=dict)
    # (litellm_params key, NAME) of each `os.environ/NAME` that was unset at load.
    _missing_env: list[tuple[str, str]] = PrivateAttr(default_factory=list)

    @property
    def missing_env(self) -> list[tuple[str, str]]:
        return self._missing_env

    def record_missing_env(self, missing: list[tuple[str, str]]) -> None:
        """Set by the loader, which sees the `os.environ/NAME` strings before they are
        resolved (validation only sees their values)."""
        self._missing_env = missing

    @field_validator("litellm_params")
    @classmethod
    def _needs_model(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("model"), str) or not value["model"]:
            raise ValueError("litellm_params.model is required (e.g. 'openai/gpt-4o-mini')")
        model = value["model"]
        if model.startswith("memproxy/") and model != "memproxy/demo":
            raise ValueError(
                f"litellm_params.model: {model!r} is no built-in model; the one there is "
                "is 'memproxy/demo'"
            )
        return value


class LongTermSettings(LongTermParams):
    """`memory.long_term`: a user's memory across conversations (issue #9).

    Only requests with a user scope (`X-Memory-User`, else the body's `user`)
    take part; the backfill parameters are `LongTermParams`'.
    """

    enabled: bool = True
    # The backfill read is on the request path: past this, no background this time.
    read_timeout_s: float = Field(default=1.0, gt=0)
    # Consolidation jobs waiting for the background worker; beyond, jobs are dropped.
    queue_size: int = Field(default=1000, ge=1)
    # Retrieval by meaning besides words: a model_list model_name serving embeddings
    # (None: lexical only). Items are embedded when consolidated, the input when a
    # request is assembled; on an error or past the timeout, retrieval is lexical.
    embedding_model: str | None = None
    embedding_timeout_s: float = Field(default=1.0, gt=0, le=60)


class CacheRuleSettings(_Strict):
    """`memory.cache.rules.<family>`: a provider family's cache figures, overridden."""

    read: float | None = Field(default=None, ge=0, le=10)  # cached token, share of input price
    write: float | None = Field(default=None, ge=0, le=10)  # written token, share of input price
    min_tokens: int | None = Field(default=None, ge=0)  # shorter prompts are never cached
    block: int | None = Field(default=None, ge=1)  # cached prefix rounded down to this
    breakpoints: int | None = Field(default=None, ge=0, le=4)  # explicit breakpoints (0: implicit)


def _known_family(name: str, where: str) -> str:
    if name not in FAMILIES:
        raise ValueError(
            f"{where}: unknown cache family {name!r}; expected one of {', '.join(FAMILIES)}"
        )
    return name


class CacheSettings(_Strict):
    """`memory.cache`: the provider's prompt cache (issue #18)."""

    # `cache_control` breakpoints on the stable prefix for Anthropic-family models
    # (system message, last stable message; never past the provider's 4, the
    # client's own included and untouched).
    cache_control: bool = True
    # A breakpoint at the end of the prompt too (the next request reads it all).
    end_breakpoint: bool = False
    # OpenAI-family models: `prompt_cache_key` from the session when the client sent none.
    prompt_cache_key: bool = True
    # Forward the client's own history when it would cost less than the managed
    # context under the model's cache rule (and fits the budget).
    raw_when_cheaper: bool = False
    # Per family (openai, openai-gpt5, anthropic, gemini, deepseek, none): figures to override.
    rules: dict[str, CacheRuleSettings] = Field(default_factory=dict)
    # model_list name -> family, where the provider's name does not tell.
    models: dict[str, str] = Field(default_factory=dict)

    @field_validator("rules")
    @classmethod
    def _rule_families(cls, value: dict[str, CacheRuleSettings]) -> dict[str, CacheRuleSettings]:
        for name in value:
            _known_family(name, "rules")
        return value

    @field_validator("models")
    @classmethod
    def _model_families(cls, value: dict[str, str]) -> dict[str, str]:
        for model, name in value.items():
            _known_family(name, f"models.{model}")
        return value


class MemorySettings(_Strict):
    database_url: str = DEFAULT_DATABASE_URL
    budget_tokens: int | None = Field(default=None, gt=0)
    policy: str = "full"
    default_mode: Mode = "managed"
    # Share of new sessions assigned to the raw arm in a sticky A/B split (None: off).
    ab_split: float | None = Field(default=None, ge=0.0, le=1.0)
    # Model window to assume when litellm does not know the model.
    default_context_window: int = Field(default=8192, gt=0)
    policy_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Which extractor and summariser write memory. `llm` asks `llm_model` (a
    # model_list name) for JSON, off the response path, and falls back to the
    # rules on an error, a timeout or output that fails validation twice;
    # `hybrid` asks it only about the rules' uncertain links (policies/hybrid.py).
    extractor: Literal["rules", "llm", "hybrid"] = "rules"
    summarizer: Literal["rules", "llm"] = "rules"
    llm_model: str | None = None
    llm_timeout_s: float = Field(default=30.0, gt=0)
    # Ask the provider for a JSON object (`response_format`); turn off for
    # servers that reject the parameter (the output is validated either way).
    llm_json_mode: bool = True
    long_term: LongTermSettings = Field(default_factory=LongTermSettings)
    # What a request does when the store fails (locked, missing, read-only,
    # full): `open` forwards the client's messages unmanaged and answers with
    # `X-Memory-Degraded: 1`; `closed` answers 503 (`store_unavailable`).
    on_store_error: Literal["open", "closed"] = "open"
    # Bound on every store wait: SQLite's busy timeout and the wait for the
    # write lock. A locked database costs a request at most about this long.
    store_timeout_s: float = Field(default=5.0, gt=0, le=300)
    # Sessions whose turns, memory and layers each process keeps in memory
    # (least recently used first out); the store has everything, a session
    # that fell out is read back on its next request. This bounds the
    # proxy's memory (`bench/vs_litellm.py --leak N` reports its RSS).
    cache_sessions: int = Field(default=2000, ge=1, le=1_000_000)
    cache: CacheSettings = Field(default_factory=CacheSettings)

    @model_validator(mode="after")
    def _llm_needs_model(self) -> MemorySettings:
        if "llm" in (self.extractor, self.summarizer) and not self.llm_model:
            raise ValueError("llm_model is required when extractor or summarizer is 'llm'")
        if self.extractor == "hybrid" and not self.llm_model:
            raise ValueError("llm_model is required when extractor is 'hybrid'")
        return self


class ServerSettings(_Strict):
    api_keys: list[str] = Field(default_factory=list)
    admin_key: str | None = None
    allow_passthrough_models: bool = False
    max_body_bytes: int = Field(default=20 * 1024 * 1024, gt=0)
    max_messages: int = Field(default=20_000, gt=0)
    max_header_bytes: int = Field(default=1024, gt=0)
    request_timeout_s: float = Field(default=600.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    # Kept for older files: `router_settings.num_retries` wins when both are set.
    num_retries: int = Field(default=0, ge=0, le=10)

    @field_validator("api_keys")
    @classmethod
    def _non_empty_keys(cls, value: list[str]) -> list[str]:
        if any(not k for k in value):
            raise ValueError("api keys must be non-empty strings")
        return value


class LogSettings(_Strict):
    store_content: bool = True
    retention_days: int = Field(default=30, ge=0)


class RouterSettings(BaseModel):
    """LiteLLM's `router_settings`: the keys memproxy acts on; the others are ignored.

    Retryable failures (connection errors, timeouts, 408/409/429/5xx) are retried
    `num_retries` times on the same model_list entry with exponential backoff
    (`retry_backoff_s`, doubling, at most `retry_backoff_max_s`; a provider's
    `Retry-After` is honoured up to `retry_after_max_s`, and a longer one is not
    waited for). Then each `fallbacks` entry for the requested model is tried
    in order. A stream is only retried before its first chunk reached the client.
    """

    model_config = ConfigDict(extra="allow")

    num_retries: int | None = Field(default=None, ge=0, le=10)
    # LiteLLM's format: [{"gpt-4o": ["claude-sonnet", "local"]}]
    fallbacks: list[dict[str, list[str]]] = Field(default_factory=list)
    retry_backoff_s: float = Field(default=0.5, ge=0, le=60)
    retry_backoff_max_s: float = Field(default=8.0, ge=0, le=300)
    retry_after_max_s: float = Field(default=30.0, ge=0, le=600)


class Settings(_Strict):
    model_list: list[ModelEntry] = Field(default_factory=list)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    # LiteLLM proxy files often carry these; accepted so the file can be shared.
    litellm_settings: dict[str, Any] = Field(default_factory=dict)
    general_settings: dict[str, Any] = Field(default_factory=dict)
    router_settings: RouterSettings = Field(default_factory=RouterSettings)

    @model_validator(mode="after")
    def _llm_model_is_configured(self) -> Settings:
        name = self.memory.llm_model
        if name and self.find_model(name) is None and not self.server.allow_passthrough_models:
            raise ValueError(f"memory.llm_model: {name!r} is not a model_list model_name")
        name = self.memory.long_term.embedding_model
        if name and self.find_model(name) is None and not self.server.allow_passthrough_models:
            raise ValueError(
                f"memory.long_term.embedding_model: {name!r} is not a model_list model_name"
            )
        return self

    @model_validator(mode="after")
    def _fallbacks_are_configured(self) -> Settings:
        for rule in self.router_settings.fallbacks:
            for name, targets in rule.items():
                for model in (name, *targets):
                    if self.find_model(model) is None:
                        raise ValueError(
                            f"router_settings.fallbacks: {model!r} is not a model_list model_name"
                        )
        return self

    @property
    def num_retries(self) -> int:
        """Retries per model_list entry: `router_settings`, else `server.num_retries`."""
        configured = self.router_settings.num_retries
        return self.server.num_retries if configured is None else configured

    def fallbacks_for(self, model_name: str) -> list[str]:
        """The model_list entries to try, in order, after `model_name` failed."""
        out: list[str] = []
        for rule in self.router_settings.fallbacks:
            out += [m for m in rule.get(model_name, ()) if m != model_name and m not in out]
        return out

    def find_model(self, name: str) -> ModelEntry | None:
        for entry in self.model_list:
            if entry.model_name == name:
                return entry
        return None
