"""Issue #22: start-up checks, sessions by name and by user, records right after the answer.

In-process against the stub upstream; `tests/e2e/test_first_run.py` runs the
README's command itself.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from proxy.config import settings_from_dict
from proxy.config_checks import startup_warnings
from proxy.logs_cli import show_logs

ADMIN = "admin-first-run-5521"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
SYSTEM = {"role": "system", "content": "You help plan small garden projects."}
UNSET = "MEMPROXY_TEST_NEVER_SET_KEY"


def _entry(name: str, **params: Any) -> dict[str, Any]:
    return {"model_name": name, "litellm_params": {"model": "openai/stub-model", **params}}


# --- start-up checks --------------------------------------------------------------------


def test_an_unset_environment_variable_is_named_with_its_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(UNSET, raising=False)
    settings = settings_from_dict(
        {"model_list": [_entry("keyless", api_key=f"os.environ/{UNSET}")]}, env={}
    )
    warnings = startup_warnings(settings)
    assert len(warnings) == 1
    assert UNSET in warnings[0]
    assert "keyless" in warnings[0]
    assert "502" in warnings[0]


def test_a_misspelt_key_is_named_with_its_closest_known_one() -> None:
    config = {
        "model_list": [
            {
                **_entry("local", api_bse="http://127.0.0.1:11434/v1", api_key="none"),
                "model_info": {"max_input_tokns": 8192},
            }
        ],
        "router_settings": {"num_retrys": 2, "retry_backoff_s": 0.1},
    }
    warnings = startup_warnings(settings_from_dict(config, env={}))
    assert len(warnings) == 3, warnings
    typo, info, router = warnings
    assert "litellm_params" in typo
    assert "'api_bse'" in typo
    assert "did you mean 'api_base'?" in typo
    assert "(local)" in typo
    assert "'max_input_tokns'" in info
    assert "did you mean 'max_input_tokens'?" in info
    assert "router_settings" in router
    assert "did you mean 'num_retries'?" in router


def test_known_keys_and_the_shipped_config_give_no_typo_warning() -> None:
    config = {
        "model_list": [
            {
                **_entry("ok", api_base="http://127.0.0.1:9/v1", api_key="x", temperature=0.2),
                "model_info": {"max_input_tokens": 1000, "mode": "chat"},
            }
        ],
        "router_settings": {"num_retries": 1, "retry_after_max_s": 3, "timeout": 30},
    }
    assert startup_warnings(settings_from_dict(config, env={})) == []


async def test_a_model_without_its_key_answers_502_naming_the_variable(
    proxy_factory: Any, stub_upstream: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(UNSET, raising=False)
    harness = await proxy_factory(
        model_list=[
            _entry("stub", api_base=stub_upstream.url, api_key="sk-provider-secret-123"),
            _entry("keyless", api_base=stub_upstream.url, api_key=f"os.environ/{UNSET}"),
        ]
    )
    resp = await harness.chat([{"role": "user", "content": "hello"}], model="keyless")
    assert resp.status_code == 502
    error = resp.json()["error"]
    assert UNSET in error["message"]
    assert error["code"] == "missing_provider_key"
    assert error["param"] == "model"
    # The SDKs retry a 502 unless told not to: nothing changes before a restart.
    assert resp.headers["x-should-retry"] == "false"
    assert stub_upstream.received == []
    # The other models still answer.
    assert (await harness.chat([{"role": "user", "content": "hello"}])).status_code == 200


# --- sessions ---------------------------------------------------------------------------


async def test_a_client_named_session_is_found_by_its_name_everywhere(
    proxy_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    harness = await proxy_factory(server={"admin_key": ADMIN})
    named = {"X-Memory-Session": "tomato-bed-7"}
    first = await harness.chat(
        [SYSTEM, {"role": "user", "content": "I want a raised bed for tomatoes."}], headers=named
    )
    assert first.headers["X-Memory-Session"] == "tomato-bed-7"
    session_id = first.headers["X-Memory-Session-Id"]
    assert session_id != "tomato-bed-7"
    await harness.settle()

    detail = await harness.client.get("/memory/sessions/tomato-bed-7", headers=AUTH)
    assert detail.status_code == 200
    assert detail.json()["session"]["id"] == session_id
    assert detail.json()["turns"][0]["text"] == "I want a raised bed for tomatoes."
    listed = await harness.client.get("/memory/requests?session=tomato-bed-7", headers=AUTH)
    assert [r["id"] for r in listed.json()["data"]] == [first.headers["X-Memory-Request-Id"]]
    sessions = (await harness.client.get("/memory/sessions", headers=AUTH)).json()["data"]
    assert sessions[0]["external_id"] == "tomato-bed-7"
    assert sessions[0]["opening"] == "I want a raised bed for tomatoes."

    args = argparse.Namespace(n=10, session="tomato-bed-7", json=True, q=None)
    assert await show_logs(harness.services.settings, args) == 0
    logged = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in logged] == [first.headers["X-Memory-Request-Id"]]


async def test_echoing_a_transparent_sessions_header_continues_it(proxy: Any) -> None:
    history = [SYSTEM, {"role": "user", "content": "Which herbs grow in shade?"}]
    first = await proxy.chat(history)
    echoed = {"X-Memory-Session": first.headers["X-Memory-Session"]}
    history += [first.json()["choices"][0]["message"]]
    history += [{"role": "user", "content": "And in pots?"}]
    second = await proxy.chat(history, headers=echoed)
    assert second.status_code == 200
    assert second.headers["X-Memory-Session-Id"] == first.headers["X-Memory-Session-Id"]
    await proxy.settle()
    stored = await proxy.services.store.load_messages(first.headers["X-Memory-Session-Id"])
    assert [m.text for m in stored if m.role == "user"] == [
        "Which herbs grow in shade?",
        "And in pots?",
    ]
    # Only the new message, as a stateful client sends it: the store supplies the rest.
    third = await proxy.chat([{"role": "user", "content": "Thanks."}], headers=echoed)
    assert third.headers["X-Memory-Session-Id"] == first.headers["X-Memory-Session-Id"]


@pytest.mark.parametrize("how", ["body", "header"])
async def test_two_users_of_one_key_with_the_same_opening_stay_apart(
    proxy: Any, stub_upstream: Any, how: str
) -> None:
    opening = [SYSTEM, {"role": "user", "content": "Hi"}]

    def as_user(name: str) -> dict[str, Any]:
        if how == "body":
            return {"user": name}
        return {"headers": {"X-Memory-User": name}}

    a1 = await proxy.chat(opening, **as_user("ana"))
    b1 = await proxy.chat(opening, **as_user("ben"))
    assert a1.headers["X-Memory-Session"] != b1.headers["X-Memory-Session"]
    reply = a1.json()["choices"][0]["message"]
    a2 = await proxy.chat(
        [*opening, reply, {"role": "user", "content": "My plot is 3 by 4 metres."}],
        **as_user("ana"),
    )
    b2 = await proxy.chat(
        [*opening, reply, {"role": "user", "content": "I only have a balcony."}],
        **as_user("ben"),
    )
    # Each continues their own session: no fork, no takeover.
    assert a2.headers["X-Memory-Session"] == a1.headers["X-Memory-Session"]
    assert b2.headers["X-Memory-Session"] == b1.headers["X-Memory-Session"]
    await proxy.settle()
    rows = [
        await proxy.services.store.get_request(r.headers["X-Memory-Request-Id"]) for r in (a2, b2)
    ]
    assert [json.loads(r["record_json"])["session_kind"] for r in rows] == [
        "continuation",
        "continuation",
    ]
    sent_to_ben = json.dumps(stub_upstream.received[-1].body["messages"])
    assert "3 by 4" not in sent_to_ben


async def test_without_a_user_the_same_opening_is_still_one_conversation(proxy: Any) -> None:
    opening = [SYSTEM, {"role": "user", "content": "Hi"}]
    first = await proxy.chat(opening)
    again = await proxy.chat(opening)  # a retry of the same state
    assert again.headers["X-Memory-Session"] == first.headers["X-Memory-Session"]


# --- records ----------------------------------------------------------------------------


async def test_the_record_is_readable_right_after_the_response(proxy_factory: Any) -> None:
    harness = await proxy_factory(server={"admin_key": ADMIN})
    for i in range(8):
        resp = await harness.chat([{"role": "user", "content": f"seed packet {i}"}])
        request_id = resp.headers["X-Memory-Request-Id"]
        got = await harness.client.get(f"/memory/requests/{request_id}", headers=AUTH)
        assert got.status_code == 200, (i, got.text)
        assert got.json()["record"]["response"]["choices"][0]["message"]["content"] == (
            f"echo: seed packet {i}"
        )
    unknown = await harness.client.get("/memory/requests/01NOSUCHREQUEST0000000000", headers=AUTH)
    assert unknown.status_code == 404
