"""The web inspector in a real headless Chromium (Debian's), driven by Playwright.

The proxy runs under uvicorn in a thread on 127.0.0.1; Chromium is told to
resolve no other host, so the page can only reach the proxy under test.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import make_config
from tests.integration.test_admin import ADMIN, ADMIN_KEY, long_history

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
# The README's screenshot of /ui, retaken by every run of the test below.
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "inspector.png"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Belt and braces for the network guard: no name but the loopback resolves.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]

if not CHROMIUM.exists():
    pytest.skip(
        "needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="needs `pip install playwright`")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(stub_upstream: Any, tmp_path: Path) -> Iterator[str]:
    import uvicorn

    from proxy.config import settings_from_dict
    from proxy.http.app import create_app

    config = make_config(
        stub_upstream.url, tmp_path / "memproxy.db", server={"admin_key": ADMIN_KEY}
    )
    app = create_app(settings_from_dict(config, env={}))
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name="memproxy-ui-test", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped during start-up"
        assert time.monotonic() < deadline, "uvicorn did not start within 30 s"
        time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def _conversation(base: str) -> dict[str, Any]:
    """A session with a dropped history, a revised value and an operator revocation."""
    history = long_history()
    last: httpx.Response | None = None
    with httpx.Client(base_url=base, timeout=30) as client:
        for text in (
            "Please always answer in English, and keep it short.",
            "What should the total budget be?",
            "Actually, change the budget to 450 euros instead.",
            "Which museum should we see first?",
        ):
            history.append({"role": "user", "content": text})
            last = client.post(
                "/v1/chat/completions",
                json={"model": "stub", "messages": history},
                headers={"X-Memory-Budget": "300"},
            )
            assert last.status_code == 200, last.text
            history.append(last.json()["choices"][0]["message"])
        assert last is not None
        session_id = last.headers["X-Memory-Session"]
        request_id = last.headers["X-Memory-Request-Id"]
        # Records are written off the response path: wait for the last one.
        for _ in range(100):
            row = client.get(f"/memory/requests/{request_id}", headers=ADMIN)
            if row.status_code == 200:
                break
            time.sleep(0.05)
        detail = client.get(f"/memory/sessions/{session_id}", headers=ADMIN).json()
        rule = next(i for i in detail["items"] if "English" in i["value"])
        revoked = client.patch(
            f"/memory/sessions/{session_id}/items/{rule['id']}",
            json={"status": "revoked"},
            headers=ADMIN,
        )
        assert revoked.status_code == 200
    return {"session": session_id, "request": request_id, "row": row.json(), "detail": detail}


def test_inspector_shows_a_real_requests_context(served: str) -> None:
    data = _conversation(served)
    row, record = data["row"], data["row"]["record"]
    sections = [s for s in record["managed"]["sections"] if s["tokens"] > 0]
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(f"{served}/ui")
            page.fill("#key", ADMIN_KEY)
            page.click("#connect")
            page.click(f"[data-session='{data['session']}']")
            page.click(f"[data-request='{data['request']}']")
            page.wait_for_selector("#section-bar")

            for section in sections:
                segment = page.locator(f"#section-bar [data-section='{section['name']}']")
                assert segment.get_attribute("data-tokens") == str(section["tokens"])
                legend = page.locator(f"#legend [data-legend='{section['name']}']").inner_text()
                assert f"{section['tokens']} tok · {section['count']}" in legend
            assert page.inner_text("#raw-tokens") == str(row["raw_tokens"])
            assert page.inner_text("#forwarded-tokens") == str(row["context_tokens"])
            assert page.inner_text("#fact-request") == data["request"]
            share = row["prefix_share"]
            expected = "-" if share is None else f"{round(100 * share)}% repeats the previous"
            assert expected in page.inner_text("#fact-prefix")
            forwarded = page.locator("#forwarded-side .msg")
            assert forwarded.count() == len(record["forwarded"])
            assert "450 euros" in page.inner_text("#forwarded-side")
            # The raw side holds the whole conversation; turns not sent verbatim
            # (dropped, or compressed into the rolling summary) fold into one line.
            assert page.locator("#raw-side .msg.dropped").count() > 5
            folded = page.inner_text("#raw-side details.dropped-run summary")
            assert "dropped" in folded or "summarised" in folded
            assert page.locator("#candidates tbody tr").count() >= 3
            # The memory timeline shows the supersession and the operator's revocation.
            items = page.inner_text("#items")
            assert "superseded" in items
            assert "revoked by operator" in items
            assert "450 euros" in items

            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "inspector.png"))
            page.screenshot(path=str(README_SCREENSHOT))
            page.locator("#items").scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "inspector-memory.png"))
        finally:
            browser.close()
    assert errors == []


def test_the_printed_url_opens_the_inspector_and_sessions_read_as_words(served: str) -> None:
    """`memproxy serve` prints /ui#key=...: the page takes the key from the fragment."""
    with httpx.Client(base_url=served, timeout=30) as client:
        for headers, text in (
            ({"X-Memory-Session": "balcony-herbs"}, "Which herbs like a windy balcony?"),
            ({}, "Help me choose a compost bin for a small yard."),
        ):
            resp = client.post(
                "/v1/chat/completions",
                json={"model": "stub", "messages": [{"role": "user", "content": text}]},
                headers=headers,
            )
            assert resp.status_code == 200, resp.text
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{served}/ui#key={ADMIN_KEY}")
            page.wait_for_selector("#sessions .entry")
            listed = page.inner_text("#sessions")
            assert "balcony-herbs" in listed  # a named session by its name
            assert "Help me choose a compost bin" in listed  # the others by their opening
            assert ADMIN_KEY not in page.url  # the key left the address bar
        finally:
            browser.close()


