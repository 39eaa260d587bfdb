"""`memproxy eval` on a scenario of our own: scores, and the records it hands on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy.eval_scenarios import Scenario
from proxy.evaluation import run_eval

FILLER = (
    "Side question: how do lighthouses keep their lenses clean in salty air, and who "
    "does that work on remote islands where nobody lives all year round?"
)


def scenario() -> dict[str, Any]:
    messages: list[dict[str, str]] = [
        {"role": "user", "content": "The greenhouse must never drop below 12 degrees at night."},
        {"role": "assistant", "content": "Understood: at least 12 degrees at night."},
    ]
    for i in range(6):
        messages += [
            {"role": "user", "content": f"{FILLER} ({i})"},
            {"role": "assistant", "content": f"Keepers and crews polish them by hand ({i})."},
        ]
    return {
        "id": "greenhouse-en",
        "language": "en",
        "system": "You help run a small greenhouse.",
        "messages": messages,
        "final_user": "What is the lowest night temperature allowed?",
        "budget_tokens": 260,
        "checks": [{"id": "night-minimum", "expect_any": ["12 degrees"], "stale_any": []}],
    }


async def test_eval_scores_a_scenario_and_hands_on_its_request_records(tmp_path: Path) -> None:
    (tmp_path / "greenhouse-en.json").write_text(json.dumps(scenario()), encoding="utf-8")
    seen: list[tuple[str, list[dict[str, Any]]]] = []

    def keep(sc: Scenario, rows: list[dict[str, Any]]) -> None:
        seen.append((sc.id, rows))

    report = await run_eval(tmp_path, policy="full", on_records=keep)
    result = report["scenarios"][0]
    assert result["recall"] == 1.0
    assert (result["degraded"], report["total"]["degraded"]) == (0, 0)
    assert result["rounds"] == 8  # one request per assistant turn, and the final question
    assert [sid for sid, _ in seen] == ["greenhouse-en"]
    rows = seen[0][1]
    assert [r["id"] for r in rows] == result["request_ids"]
    assert rows[0]["prefix_share"] == 0.0  # nothing before the session's first request
    shares = [r["prefix_share"] for r in rows[1:]]
    assert all(0.0 < s <= 1.0 for s in shares)
    assert result["prefix_share"] == sum(shares) / len(shares)  # the first request excluded
    assert rows[-1]["record"]["forwarded"][-1]["content"] == scenario()["final_user"]


def test_eval_keeps_its_records_for_inspect_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from proxy.cli import main

    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "greenhouse-en.json").write_text(json.dumps(scenario()), encoding="utf-8")
    other = {**scenario(), "id": "other-en"}
    (scenarios / "other-en.json").write_text(json.dumps(other), encoding="utf-8")
    db = tmp_path / "kept.db"
    argv = ["eval", "--scenarios", str(scenarios), "--scenario", "greenhouse-en"]
    assert main([*argv, "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in report["scenarios"]] == ["greenhouse-en"]
    final_id = report["scenarios"][0]["request_ids"][-1]
    assert db.exists()

    # The hint the table prints is a command that works as printed.
    assert main([*argv, "--db", str(tmp_path / "again.db")]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert "memproxy inspect" in hint
    assert "# greenhouse-en" in hint
    url = hint.split("MEMPROXY_DATABASE_URL=")[1].split()[0]
    monkeypatch.setenv("MEMPROXY_DATABASE_URL", f"sqlite+aiosqlite:///{db}")
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["inspect", final_id]) == 0
    assert scenario()["final_user"] in capsys.readouterr().out
    assert url == f"sqlite+aiosqlite:///{(tmp_path / 'again.db').resolve()}"


def test_eval_refuses_unknown_scenarios_and_a_used_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from proxy.cli import main

    (tmp_path / "greenhouse-en.json").write_text(json.dumps(scenario()), encoding="utf-8")
    assert main(["eval", "--scenarios", str(tmp_path), "--scenario", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no scenario nope" in err
    assert "greenhouse-en" in err
    used = tmp_path / "used.db"
    used.write_bytes(b"")
    assert main(["eval", "--scenarios", str(tmp_path), "--db", str(used)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["eval", "--scenarios", str(tmp_path / "empty")]) == 2
    assert "no scenario files" in capsys.readouterr().err


def test_a_client_tool_call_forwarded_without_its_null_content_is_not_the_proxys_text() -> None:
    """litellm drops `"content": null` from a tool-call message; the call is
    still the client's own, so an old value in its arguments is not stale."""
    from proxy.eval_scoring import score_final

    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "book_room", "arguments": '{"room": "Cedar Hall"}'},
            }
        ],
    }
    scenario = Scenario(
        id="s",
        language="en",
        system="sys",
        messages=[{"role": "user", "content": "Book Cedar Hall."}, call],
        tools=None,
        final_user="What did we book?",
        budget=500,
        checks=[{"id": "room", "expect_any": ["Birch Hall"], "stale_any": ["Cedar Hall"]}],
    )
    client = [{"role": "system", "content": "sys"}, *scenario.messages]
    relayed = {k: v for k, v in call.items() if v is not None}
    assert score_final(scenario, [client[0], client[1], relayed], client)[1] == []
    rewritten = {**relayed, "content": "Booked Cedar Hall for you."}
    assert score_final(scenario, [client[0], client[1], rewritten], client)[1] == ["room"]
