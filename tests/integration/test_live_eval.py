"""`memproxy eval --live` against the local stub playing the provider and the judge.

The history's requests go to the run's own scripted stub; the test's stub (the
"provider") sees only the final requests and the judge's calls, and answers them
from queued replies: raw arm first, then managed, as the run sends them.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from proxy.answers import Tokens, bill
from proxy.cli import main
from proxy.config import settings_from_dict
from proxy.eval_scenarios import Scenario
from proxy.eval_scoring import format_tokens
from proxy.live_cli import confirm_spend
from proxy.live_eval import run_live
from proxy.live_plan import Estimate, LiveOptions, final_messages, read_results
from proxy.settings import Settings
from proxy.stub.state import Fault
from proxy.tokens import TokenCounter
from proxy.upstream import Upstream

ASK = "Please give me a rundown of what we settled for the swap."
RAW_ANSWER = "The swap is on Saturday the 14th at the library annex; bring up to five books."
MANAGED_ANSWER = "Sunday the 15th at the library annex, at most five books each."


def swap_scenario(sid: str = "book-swap-en", ask: str = ASK) -> dict[str, Any]:
    turns = [
        "The book swap will be on Saturday the 14th at the library annex.",
        "Great, Saturday the 14th at the library annex it is.",
        "Each person may bring at most five books.",
        "Noted: a limit of five books per person.",
        "Change of plan: the swap moves to Sunday the 15th, same place.",
        "Updated: Sunday the 15th at the library annex.",
        "Unrelated: any tips for pressing flowers between pages?",
        "Use heavy books and blotting paper, then wait about two weeks.",
    ]
    roles = ["user", "assistant"] * 4
    return {
        "id": sid,
        "language": "en",
        "system": "You help a neighbourhood plan its book swap.",
        "messages": [{"role": r, "content": c} for r, c in zip(roles, turns, strict=True)],
        "final_user": ask,
        "budget_tokens": 400,
        "checks": [
            {"id": "swap_day", "kind": "constraint", "stated_round": 3,
             "expect_any": ["Sunday the 15th"], "stale_any": ["Saturday the 14th"]},
            {"id": "book_limit", "kind": "constraint", "stated_round": 2,
             "expect_any": ["five books"], "stale_any": []},
        ],
    }  # fmt: skip


def write(directory: Path, *scenarios: dict[str, Any]) -> Path:
    directory.mkdir(exist_ok=True)
    for sc in scenarios:
        (directory / f"{sc['id']}.json").write_text(json.dumps(sc), encoding="utf-8")
    return directory


def user_settings(stub_url: str) -> Settings:
    # A priced model name served by the stub: litellm's local map prices its usage.
    params = {"model": "openai/gpt-4o-mini", "api_base": stub_url, "api_key": "sk-test-123"}
    return settings_from_dict(
        {
            "model_list": [
                {"model_name": "answerer", "litellm_params": params},
                {"model_name": "grader", "litellm_params": params},
            ],
            "server": {"request_timeout_s": 10},
        },
        env={},
    )


def verdict(value: str) -> dict[str, Any]:
    return {"content": json.dumps({"verdict": value, "reason": "scripted"})}


def finals(stub: Any) -> list[Any]:
    return [r for r in stub.received if r.body["messages"][-1]["content"].startswith("Please")]


def yes(_: Estimate) -> bool:
    return True


async def test_answers_scored_per_arm_with_tokens_and_money(
    stub_upstream: Any, tmp_path: Path
) -> None:
    directory = write(tmp_path / "sc", swap_scenario())
    stub_upstream.queue_replies(ASK, {"content": RAW_ANSWER}, {"content": MANAGED_ANSWER})
    settings = user_settings(stub_upstream.url)
    out = tmp_path / "run.jsonl"
    options = LiveOptions(directory, "answerer", out=out)
    outcome = await run_live(settings, options, yes)

    # Only the final requests reached the provider; the history was scripted locally.
    sent = finals(stub_upstream)
    assert len(stub_upstream.received) == len(sent) == 2
    assert sent[0].body["model"] == "gpt-4o-mini"
    scenario = Scenario.load(directory / "book-swap-en.json")
    assert sent[0].body["messages"] == final_messages(scenario)
    raw, managed = outcome.report["total"]["raw"], outcome.report["total"]["managed"]
    assert (raw["answer_recall"], raw["stale"]) == (0.5, 1)  # the old day, stated as current
    assert (managed["answer_recall"], managed["stale"]) == (1.0, 0)
    row = outcome.report["scenarios"][0]["raw"]
    assert row["missed"] == ["swap_day"]
    assert row["stale"] == ["swap_day"]
    assert row["judge"] is None
    # Tokens are the provider's usage; money is that usage at litellm's local prices.
    usage = stub_upstream.received[0]
    assert row["tokens"]["prompt"] > 0
    assert row["tokens"]["completion"] > 0
    prices = Upstream(settings).pricing.prices("answerer")
    assert prices is not None
    assert row["cost"] == pytest.approx(
        row["tokens"]["prompt"] * prices["input"] + row["tokens"]["completion"] * prices["output"]
    )
    assert usage.body["messages"][-1]["content"] == ASK
    assert outcome.stopped is None
    assert outcome.report["complete"]
    header, rows = read_results(out)
    assert header["model"] == "answerer"
    assert len(rows) == 2


async def test_judge_valid_malformed_and_error_are_recorded_never_raised(
    stub_upstream: Any, tmp_path: Path
) -> None:
    directory = write(tmp_path / "sc", swap_scenario())
    # Judge prompts quote the question too: their queues go first (first match wins).
    # raw arm: swap_day judged at once; book_limit malformed, then valid on the retry.
    stub_upstream.queue_replies('Requirement "swap_day"', verdict("stale"))
    stub_upstream.queue_replies(
        'Requirement "book_limit"', {"content": "I think it is fine."}, {"content": "{oops"}
    )
    stub_upstream.queue_replies("That reply was not usable", verdict("correct"))
    stub_upstream.queue_replies(ASK, {"content": RAW_ANSWER}, {"content": MANAGED_ANSWER})
    # managed arm: its first judge call fails at the provider; book_limit is malformed
    # (the stub's echo) on the retry too.
    stub_upstream.inject(Fault(status=500, contains="at most five books each"))
    outcome = await run_live(
        user_settings(stub_upstream.url),
        LiveOptions(directory, "answerer", judge="grader", out=tmp_path / "j.jsonl"),
        yes,
    )
    raw = outcome.report["scenarios"][0]["raw"]["judge"]
    managed = outcome.report["scenarios"][0]["managed"]["judge"]
    assert raw["swap_day"] == {"verdict": "stale", "reason": "scripted"}
    assert raw["book_limit"]["verdict"] == "correct"  # after one retry
    assert managed["swap_day"]["verdict"] == "unjudged"
    assert managed["swap_day"]["reason"].startswith("judge error:")
    assert managed["book_limit"]["verdict"] == "unjudged"
    assert managed["book_limit"]["reason"].startswith("malformed verdict twice:")
    totals = outcome.report["total"]
    assert totals["raw"]["judge"] == {"correct": 1, "stale": 1, "missing": 0, "unjudged": 0}
    assert totals["managed"]["judge"]["unjudged"] == 2
    assert totals["raw"]["judge_cost"] is not None
    assert totals["raw"]["judge_cost"] > 0


async def test_a_provider_error_mid_run_leaves_a_readable_report_and_resume_finishes_it(
    stub_upstream: Any, tmp_path: Path
) -> None:
    second_ask = "Please recap what was finally decided for the swap."
    directory = write(
        tmp_path / "sc", swap_scenario("a-swap-en"), swap_scenario("b-swap-en", second_ask)
    )
    stub_upstream.queue_replies(ASK, {"content": MANAGED_ANSWER}, {"content": MANAGED_ANSWER})
    stub_upstream.inject(Fault(status=503, message="provider overloaded", contains=second_ask))
    settings = user_settings(stub_upstream.url)
    out = tmp_path / "run.jsonl"
    first = await run_live(settings, LiveOptions(directory, "answerer", out=out), yes)
    assert first.stopped is not None
    assert "503" in first.stopped
    assert not first.report["complete"]
    assert [e["scenario"] for e in first.report["errors"]] == ["b-swap-en"]
    assert [s["id"] for s in first.report["scenarios"]] == ["a-swap-en"]
    _, rows = read_results(out)  # the partial file reads as it stands
    assert [r["type"] for r in rows] == ["result", "result", "error"]

    stub_upstream.reset()
    stub_upstream.queue_replies(second_ask, {"content": RAW_ANSWER}, {"content": MANAGED_ANSWER})
    again = await run_live(settings, LiveOptions(directory, "answerer", resume=out), yes)
    assert len(finals(stub_upstream)) == 2  # only the missing scenario ran
    assert again.stopped is None
    assert again.report["complete"]
    assert [s["id"] for s in again.report["scenarios"]] == ["a-swap-en", "b-swap-en"]
    assert again.report["total"]["raw"]["answer_recall"] == 0.75

    # Nothing left: resuming again only reads the file, asks nothing, sends nothing.
    stub_upstream.reset()
    done = await run_live(settings, LiveOptions(directory, "answerer", resume=out), lambda e: 1 / 0)
    assert done.report == again.report
    assert not stub_upstream.received
    with pytest.raises(Exception, match="same --judge"):
        await run_live(settings, LiveOptions(directory, "answerer", "grader", resume=out), yes)


async def test_cost_estimate_is_tokens_times_local_prices_and_nothing_is_sent_unconfirmed(
    stub_upstream: Any, tmp_path: Path
) -> None:
    directory = write(tmp_path / "sc", swap_scenario())
    settings = user_settings(stub_upstream.url)
    seen: list[Estimate] = []

    def decline(est: Estimate) -> bool:
        seen.append(est)
        return False

    options = LiveOptions(directory, "answerer", judge="grader", max_tokens=200,
                          out=tmp_path / "e.jsonl")  # fmt: skip
    outcome = await run_live(settings, options, decline)
    assert outcome.cancelled
    assert not stub_upstream.received
    est = seen[0]
    scenario = Scenario.load(directory / "book-swap-en.json")
    raw = format_tokens(TokenCounter("o200k_base"), final_messages(scenario))
    assert est.requests == 2
    assert est.prompt_tokens == raw + min(raw, int(400 * 1.05))
    assert est.completion_tokens == 2 * 200
    assert est.judge_calls == 4  # two checks, two arms
    prices = Upstream(settings).pricing.prices("answerer")
    assert est.cost == pytest.approx(bill(prices, Tokens(est.prompt_tokens, 400)))
    assert est.total is not None
    assert est.total > est.cost > 0
    assert f"${est.total:.4f}" in est.text()


def test_cli_refuses_to_spend_without_a_terminal_or_yes(
    stub_upstream: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write(tmp_path / "sc", swap_scenario())
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(user_settings(stub_upstream.url).model_dump()), encoding="utf-8")
    argv = ["eval", "--live", "--model", "answerer", "--config", str(config),
            "--scenarios", str(directory), "--out", str(tmp_path / "r.jsonl")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "estimated total: $" in err
    assert "pass --yes" in err
    assert not stub_upstream.received

    stub_upstream.queue_replies(ASK, {"content": RAW_ANSWER}, {"content": MANAGED_ANSWER})
    assert main([*argv[:-1], str(tmp_path / "r2.jsonl"), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "| **total** | managed | 1.000 | 0 |" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("typed", "agreed"), [("y\n", True), ("\n", False), ("no\n", False)])
def test_confirmation_at_a_terminal(typed: str, agreed: bool) -> None:
    err = io.StringIO()
    assert confirm_spend("about $0.01", yes=False, stdin=_Terminal(typed), stderr=err) is agreed
    assert "Go ahead? [y/N]" in err.getvalue()


def test_live_flags_need_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--scenarios", str(tmp_path), "--model", "answerer", "--yes"]) == 2
    assert "--model, --yes only go with --live" in capsys.readouterr().err
    assert main(["eval", "--live", "--scenarios", str(tmp_path)]) == 2
    assert "needs --model" in capsys.readouterr().err
