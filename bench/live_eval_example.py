"""The example report of docs/live-eval.md, produced offline against the local stub.

    python bench/live_eval_example.py [--out DIR]

Plays `memproxy eval --live --model gpt-4o-mini --judge gpt-4o-mini` as a user
would run it on their own key, except that the model_list entry's `api_base`
is the local stub upstream (litellm still prices the usage at gpt-4o-mini's
list price, from its local cost map). The stub's answers are SCRIPTED, not a
model's: the raw arm answers one scenario with the values the user later
changed, the managed arm with the final ones; the judge is a scripted grader
that looks for the values, and is malformed on purpose for one check (shown
as unjudged). The scenarios are two small ones written for this example.
The figures show what the report looks like, not how a model behaves.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proxy.stub.server import StubUpstream  # noqa: E402

CAFE_ASK = "Summarise the final setup for the repair café, please."
CLUB_ASK = "把读书会最后定下来的安排总结一下。"
SCENARIOS: list[dict[str, Any]] = [
    {
        "id": "repair-cafe-en",
        "language": "en",
        "system": "You help volunteers run a monthly bike repair café.",
        "messages": [
            {"role": "user", "content": "Our repair café opens at 10 am on the first Saturday."},
            {"role": "assistant", "content": "Got it: first Saturday, doors at 10 am."},
            {"role": "user", "content": "Volunteers must bring their own tools."},
            {"role": "assistant", "content": "Noted: every volunteer brings their own tools."},
            {"role": "user", "content": "Let's open at 9:30 am instead, people queue early."},
            {"role": "assistant", "content": "Changed: doors open at 9:30 am."},
            {"role": "user", "content": "Scrap the own-tools rule, we bought a shared kit."},
            {"role": "assistant", "content": "Done: volunteers use the shared kit now."},
        ],
        "final_user": CAFE_ASK,
        "budget_tokens": 180,
        "checks": [
            {"id": "opening", "kind": "constraint", "stated_round": 3,
             "expect_any": ["9:30 am"], "stale_any": ["10 am"]},
            {"id": "tools", "kind": "directive", "stated_round": 4,
             "expect_any": ["shared kit"], "stale_any": ["own tools"]},
        ],
    },
    {
        "id": "book-club-zh",
        "language": "zh",
        "system": "你帮一个社区读书会安排活动。",
        "messages": [
            {"role": "user", "content": "读书会定在每月第二个周四晚上七点。"},
            {"role": "assistant", "content": "好的，每月第二个周四晚上七点。"},
            {"role": "user", "content": "每次最多八个人。"},
            {"role": "assistant", "content": "记下了，每次最多八个人。"},
            {"role": "user", "content": "改成周五晚上七点吧，周四大家都加班。"},
            {"role": "assistant", "content": "已改为每月第二个周五晚上七点。"},
        ],
        "final_user": CLUB_ASK,
        "budget_tokens": 180,
        "checks": [
            {"id": "day", "kind": "constraint", "stated_round": 2,
             "expect_any": ["周五"], "stale_any": ["周四"]},
            {"id": "size", "kind": "constraint", "stated_round": 1,
             "expect_any": ["八个人", "8人", "8 人"], "stale_any": []},
        ],
    },
]  # fmt: skip

EN_ASIDES = [
    (
        "Unrelated, but how do I stop a chain from squeaking on my own commute bike?",
        "Clean it with a degreaser, dry it, then apply a light chain lube sparingly and wipe "
        "off the excess; squeaks usually mean a dry or dirty chain rather than a worn one.",
    ),
    (
        "Also, what is a fair donation to suggest for a puncture repair?",
        "Many cafés suggest a small voluntary donation that covers patches and glue, and "
        "say clearly that nobody is turned away for not paying.",
    ),
    (
        "Any idea how to keep kids busy while their parents wait in line?",
        "A colouring table with bike drawings, a simple pump-your-own-tyre station, and a "
        "quiz about road signs keep them busy and teach them something on the way.",
    ),
]
ZH_ASIDES = [
    (
        "顺便问一下，秋天适合读什么轻松一点的小说？",
        "可以试试节奏舒缓的散文体小说或者短篇合集，篇幅短、情节温和，适合秋天晚上慢慢读。",
    ),
    (
        "我们要不要给新成员准备一个简单的介绍？",
        "可以准备一页纸：读书会的节奏、选书方式、讨论规则，再附上组织者的联系方式。",
    ),
    (
        "讨论的时候怎么避免有人一直说个不停？",
        "可以约定每人先发言两分钟，再自由讨论；主持人适时把话题交给还没开口的人。",
    ),
]


def asides(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    out = []
    for user, assistant in pairs:
        out += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return out


for _scenario, _pairs in zip(SCENARIOS, (EN_ASIDES, ZH_ASIDES), strict=True):
    _scenario["messages"] += asides(_pairs)  # talk that buries the requirements

ANSWERS = {  # the final answers, raw arm first, then managed (the order the run sends them)
    CAFE_ASK: [
        "Doors open at 10 am on the first Saturday; volunteers bring their own tools.",
        "Doors open at 9:30 am on the first Saturday; everyone uses the shared kit.",
    ],
    CLUB_ASK: [
        "每月第二个周五晚上七点，每次最多八个人。",
        "每月第二个周五晚上七点，每次最多八个人。",
    ],
}


def _quoted(line: str) -> list[str]:
    return [json.loads(q) for q in re.findall(r'"(?:[^"\\]|\\.)*"', line)]


def respond(body: dict[str, Any]) -> dict[str, Any] | None:
    """The final answers in order; and a scripted judge: correct when a final value
    is in the answer, stale when an outdated one is, else missing; malformed for the
    `size` check, on both tries."""
    prompt = body["messages"][-1]["content"]
    if prompt in ANSWERS:  # a final question: the next scripted answer
        return {"content": ANSWERS[prompt].pop(0)}
    if "That reply was not usable" in prompt:
        return {"content": "Looks fine to me!"}
    if not prompt.startswith("Requirement "):
        return None
    if prompt.startswith('Requirement "size"'):
        return {"content": "Looks fine to me!"}
    finals = _quoted(re.search(r"^Final value.*$", prompt, re.M).group(0))  # type: ignore[union-attr]
    stale = _quoted(re.search(r"^Outdated values.*$", prompt, re.M).group(0))  # type: ignore[union-attr]
    answer = prompt.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0].casefold()
    if any(f.casefold() in answer for f in finals):
        verdict = {"verdict": "correct", "reason": "gives the final value"}
    elif any(s.casefold() in answer for s in stale):
        verdict = {"verdict": "stale", "reason": "states the outdated value"}
    else:
        verdict = {"verdict": "missing", "reason": "gives neither"}
    return {"content": json.dumps(verdict)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="keep the files here (default: temporary)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="live-eval-example-"))
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        path = out / "scenarios" / f"{scenario['id']}.json"
        path.write_text(json.dumps(scenario, ensure_ascii=False), encoding="utf-8")
    with StubUpstream() as stub:
        stub.state.responder = respond
        params = {"model": "openai/gpt-4o-mini", "api_base": stub.url, "api_key": "example"}
        config = {"model_list": [{"model_name": "gpt-4o-mini", "litellm_params": params}]}
        (out / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = [
            sys.executable, "-m", "proxy.cli", "eval", "--live",
            "--config", str(out / "config.yaml"), "--scenarios", str(out / "scenarios"),
            "--model", "gpt-4o-mini", "--judge", "gpt-4o-mini", "--max-tokens", "300",
            "--out", str(out / "results.jsonl"), "--yes",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    print(done.stderr.strip())
    print(done.stdout.strip())
    print(f"(files in {out})")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
