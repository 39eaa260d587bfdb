"""`memproxy ab-report --judge`: recorded compare requests, judged by the stub, billed."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from proxy.ab_judge import ABJudgeError, parse_since, raw_goes_first
from proxy.cli import main

SUNDAY = "Sunday the 15th at the library annex, at most five books each."
SATURDAY = "Saturday the 14th at the library annex, at most five books each."


def history(topic: str, ask: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You help a neighbourhood plan its events."},
        {"role": "user", "content": f"The {topic} will be on Saturday the 14th."},
        {"role": "assistant", "content": "Noted, Saturday the 14th."},
        {"role": "user", "content": f"Change of plan: the {topic} moves to Sunday the 15th."},
        {"role": "assistant", "content": "Updated to Sunday the 15th."},
        {"role": "user", "content": ask},
    ]


def scripted(body: dict[str, Any]) -> dict[str, Any] | None:
    """The judge: correct for the answer that says Sunday, stale for the other;
    malformed (twice: the retry gets the stub's echo) for the pottery conversation."""
    prompt = body["messages"][-1]["content"]
    if "<answer_a>" not in prompt:
        return None
    if "pottery" in prompt:
        return {"content": "Both look fine to me."}
    a = re.search(r"<answer_a>\n(.*?)\n</answer_a>", prompt, re.S)
    assert a is not None
    a_ok = "Sunday" in a.group(1)
    verdicts = {
        "a": {"verdict": "correct" if a_ok else "stale", "reason": "day"},
        "b": {"verdict": "stale" if a_ok else "correct", "reason": "day"},
        "better": "a" if a_ok else "b",
    }
    return {"content": json.dumps(verdicts)}


@pytest.fixture
async def recorded(proxy_factory: Any, stub_upstream: Any, tmp_path: Path) -> dict[str, Any]:
    """Two compare requests from two tenants, each arm's answer known from its record."""
    params = {"model": "openai/gpt-4o-mini", "api_base": stub_upstream.url, "api_key": "sk-t-1"}
    models = [{"model_name": "stub", "litellm_params": params},
              {"model_name": "grader", "litellm_params": params}]  # fmt: skip
    proxy = await proxy_factory(model_list=models)
    arms: dict[str, str] = {}
    for key, topic in (("tenant-one", "book swap"), ("tenant-two", "pottery class")):
        ask = f"What is the final plan for the {topic}?"
        stub_upstream.queue_replies(ask, {"content": SUNDAY}, {"content": SATURDAY})
        resp = await proxy.chat(
            history(topic, ask),
            headers={"X-Memory-Mode": "compare", "Authorization": f"Bearer {key}"},
        )
        assert resp.status_code == 200
        await proxy.settle()
        row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
        record = json.loads(row["record_json"])
        raw = record["compare"]["raw_response"]["choices"][0]["message"]["content"]
        arms[topic] = "raw" if raw == SUNDAY else "managed"  # the arm that said Sunday
        arms[f"{topic}:tenant"] = row["tenant_id"]
    stub_upstream.reset()
    stub_upstream.state.responder = scripted
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(proxy.services.settings.model_dump()), encoding="utf-8")
    return {"config": str(config), "arms": arms}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_ab_report_judges_both_answers_and_bills_both_arms(
    recorded: dict[str, Any], stub_upstream: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ab-report", "--judge", "grader", "--config", recorded["config"], "--json"]
    code, out, err = await asyncio.to_thread(run_cli, [*argv, "--yes"], capsys)
    assert code == 0, err
    assert "2 judge calls to grader" in err  # the estimate is shown even with --yes
    report = json.loads(out)
    assert (report["compare_requests"], report["judged"]) == (2, 2)
    by_id = {r["tenant_id"]: r for r in report["requests"]}
    swap = by_id[recorded["arms"]["book swap:tenant"]]
    sunday_arm = recorded["arms"]["book swap"]
    other = "managed" if sunday_arm == "raw" else "raw"
    assert (swap[sunday_arm], swap[other], swap["better"]) == ("correct", "stale", sunday_arm)
    pottery = by_id[recorded["arms"]["pottery class:tenant"]]
    assert pottery["raw"] == pottery["managed"] == "unjudged"
    assert pottery["reason"].startswith("malformed verdict twice")
    assert len(report["by_tenant"]) == 2
    # The judge saw the conversation up to the question, not the stored answer.
    judged = [
        r for r in stub_upstream.received if "<answer_a>" in r.body["messages"][-1]["content"]
    ]
    conversation = judged[0].body["messages"][-1]["content"].split("</conversation>")[0]
    assert conversation.rstrip().endswith("?")
    for arm in ("raw", "managed"):
        bill = report["bill"][arm]
        assert bill["tokens"]["prompt"] > 0
        assert bill["cost"] > 0
        assert bill["unpriced"] == 0
    assert report["judge_cost"] > 0


async def test_ab_report_sample_tenant_window_and_refusal(
    recorded: dict[str, Any], stub_upstream: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["ab-report", "--judge", "grader", "--config", recorded["config"], "--json"]
    code, _, err = await asyncio.to_thread(run_cli, base, capsys)
    assert code == 2  # no terminal, no --yes: nothing is sent
    assert "pass --yes" in err
    assert not stub_upstream.received

    code, out, _ = await asyncio.to_thread(run_cli, [*base, "--yes", "--sample", "1"], capsys)
    report = json.loads(out)
    assert (code, report["judged"], report["judgeable"]) == (0, 1, 2)

    tenant = recorded["arms"]["book swap:tenant"]
    code, out, _ = await asyncio.to_thread(run_cli, [*base, "--yes", "--tenant", tenant], capsys)
    report = json.loads(out)
    assert (report["compare_requests"], list(report["by_tenant"])) == (1, [tenant])

    code, out, _ = await asyncio.to_thread(
        run_cli, [*base, "--yes", "--since", "2999-01-01"], capsys
    )
    assert json.loads(out)["compare_requests"] == 0


def test_since_and_order_draw() -> None:
    assert parse_since("2d", 1_000_000.0) == 1_000_000.0 - 2 * 86400
    assert parse_since("2026-11-30", 0.0) == 1_795_996_800.0
    with pytest.raises(ABJudgeError, match="--since"):
        parse_since("last tuesday", 0.0)
    draws = {raw_goes_first(f"req{i}") for i in range(20)}
    assert draws == {True, False}  # both orders occur
    assert raw_goes_first("req1") == raw_goes_first("req1")


def test_judge_flags_without_judge_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab-report", "--sample", "3", "--since", "7d"]) == 2
    assert "--sample, --since only go with --judge" in capsys.readouterr().err
