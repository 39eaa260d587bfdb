"""`memproxy eval` on a scenario of our own: scores, and the records it hands on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proxy.evaluation import Scenario, run_eval

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
    assert result["rounds"] == 8  # one request per assistant turn, and the final question
    assert [sid for sid, _ in seen] == ["greenhouse-en"]
    rows = seen[0][1]
    assert [r["id"] for r in rows] == result["request_ids"]
    assert rows[0]["prefix_share"] == 0.0  # nothing before the session's first request
    shares = [r["prefix_share"] for r in rows[1:]]
    assert all(0.0 < s <= 1.0 for s in shares)
    assert result["prefix_share"] == sum(shares) / len(shares)  # the first request excluded
    assert rows[-1]["record"]["forwarded"][-1]["content"] == scenario()["final_user"]
