"""`memproxy eval --extractor hybrid` offline: prompts recorded, then answered by hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policies.hybrid import HYBRID_SYSTEM
from proxy.cli import main
from proxy.eval_scenarios import EvalError, Scenario
from proxy.evaluation import run_eval
from proxy.llm_replies import load_replies, prompt_hash
from proxy.settings import ModelEntry


def scenario() -> dict[str, Any]:
    return {
        "id": "kiln-en",
        "language": "en",
        "system": "You help me run a community pottery studio.",
        "messages": [
            {"role": "user", "content": "The kiln firing takes 9 hours."},
            {"role": "assistant", "content": "Noted: a 9 hour firing."},
            {"role": "user", "content": "It came out at 11 hours on the test run."},
            {"role": "assistant", "content": "Thanks, good to know."},
        ],
        "final_user": "When should I start the kiln to be done by 8pm?",
        "budget_tokens": 400,
        "checks": [{"id": "firing", "expect_any": ["11 hours"], "stale_any": []}],
    }


async def test_eval_records_the_prompts_then_answers_them_from_the_recording(
    tmp_path: Path,
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "kiln-en.json").write_text(json.dumps(scenario()), encoding="utf-8")
    recorded = tmp_path / "asked.jsonl"
    first = await run_eval(scenarios, extractor="hybrid", llm_record=recorded)
    assert first["llm_replies"]["asked"] >= 1
    assert first["llm_replies"]["missing"] == first["llm_replies"]["asked"]  # the rules stood
    rows = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert all(r["reply"] is None and r["hash"] == prompt_hash(r["messages"]) for r in rows)

    # Filled in (here: every question answered "revised"), the file answers the next run.
    for r in rows:
        questions = json.loads(r["messages"][1]["content"])["questions"]
        answers = [{"q": q["q"], "verdict": "revised"} for q in questions]
        r["reply"] = json.dumps({"answers": answers})
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert set(load_replies(replies)) == {r["hash"] for r in rows}
    decided: list[dict[str, Any]] = []

    def keep(_: Scenario, records: list[dict[str, Any]]) -> None:
        decided.extend(
            d
            for row in records
            for op in row["record"]["operations"]
            for d in op["decisions"]
            if d["linker"] == "hybrid_model"
        )

    second = await run_eval(scenarios, extractor="hybrid", llm_replies=replies, on_records=keep)
    assert second["llm_replies"] == {"asked": len(rows), "answered": len(rows), "missing": 0}
    assert [d["op"] for d in decided] == ["supersede"]
    assert second["total"]["errors"] == 0


async def test_recorded_replies_need_a_model_backed_extractor(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="go with --extractor"):
        await run_eval(tmp_path, llm_replies=tmp_path / "r.jsonl")
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    with pytest.raises(EvalError, match=r"bad\.jsonl:1"):
        await run_eval(tmp_path, extractor="hybrid", llm_replies=tmp_path / "bad.jsonl")


async def test_a_live_model_answers_what_the_recording_lacks_and_is_recorded(
    tmp_path: Path, stub_upstream: Any
) -> None:
    """`--llm-model`: a model_list model (here a second local stub) answers live."""

    def answer(body: dict[str, Any]) -> dict[str, Any] | None:
        if body["messages"][0]["content"] != HYBRID_SYSTEM:
            return None
        questions = json.loads(body["messages"][1]["content"])["questions"]
        answers = [{"q": q["q"], "verdict": "revised"} for q in questions]
        return {"content": json.dumps({"answers": answers})}

    stub_upstream.state.responder = answer
    live = ModelEntry(
        model_name="recorder",
        litellm_params={
            "model": "openai/recorder-model",
            "api_base": stub_upstream.url,
            "api_key": "test",
        },
    )
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "kiln-en.json").write_text(json.dumps(scenario()), encoding="utf-8")
    recorded = tmp_path / "recorded.jsonl"
    first = await run_eval(scenarios, extractor="hybrid", llm_record=recorded, llm_live=live)
    asked = first["llm_replies"]["asked"]
    assert asked >= 1
    assert first["llm_replies"] == {"asked": asked, "answered": 0, "missing": 0, "live": asked}
    assert len(load_replies(recorded)) == asked  # every reply recorded

    again = await run_eval(scenarios, extractor="hybrid", llm_replies=recorded)
    assert again["llm_replies"] == {"asked": asked, "answered": asked, "missing": 0}


def test_a_live_recording_model_needs_a_yes(
    tmp_path: Path, stub_upstream: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    model = {"model": "openai/recorder-model", "api_base": stub_upstream.url, "api_key": "t"}
    config.write_text(
        json.dumps({"model_list": [{"model_name": "recorder", "litellm_params": model}]}),
        encoding="utf-8",
    )
    base = ["eval", "--scenarios", str(tmp_path), "--extractor", "hybrid", "--config", str(config)]
    record = ["--llm-record", str(tmp_path / "new.jsonl")]
    assert main([*base, *record, "--llm-model", "absent"]) == 2
    assert "not in model_list" in capsys.readouterr().err
    assert main([*base, "--llm-model", "recorder"]) == 2
    assert "needs --llm-record" in capsys.readouterr().err
    assert main([*base, *record, "--llm-model", "recorder"]) == 2  # stdin is no terminal
    assert "pass --yes" in capsys.readouterr().err
    assert stub_upstream.received == []
