"""`memproxy logs | inspect | ab-report`: read the real store the proxy wrote."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from proxy.candidate_rows import grouped_candidates
from proxy.inspect_cli import show_request, token_bar
from proxy.logs_cli import show_logs
from tests.conftest import make_config
from tests.integration.test_admin import ask, long_history


def logs_args(**overrides: Any) -> argparse.Namespace:
    return argparse.Namespace(**{"n": 10, "session": None, "json": False, "q": None, **overrides})


@pytest.fixture
async def recorded(proxy: Any) -> dict[str, Any]:
    """Two sessions: a long one assembled under a small budget, and a short one."""
    museums = long_history()
    first = await ask(proxy, museums, "What should the total budget be?")
    second = await ask(proxy, museums, "Which museum opens first?")
    bread = await ask(proxy, [long_history(0)[0]], "How do I bake BREAD at home?")
    await proxy.settle()
    return {"proxy": proxy, "first": first, "second": second, "bread": bread}


async def test_logs_prints_markdown_per_request_oldest_first(
    recorded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = recorded["proxy"].services.settings
    assert await show_logs(settings, logs_args()) == 0
    out = capsys.readouterr().out
    ids = [recorded[k].headers["X-Memory-Request-Id"] for k in ("first", "second", "bread")]
    headings = re.findall(r"^# \S+ +(\S+)$", out, flags=re.M)
    assert headings == ids
    first = recorded["first"]
    raw, sent = first.headers["X-Memory-Raw-Tokens"], first.headers["X-Memory-Context-Tokens"]
    assert f"tokens: {raw} raw → {sent} forwarded" in out
    assert f"session: `{first.headers['X-Memory-Session']}`" in out
    assert "mode: managed · policy: full · model: `stub` · status: 200" in out
    assert "- **user**: What should the total budget be?" in out
    assert "## Answer\n\necho: What should the total budget be?" in out


async def test_logs_filters_by_session_count_and_text(
    recorded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    settings = recorded["proxy"].services.settings
    session = recorded["first"].headers["X-Memory-Session"]
    await show_logs(settings, logs_args(session=session, n=1))
    out = capsys.readouterr().out
    assert out.count("\n# ") + out.startswith("# ") == 1
    assert recorded["second"].headers["X-Memory-Request-Id"] in out

    await show_logs(settings, logs_args(q="bread", json=True))
    found = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in found] == [recorded["bread"].headers["X-Memory-Request-Id"]]

    await show_logs(settings, logs_args(q="no such text 100%_", json=True))
    assert json.loads(capsys.readouterr().out) == []


async def test_logs_json_holds_the_exact_forwarded_messages(
    recorded: dict[str, Any], stub_upstream: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = recorded["proxy"].services.settings
    await show_logs(settings, logs_args(json=True, n=0))
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 3
    assert [r["record"]["forwarded"] for r in records] == [
        r.body["messages"] for r in stub_upstream.received[-3:]
    ]
    assert "record_json" not in records[0]


async def test_inspect_shows_sections_candidates_and_messages(
    recorded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    proxy, first = recorded["proxy"], recorded["first"]
    request_id = first.headers["X-Memory-Request-Id"]
    assert await show_request(proxy.services.settings, request_id) == 0
    out = capsys.readouterr().out
    row = await proxy.services.store.get_request(request_id)
    record = json.loads(row["record_json"])
    managed = record["managed"]
    assert request_id in out
    assert f"raw {row['raw_tokens']} → forwarded {row['context_tokens']}" in out
    assert f"Sections: {managed['tokens']} / 300 tokens" in out
    second = await proxy.services.store.get_request(
        recorded["second"].headers["X-Memory-Request-Id"]
    )
    assert second["prefix_share"] is not None
    assert await show_request(proxy.services.settings, second["id"]) == 0
    share = f"{100 * second['prefix_share']:.0f}% of the tokens repeat"
    assert share in capsys.readouterr().out
    for section in managed["sections"]:
        if section["tokens"]:
            assert f"{section['name']} {section['tokens']} ({section['count']})" in out
    assert "█" in out
    # The long run of dropped (or summarised) turns is one row, not one row per turn.
    dropped = [c for c in managed["candidates"] if c["decision"] in ("dropped", "compressed")]
    assert sum(c["tokens"] for c in dropped) > 150
    assert len(re.findall(r"dropped", out)) < 5
    assert re.search(r"\d+–\d+ \((\d+) turns\)", out)
    assert f"Forwarded messages ({len(record['forwarded'])})" in out
    assert "echo: What should the total budget be?" in out
    # Conversation text is printed literally, never read as rich markup ("[constraint]").
    for tag in re.findall(r"\[[a-z]+\]", json.dumps(record["forwarded"])):
        assert tag in out


async def test_inspect_reports_an_unknown_request(
    proxy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await show_request(proxy.services.settings, "01NOPE") == 1
    assert "no request record '01NOPE'" in capsys.readouterr().err


def test_grouping_folds_only_consecutive_dropped_turns_with_one_reason() -> None:
    def turn(i: int, decision: str = "dropped", reason: str = "outside recent window") -> Any:
        return {"kind": "turn", "ref": str(i), "tokens": 10, "score": 0.0, "decision": decision,
                "reason": reason, "section": "recent"}  # fmt: skip

    rows = list(
        grouped_candidates(
            [turn(0), turn(1), turn(2), turn(3, reason="other"), turn(4, "kept"), turn(5)]
        )
    )
    assert [r["ref"] for r in rows] == ["0–2 (3 turns)", "3", "4", "5"]
    assert rows[0]["tokens"] == 30
    # The assembler may have folded the run itself already.
    folded = {**turn(0), "kind": "turns", "ref": "0-11", "tokens": 198}
    assert [r["ref"] for r in grouped_candidates([folded])] == ["0–11 (12 turns)"]


def test_token_bar_is_proportional_and_keeps_small_sections_visible() -> None:
    bar = token_bar(
        [
            {"name": "system", "tokens": 1, "count": 1},
            {"name": "recent", "tokens": 300, "count": 8},
            {"name": "summary", "tokens": 0, "count": 0},
        ],
        width=40,
    )
    assert len(bar.plain) == 40
    assert [span.end - span.start for span in bar.spans] == [1, 39]


async def test_cli_runs_against_the_configured_store_without_litellm(
    recorded: dict[str, Any], stub_upstream: Any, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(make_config(stub_upstream.url, tmp_path / "memproxy.db")))
    request_id = recorded["first"].headers["X-Memory-Request-Id"]
    script = (
        "import sys; from proxy.cli import main\n"
        f"for argv in (['logs', '-n', '1', '--config', {str(config)!r}],\n"
        f"             ['inspect', {request_id!r}, '--config', {str(config)!r}],\n"
        f"             ['ab-report', '--config', {str(config)!r}]):\n"
        "    assert main(argv) == 0\n"
        "print('litellm imported:', 'litellm' in sys.modules)\n"
    )
    env = {**os.environ, "COLUMNS": "120"}
    argv = [sys.executable, "-c", script]
    done = await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "litellm imported: False" in done.stdout
    assert recorded["bread"].headers["X-Memory-Request-Id"] in done.stdout
    assert "A/B by mode" in done.stdout
    assert re.search(r"managed\s+│\s+3\s+│\s+2\s+│", done.stdout)


# aiosqlite's worker thread for the connection that failed reports back after
# `asyncio.run` closed its loop (harmless: in the CLI the process exits). The
# test waits for that thread, so that its complaint is filtered here and not
# reported against whichever test runs next.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_store_that_cannot_be_opened_is_one_line_not_a_traceback(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from proxy.cli import main

    config = tmp_path / "config.yaml"
    config.write_text(
        f"memory:\n  database_url: sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'x.db'}\n"
    )
    with pytest.raises(SystemExit) as exited:
        main(["logs", "--config", str(config)])
    for thread in threading.enumerate():
        if "_connection_worker_thread" in thread.name:
            thread.join(timeout=10)
    # A file that is not there is never created (issue #22): one line naming it.
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"memproxy: no database at {tmp_path / 'no-such-dir' / 'x.db'} ")
    assert not (tmp_path / "no-such-dir").exists()
