"""The linker behind each memory decision reaches the request record and `memproxy inspect`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.inspect_cli import show_request

SYSTEM = {"role": "system", "content": "You help plan events."}


async def converse(proxy: Any, lines: list[str]) -> list[str]:
    """Say each line in turn (the stub answers); the request id of each turn."""
    history: list[dict[str, Any]] = [SYSTEM]
    ids = []
    for text in lines:
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history)
        assert resp.status_code == 200, resp.text
        history.append(resp.json()["choices"][0]["message"])
        ids.append(resp.headers["X-Memory-Request-Id"])
    await proxy.settle()
    return ids


async def decisions_of(proxy: Any, request_id: str) -> list[dict[str, str]]:
    row = await proxy.services.store.get_request(request_id)
    record = json.loads(row["record_json"])
    return [d for op in record["operations"] for d in op.get("decisions", [])]


async def test_an_english_revision_is_named_in_the_record_and_by_inspect(
    proxy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = await converse(
        proxy,
        [
            "We're hosting a dinner for 40 guests at the boathouse on Friday.",
            "Actually, make that 55 guests, the rowing club is coming too.",
        ],
    )
    found = await decisions_of(proxy, ids[-1])
    assert [(d["op"], d["linker"]) for d in found] == [("supersede", "explicit")]
    assert "40 guests → 55 guests" in found[0]["why"]
    assert await show_request(proxy.services.settings, ids[-1]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as printed, less the wrapping
    assert "Memory decisions" in out
    assert "revised by explicit: change cue on the same subject, 40 guests → 55 guests" in out
    # The first request changed nothing that was already there.
    assert await decisions_of(proxy, ids[0]) == []


async def test_a_chinese_revocation_is_named_in_the_record_and_by_inspect(
    proxy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = await converse(proxy, ["以后每次回复都先列一个待办清单。", "不用再列待办清单了。"])
    found = await decisions_of(proxy, ids[-1])
    assert [(d["op"], d["linker"]) for d in found] == [("revoke", "revocation")]
    assert await show_request(proxy.services.settings, ids[-1]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "revoked by revocation: the revocation names it: “待办清单”" in out