def test_inspector_page_reports_a_wrong_key(served: str) -> None:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{served}/ui")
            page.fill("#key", "not-the-key")
            page.click("#connect")
            page.wait_for_selector("#status.error")
            assert page.inner_text("#status").startswith("403")
        finally:
            browser.close()


def test_inspector_shows_and_revokes_the_users_long_term_items(served: str) -> None:
    user = {"X-Memory-User": "ivy"}
    system = {"role": "system", "content": "You are a travel assistant."}
    with httpx.Client(base_url=served, timeout=30) as client:
        for turns in (
            ["I'm planning a weekend in Lisbon.", "Always book non-smoking rooms for me."],
            ["Please book a hotel room in Porto."],
        ):
            history = [system]
            for text in turns:
                history.append({"role": "user", "content": text})
                last = client.post(
                    "/v1/chat/completions",
                    json={"model": "stub", "messages": history},
                    headers=user,
                )
                assert last.status_code == 200, last.text
                history.append(last.json()["choices"][0]["message"])
            # Consolidation runs off the response path: wait until it has kept the rule.
            for _ in range(200):
                if client.get("/memory/users/ivy/items", headers=ADMIN).json()["data"]:
                    break
                time.sleep(0.05)
        session, request = last.headers["X-Memory-Session"], last.headers["X-Memory-Request-Id"]
        for _ in range(100):
            if client.get(f"/memory/requests/{request}", headers=ADMIN).status_code == 200:
                break
            time.sleep(0.05)
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{served}/ui")
            page.fill("#key", ADMIN_KEY)
            page.click("#connect")
            page.click(f"[data-session='{session}']")
            page.click(f"[data-request='{request}']")
            page.wait_for_selector("#longterm")
            assert "non-smoking rooms" in page.inner_text("#longterm")
            assert page.locator("#section-bar [data-section='longterm']").count() == 1
            page.click("#longterm button:has-text('Revoke')")
            page.wait_for_selector("#longterm .tag.revoked")
        finally:
            browser.close()
    assert errors == []
    with httpx.Client(base_url=served, timeout=30) as client:
        items = client.get("/memory/users/ivy/items", headers=ADMIN).json()["data"]
    assert [i["status"] for i in items] == ["revoked"]
