"""Admin API over HTTP: auth, listing, exact records, operator edits, erasure, A/B."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

ADMIN_KEY = "adm-secret-key-42"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
SYSTEM = {"role": "system", "content": "You are a helpful travel planner."}
BUDGET_RULE = "My budget is capped at 300 euros, no more."
SMALL_BUDGET = {"X-Memory-Budget": "300"}


def long_history(rounds: int = 12) -> list[dict[str, Any]]:
    """A rule stated first, then enough chatter that a 300-token budget drops it."""
    messages = [
        SYSTEM,
        {"role": "user", "content": BUDGET_RULE},
        {"role": "assistant", "content": "Noted: 300 euros max."},
    ]
    for i in range(rounds):
        messages += [
            {"role": "user", "content": f"Tell me about museum number {i} in the old town."},
            {"role": "assistant", "content": f"Museum {i} opens at nine; go early, book online."},
        ]
    return messages


# Item edits and pins act on the working-memory block of the layered preset.
LAYERED = {"X-Memory-Policy": "layered"}


async def ask(proxy: Any, history: list[dict[str, Any]], text: str, **headers: str) -> Any:
    resp = await proxy.chat(
        [*history, {"role": "user", "content": text}], headers={**SMALL_BUDGET, **headers}
    )
    assert resp.status_code == 200, resp.text
    history.extend(
        [
            {"role": "user", "content": text},
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]},
        ]
    )
    return resp


def forwarded_text(stub_upstream: Any) -> str:
    return "\n".join(str(m.get("content")) for m in stub_upstream.received[-1].body["messages"])


@pytest.fixture
async def admin_proxy(proxy_factory: Any) -> Any:
    return await proxy_factory(server={"admin_key": ADMIN_KEY})


@pytest.mark.parametrize(
    "path",
    [
        "/memory/sessions",
        "/memory/sessions/x",
        "/memory/requests",
        "/memory/requests/x",
        "/memory/ab",
    ],
)
async def test_admin_routes_refuse_a_missing_or_wrong_key(admin_proxy: Any, path: str) -> None:
    missing = await admin_proxy.client.get(path)
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "authentication_error"
    wrong = await admin_proxy.client.get(path, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403
    assert wrong.json()["error"]["code"] == "forbidden"
    patch = await admin_proxy.client.patch(f"{path}/items/i", json={"pinned": True})
    delete = await admin_proxy.client.delete(path, headers={"Authorization": "Bearer nope"})
    assert patch.status_code in (401, 404, 405)
    assert delete.status_code in (403, 405)


async def test_admin_routes_are_closed_when_no_admin_key_is_configured(proxy: Any) -> None:
    resp = await proxy.client.get("/memory/sessions", headers=ADMIN)
    assert resp.status_code == 403
    assert set(resp.json()["error"]) == {"message", "type", "param", "code"}


async def test_sessions_list_and_detail(admin_proxy: Any) -> None:
    history = long_history(2)
    first = await ask(admin_proxy, history, "Which museum first?")
    await ask(admin_proxy, [SYSTEM], "A separate conversation about bread.")
    await admin_proxy.settle()
    session_id = first.headers["X-Memory-Session"]

    listing = (await admin_proxy.client.get("/memory/sessions", headers=ADMIN)).json()
    assert len(listing["data"]) == 2
    assert session_id in {s["id"] for s in listing["data"]}
    limited = (await admin_proxy.client.get("/memory/sessions?limit=1", headers=ADMIN)).json()
    assert len(limited["data"]) == 1

    detail = (await admin_proxy.client.get(f"/memory/sessions/{session_id}", headers=ADMIN)).json()
    assert detail["session"]["id"] == session_id
    assert [t["ordinal"] for t in detail["turns"]] == list(range(len(history) - 1))
    assert any(i["value"] == BUDGET_RULE for i in detail["items"])
    assert detail["forks"] == []
    assert detail["summary"] is None

    missing = await admin_proxy.client.get("/memory/sessions/nope", headers=ADMIN)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "session_not_found"


async def test_requests_pagination_walks_every_record_once_newest_first(admin_proxy: Any) -> None:
    history = [SYSTEM]
    sent = [(await ask(admin_proxy, history, f"question {i}")) for i in range(5)]
    await ask(admin_proxy, [SYSTEM], "another session entirely")
    await admin_proxy.settle()
    session_id = sent[0].headers["X-Memory-Session"]
    expected = [r.headers["X-Memory-Request-Id"] for r in reversed(sent)]

    seen: list[str] = []
    cursor = None
    for _ in range(10):
        query = f"/memory/requests?session={session_id}&limit=2"
        page = (
            await admin_proxy.client.get(
                query + (f"&cursor={cursor}" if cursor else ""), headers=ADMIN
            )
        ).json()
        seen += [r["id"] for r in page["data"]]
        assert all("record_json" not in r for r in page["data"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == expected
    everything = (await admin_proxy.client.get("/memory/requests?limit=50", headers=ADMIN)).json()
    assert len(everything["data"]) == 6
    assert everything["data"][0]["preview"] == "another session entirely"


async def test_a_record_rebuilds_the_forwarded_messages_exactly(
    admin_proxy: Any, stub_upstream: Any
) -> None:
    history = long_history()
    resp = await ask(admin_proxy, history, "What should the total budget be?")
    await admin_proxy.settle()
    request_id = resp.headers["X-Memory-Request-Id"]
    body = (await admin_proxy.client.get(f"/memory/requests/{request_id}", headers=ADMIN)).json()
    record = body["record"]
    assert record["forwarded"] == stub_upstream.received[-1].body["messages"]
    assert record["managed"]["messages"] == record["forwarded"]
    assert body["context_tokens"] == int(resp.headers["X-Memory-Context-Tokens"])
    assert body["raw_tokens"] == int(resp.headers["X-Memory-Raw-Tokens"])
    assert body["context_tokens"] < body["raw_tokens"]
    assert sum(s["tokens"] for s in record["managed"]["sections"]) == body["context_tokens"]
    missing = await admin_proxy.client.get("/memory/requests/nope", headers=ADMIN)
    assert missing.status_code == 404


async def _budget_item(proxy: Any, session_id: str) -> dict[str, Any]:
    detail = (await proxy.client.get(f"/memory/sessions/{session_id}", headers=ADMIN)).json()
    return next(i for i in detail["items"] if i["value"] == BUDGET_RULE or i["slot"] == "budget")


async def test_revoke_edit_and_restore_take_effect_on_the_next_request(
    admin_proxy: Any, stub_upstream: Any
) -> None:
    history = long_history()
    first = await ask(admin_proxy, history, "What should the total budget be?", **LAYERED)
    assert BUDGET_RULE in forwarded_text(stub_upstream)  # only memory can carry it now
    await admin_proxy.settle()
    session_id = first.headers["X-Memory-Session"]
    item = await _budget_item(admin_proxy, session_id)
    url = f"/memory/sessions/{session_id}/items/{item['id']}"

    revoked = await admin_proxy.client.patch(url, json={"status": "revoked"}, headers=ADMIN)
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["status"] == "revoked"
    await ask(admin_proxy, history, "Any museum tips for the afternoon?", **LAYERED)
    assert "300 euros" not in forwarded_text(stub_upstream)
    await admin_proxy.settle()

    edited = await admin_proxy.client.patch(
        url, json={"status": "active", "value": "My budget is capped at 450 euros."}, headers=ADMIN
    )
    assert edited.status_code == 200, edited.text
    notes = [v["note"] for v in edited.json()["versions"]]
    assert notes == ["revoked by operator", "edited by operator", "restored by operator"]
    await ask(admin_proxy, history, "And what about the budget for dinner?", **LAYERED)
    text = forwarded_text(stub_upstream)
    assert "450 euros" in text
    assert "300 euros" not in text


async def test_pin_takes_effect_on_the_next_request(admin_proxy: Any) -> None:
    history = long_history()
    first = await ask(admin_proxy, history, "Where should we eat tonight?", **LAYERED)
    await admin_proxy.settle()
    session_id = first.headers["X-Memory-Session"]
    item = await _budget_item(admin_proxy, session_id)
    url = f"/memory/sessions/{session_id}/items/{item['id']}"

    pinned = await admin_proxy.client.patch(url, json={"pinned": True}, headers=ADMIN)
    assert pinned.json()["pinned"] is True
    second = await ask(admin_proxy, history, "Where should we eat tomorrow?", **LAYERED)
    await admin_proxy.settle()
    record_url = f"/memory/requests/{second.headers['X-Memory-Request-Id']}"
    record = (await admin_proxy.client.get(record_url, headers=ADMIN)).json()["record"]
    scores = [
        c["score"]
        for c in record["managed"]["candidates"]
        if c["kind"] == "item" and c["ref"] == item["id"]
    ]
    assert scores
    assert scores[0] >= 100  # the pinned bonus: the cached copy was refreshed


async def test_patch_rejects_bad_input(admin_proxy: Any) -> None:
    history = long_history(1)
    first = await ask(admin_proxy, history, "Hello there")
    await admin_proxy.settle()
    session_id = first.headers["X-Memory-Session"]
    item = await _budget_item(admin_proxy, session_id)
    url = f"/memory/sessions/{session_id}/items/{item['id']}"
    empty = await admin_proxy.client.patch(url, json={}, headers=ADMIN)
    assert empty.status_code == 400
    bad_status = await admin_proxy.client.patch(url, json={"status": "gone"}, headers=ADMIN)
    assert bad_status.status_code == 400
    assert bad_status.json()["error"]["param"] == "status"
    unknown = await admin_proxy.client.patch(
        f"/memory/sessions/{session_id}/items/nope", json={"pinned": True}, headers=ADMIN
    )
    assert unknown.status_code == 404


def _cells_mentioning(db_path: Path, needle: str) -> list[tuple[str, str]]:
    """Every (table, column) whose value contains `needle`, in the real SQLite file."""
    found = []
    with sqlite3.connect(db_path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            for column in columns:
                hits = db.execute(
                    f"SELECT count(*) FROM {table} WHERE CAST({column} AS TEXT) LIKE ?",
                    (f"%{needle}%",),
                ).fetchone()[0]
                if hits:
                    found.append((table, column))
    return found


async def test_delete_erases_every_row_of_the_session(admin_proxy: Any, tmp_path: Path) -> None:
    history = long_history(3)
    first = await ask(admin_proxy, history, "Plan the first day.")
    await ask(admin_proxy, history, "Plan the second day.")
    other = await ask(admin_proxy, [SYSTEM], "Unrelated: how do I bake bread?")
    # An edited turn forks a child session that points at this one.
    edited = [*history[:3], {"role": "user", "content": "Tell me about the harbour instead."}]
    fork = await admin_proxy.chat(edited, headers=SMALL_BUDGET)
    await admin_proxy.settle()
    session_id = first.headers["X-Memory-Session"]
    fork_id = fork.headers["X-Memory-Session"]
    assert fork_id != session_id
    detail = (await admin_proxy.client.get(f"/memory/sessions/{session_id}", headers=ADMIN)).json()
    assert [f["id"] for f in detail["forks"]] == [fork_id]
    db_path = tmp_path / "memproxy.db"
    assert len(_cells_mentioning(db_path, session_id)) >= 4

    resp = await admin_proxy.client.delete(f"/memory/sessions/{session_id}", headers=ADMIN)
    assert resp.status_code == 200
    assert resp.json()["deleted"] is True
    assert _cells_mentioning(db_path, session_id) == []
    assert _cells_mentioning(db_path, other.headers["X-Memory-Session"])  # others untouched
    assert _cells_mentioning(db_path, fork_id)
    again = await admin_proxy.client.delete(f"/memory/sessions/{session_id}", headers=ADMIN)
    assert again.status_code == 404
    # The cache was dropped too: the same history now starts from a clean slate.
    restart = await admin_proxy.chat(history, headers=SMALL_BUDGET)
    assert restart.status_code == 200
    assert restart.headers["X-Memory-Session"] != session_id


async def test_ab_report_groups_records_by_mode(admin_proxy: Any) -> None:
    managed = long_history()
    await ask(admin_proxy, managed, "What should the total budget be?")
    raw = long_history(11)
    await ask(admin_proxy, raw, "What should the total budget be?", **{"X-Memory-Mode": "raw"})
    await ask(admin_proxy, raw, "And for dinner?", **{"X-Memory-Mode": "raw"})
    failed = await admin_proxy.chat(
        [SYSTEM, {"role": "user", "content": "hi"}], model="unreachable"
    )
    assert failed.status_code >= 500
    await admin_proxy.settle()
    report = (await admin_proxy.client.get("/memory/ab", headers=ADMIN)).json()["data"]
    arms = {a["mode"]: a for a in report}
    assert set(arms) == {"managed", "raw"}
    assert arms["raw"]["requests"] == 2
    assert arms["raw"]["sessions"] == 1
    assert arms["raw"]["forwarded_tokens"] == arms["raw"]["raw_tokens"]
    assert arms["managed"]["requests"] == 2
    assert arms["managed"]["errors"] == 1
    assert arms["managed"]["forwarded_tokens"] < arms["managed"]["raw_tokens"]
    assert arms["managed"]["latency_p50_ms"] <= arms["managed"]["latency_p95_ms"]
