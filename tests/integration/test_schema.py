"""schemathesis against the app's own OpenAPI schema: every route, in-process (ASGI).

Bodies, query strings, path parameters and X-Memory-* headers are generated
from the schema (valid and invalid ones); the app runs with its real store (a
SQLite file) and reaches the local stub upstream through litellm. No answer
may be a 5xx, and every error must be in OpenAI's shape. Bounded: about
`MAX_EXAMPLES` inputs per operation, well under a minute in all.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.python.asgi import shutdown_lifespans

from proxy.config import settings_from_dict
from proxy.http.app import create_app
from tests.conftest import make_config

API_KEY = "sk-fuzz-client"
ADMIN_KEY = "sk-fuzz-admin"
MAX_EXAMPLES = int(os.environ.get("MEMPROXY_SCHEMA_EXAMPLES", "25"))
SENT: Counter[str] = Counter()  # requests per operation (`-s` prints the total)


def _schema() -> Any:
    """The app's own schema (it does not depend on the config), `model` steered.

    Generated `model` values are a name that reaches the stub or an unknown one,
    not random strings only (which would all stop at the 404).
    """
    raw = create_app(settings_from_dict({}, env={})).openapi()
    steered = ("/v1/chat/completions", "/chat/completions", "/v1/responses", "/responses")
    for path in (*steered, "/v1/messages", "/messages"):
        body = raw["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        body["schema"]["properties"]["model"] = {
            "type": "string",
            "enum": ["stub", "no-such-model"],
        }
    return schemathesis.openapi.from_dict(raw)


schema = _schema()


@pytest.fixture
def fuzzed_app(stub_upstream: Any, tmp_path: Path) -> Iterator[Any]:
    """The app under test: real store file, real stub upstream, keys configured."""
    config = make_config(
        stub_upstream.url,
        tmp_path / "memproxy.db",
        server={"api_keys": [API_KEY], "admin_key": ADMIN_KEY, "request_timeout_s": 5},
    )
    yield create_app(settings_from_dict(config, env={}))
    shutdown_lifespans()  # the ASGI transport started it; stop it with the test
    print(f"\nschemathesis so far: {sum(SENT.values())} requests {dict(SENT)}")


# The app runs in schemathesis's event-loop thread, beside the generator; its use
# of the global `random` there changes the state hypothesis watches around each
# draw, which hypothesis then attributes (wrongly) to the strategy.
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same inputs every run: a failure here is reproducible
)
def test_no_route_answers_a_5xx(case: Any, fuzzed_app: Any) -> None:
    key = ADMIN_KEY if case.path.startswith("/memory") else API_KEY
    # Generous timeout: the app's first chat request waits for litellm's import.
    headers = {"Authorization": f"Bearer {key}"}
    response = case.call(app=fuzzed_app, headers=headers, timeout=120)
    SENT[f"{case.method} {case.path} {response.status_code}"] += 1
    assert response.status_code < 500, (case.method, case.path, case.body, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        error = body["error"]
        anthropic = case.path.split("/")[-1] in ("messages", "count_tokens")
        if anthropic and case.method == "POST":  # the Messages API answers in Anthropic's shape
            assert body["type"] == "error"
            assert set(error) == {"message", "type"}, response.text
        else:
            assert set(error) == {"message", "type", "param", "code"}, response.text
        assert error["message"]
        assert "Traceback" not in response.text
        assert API_KEY not in response.text
        assert ADMIN_KEY not in response.text


@pytest.mark.parametrize(
    ("message", "param"),
    [
        # The first four were 500s (TypeError / AttributeError) until schemathesis found them.
        ({"role": ["user"], "content": "x"}, "messages[0].role"),
        ({"role": {"a": 1}, "content": "x"}, "messages[0].role"),
        ({"role": "user", "content": [{"type": ["text"]}]}, "messages[0].content[0].type"),
        (
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": ["f"]}]},
            "messages[0].tool_calls[0].function",
        ),
        # Rejected here now rather than by the provider.
        (
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": 5}}]},
            "messages[0].tool_calls[0].function",
        ),
    ],
)
async def test_inputs_schemathesis_found_are_400s(
    proxy: Any, message: dict[str, Any], param: str
) -> None:
    resp = await proxy.chat([message])
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["param"] == param


async def test_the_schema_describes_the_chat_body(proxy: Any) -> None:
    schema = (await proxy.client.get("/openapi.json")).json()
    operation = schema["paths"]["/v1/chat/completions"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["model", "messages"]
    headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
    assert headers == {"X-Memory-Session", "X-Memory-Mode", "X-Memory-Budget", "X-Memory-Policy"}
