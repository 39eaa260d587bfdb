"""LoCoMo through the proxy: does what reaches the model still hold the answer?

    python bench/locomo.py [--data PATH] [--budgets 2000,4000]
        [--presets raw,window,summary_buffer,full] [--conversations N]
        [--questions-per-conv M] [--question-stride K] [--workers 2]
        [--concurrency 1] [--json PATH]

Issue #4. LoCoMo (Maharana et al., 2024; CC BY-NC 4.0) is read at run time
from `../shared/eval/locomo/locomo10.json` and never copied into the project.
Each conversation is replayed over HTTP through a proxy served in-process
(uvicorn on 127.0.0.1, temporary SQLite store) in front of the local stub
upstream, as a chat client that keeps its history would send it:

- speaker_a is the user, speaker_b the assistant; consecutive turns of one
  speaker form one message (chat APIs expect alternating roles); the first
  turn of each session starts with `[date: <session date_time>] `; a shared
  photo is given by its caption;
- for every assistant message, one request carrying the whole history before
  it; the stub answers with exactly that message, which the proxy records.
  Preset `full` (the default, which maintains all memory), budget B, one
  session per (conversation, budget), so that memory built under one budget
  never serves another;
- then every QA item: the whole history plus the question as the final user
  message, once per preset (`X-Memory-Policy`) with `X-Memory-Budget: B`;
  `raw` ignores the budget, so it is asked once and shown under each budget.

Scores are computed on what the stub upstream received, without our system
prompt and the question: the share of items whose answer occurs in it
(NFKC, case-folded, whitespace folded, as whole words: the answer "Yes" is
not found in "yesterday"), the share whose evidence turns all
occur (each verbatim, or >= 80% of its content words present), and the mean
forwarded tokens (cl100k, content + 4 per message). Categories: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop; 5 (adversarial: the answer is not in
the conversation) is reported apart. A second table gives the evidence share
by how far back the (oldest) evidence turn sits, in history tokens after it:
what a recent window cannot reach and recall or memory must bring back.
A benchmark: it prints figures and asserts nothing.

Sessions are named (`X-Memory-Session`) rather than matched transparently.
Every question branches off the same history: transparently that is an edit,
a fork that copies the ~600 stored turns and their memory per question, and
the prefix lookup grows with every fork (measured: 54 ms per question at the
start, 125 ms after 100). Named, each question rewinds the session to the
history (the previous question, its answer and the memory they produced are
rolled back: ~10 ms), so question i never sees question i-1. What carries
over is advisory: exposure counts of memory items shown to earlier questions.

Conversations are spread over `--workers` processes (each with its own stub
and proxy), since one Python process uses one core; the run prints each
worker's CPU seconds, which on a shared machine say more than the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import re
import sys
import tempfile
import time
import traceback
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from queue import Empty
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a file: `python bench/locomo.py`

import httpx  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from bench._harness import serve_proxy, stub_settings  # noqa: E402
from proxy.chat_request import message_text  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402
from proxy.tokens import TokenCounter  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "locomo" / "locomo10.json"
PRESETS = ("raw", "window", "summary_buffer", "full")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED = (1, 2, 3, 4)  # category 5 is reported apart: its answer is not in the chat
REPLAY_PRESET = "full"
# The stub's answer to a question. It is recorded, then rolled back by the next one.
QA_REPLY = "Let me think about that."
EVIDENCE_WORD_SHARE = 0.8

# English stopwords (NLTK's list): "content words" are the words left without them.
# Deliberately not the engine's own list, so that the score does not move with it.
STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him
    his himself she her hers herself it its itself they them their theirs themselves
    what which who whom this that these those am is are was were be been being have
    has had having do does did doing a an the and but if or because as until while of
    at by for with about against between into through during before after above below
    to from up down in out on off over under again further then once here there when
    where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now d ll m o re ve y ain aren
    couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren
    won wouldn""".split()
)
_WORD = re.compile(r"\w+")
_SESSION_KEY = re.compile(r"session_(\d+)")
# Evidence ids as written, quirks included: "D8:6; D9:17", "D:11:26", "D30:05".
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


# --- the data set ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QAItem:
    index: int  # position in the sample's `qa` list (the item's id in the JSON output)
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # dia ids of turns that exist; empty if none does


@dataclass(frozen=True, slots=True)
class DiaTurn:
    text: str  # what was said (the evidence), without our date prefix or photo caption
    message: int  # index of the message that carries it


@dataclass(slots=True)
class Sample:
    id: str
    system: str
    messages: list[dict[str, str]]
    turns: dict[str, DiaTurn]  # by dia id
    qa: list[QAItem]
    # Tokens of the history after each message (how far back a turn sits).
    tokens_after: list[int] = field(default_factory=list)

    @property
    def replay_points(self) -> list[int]:
        """Indices of the assistant messages: one request each, with what precedes it."""
        return [i for i, m in enumerate(self.messages) if m["role"] == "assistant"]

    def evidence_age(self, item: QAItem) -> int | None:
        """History tokens after the item's oldest evidence turn (None: no evidence)."""
        if not item.evidence:
            return None
        return max(self.tokens_after[self.turns[d].message] for d in item.evidence)


def dia_ids(raw: Iterable[str]) -> list[str]:
    return [f"D{int(s)}:{int(t)}" for item in raw for s, t in _DIA_ID.findall(item)]


def _sessions(conv: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(date, turns) per non-empty session, in order (dates exist for empty ones too)."""
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    return [
        (str(conv.get(f"session_{n}_date_time", "")), conv[f"session_{n}"])
        for n in numbers
        if conv[f"session_{n}"]
    ]


def _turn_content(turn: dict[str, Any]) -> str:
    text = str(turn["text"])
    if turn.get("blip_caption"):
        # What a chat client shows a text-only model of a shared photo.
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def build_messages(conv: dict[str, Any]) -> tuple[list[dict[str, str]], dict[str, DiaTurn]]:
    """The chat as messages, and where each dia turn went."""
    roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
    messages: list[dict[str, str]] = []
    turns: dict[str, DiaTurn] = {}
    for date, session in _sessions(conv):
        for k, turn in enumerate(session):
            content = _turn_content(turn)
            if k == 0:
                content = f"[date: {date}] {content}"
            role = roles[turn["speaker"]]
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"] += "\n" + content
            else:
                messages.append({"role": role, "content": content})
            turns[dia_ids([turn["dia_id"]])[0]] = DiaTurn(str(turn["text"]), len(messages) - 1)
    return messages, turns


def _qa_item(index: int, raw: dict[str, Any], turns: dict[str, DiaTurn]) -> QAItem:
    category = int(raw["category"])
    # Adversarial items carry `adversarial_answer` (the tempting wrong attribution).
    answer = raw.get("adversarial_answer") if category == 5 else None
    if answer is None:
        answer = raw.get("answer")
    if answer is None:
        answer = raw.get("adversarial_answer", "")
    evidence = tuple(d for d in dia_ids(raw.get("evidence") or ()) if d in turns)
    return QAItem(index, str(raw["question"]), str(answer), category, evidence)


def _tokens_after(counter: TokenCounter, messages: list[dict[str, str]]) -> list[int]:
    out, total = [0] * len(messages), 0
    for i in range(len(messages) - 1, -1, -1):
        out[i] = total
        total += counter(messages[i]["content"]) + 4
    return out


def load_samples(path: Path) -> list[Sample]:
    data = json.loads(path.read_text(encoding="utf-8"))
    counter = TokenCounter("cl100k_base")
    samples = []
    for raw in data:
        conv = raw["conversation"]
        messages, turns = build_messages(conv)
        # The sample id makes each conversation's system prompt unique: the stub
        # tells concurrent conversations apart by it (it is never cut).
        system = (
            f"Conversation {raw['sample_id']}: {conv['speaker_a']} is the user and "
            f"{conv['speaker_b']} the assistant. It spans several sessions; the first "
            "message of each session starts with its date."
        )
        qa = [_qa_item(i, q, turns) for i, q in enumerate(raw["qa"])]
        tokens_after = _tokens_after(counter, messages)
        samples.append(Sample(str(raw["sample_id"]), system, messages, turns, qa, tokens_after))
    return samples


# --- scoring -----------------------------------------------------------------------------


@lru_cache(maxsize=262_144)
def folded(text: str) -> str:
    """NFKC, case-folded, whitespace folded (as `memproxy eval` scores); cached,
    since the same turns come back in thousands of requests."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@lru_cache(maxsize=262_144)
def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(folded(text)) if w not in STOPWORDS)


@lru_cache(maxsize=8192)
def whole_words(needle: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")


class Context:
    """The forwarded messages that can hold an answer, in normal form."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self.text = " ".join(f for t in texts if (f := folded(t)))
        self._words: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:  # only needed when a turn is not there verbatim
            self._words = frozenset().union(*(content_words(t) for t in self._texts))
        return self._words

    def has_answer(self, answer: str) -> bool:
        """The answer as whole words: "yes" is not in "yesterday", "art" not in "party"."""
        needle = folded(answer)
        return bool(needle) and whole_words(needle).search(self.text) is not None

    def has_turn(self, text: str) -> bool:
        if folded(text) in self.text:
            return True
        wanted = content_words(text)
        # A turn of stopwords only ("Yes, it is!") can only be found verbatim.
        return bool(wanted) and len(wanted & self.words) >= EVIDENCE_WORD_SHARE * len(wanted)


def scoring_context(forwarded: list[dict[str, Any]], system: str, question: str) -> Context:
    """What reached the model besides our own system prompt and the question itself."""
    texts = [message_text(m) for m in forwarded]
    if texts and forwarded[0].get("role") == "system" and texts[0] == system:
        texts = texts[1:]
    if texts and forwarded[-1].get("role") == "user" and texts[-1] == question:
        texts = texts[:-1]
    return Context(texts)


def forwarded_tokens(counter: TokenCounter, forwarded: list[dict[str, Any]]) -> int:
    """`memproxy eval`'s count: cl100k tokens of the contents plus 4 per message."""
    return sum(counter(message_text(m)) + 4 for m in forwarded)


@dataclass(slots=True)
class Outcome:
    sample: str
    index: int
    category: int
    preset: str
    budget: int  # 0 for raw: it ignores the budget
    answer: bool
    evidence: bool | None  # None: the item names no existing turn
    tokens: int
    age: int | None  # history tokens after the oldest evidence turn


# --- the replay ----------------------------------------------------------------------------


@dataclass(slots=True)
class Slot:
    """One conversation's exchange with the stub: what to answer, what arrived."""

    reply: str = ""
    received: list[dict[str, Any]] | None = None


@dataclass
class Script:
    """The stub's responder: answers per conversation, found by the system prompt."""

    slots: dict[str, Slot] = field(default_factory=dict)

    def register(self, sample: Sample) -> Slot:
        return self.slots.setdefault(sample.system, Slot())

    def __call__(self, body: dict[str, Any]) -> dict[str, Any] | None:
        messages = body.get("messages") or []
        first = messages[0] if messages else {}
        content = first.get("content") if first.get("role") == "system" else None
        slot = self.slots.get(content) if isinstance(content, str) else None
        if slot is None:
            return None
        slot.received = messages
        return {"content": slot.reply}


@dataclass(slots=True)
class Settings:
    budgets: list[int]
    presets: list[str]
    questions: int | None  # per conversation; None: all
    concurrency: int  # conversations in flight per worker process
    stride: int = 1  # every k-th QA item (the data set groups them by category)

    def questions_of(self, sample: Sample) -> list[QAItem]:
        picked = sample.qa[:: self.stride]
        return picked if self.questions is None else picked[: self.questions]

    def requests_for(self, sample: Sample) -> int:
        budgeted = len([p for p in self.presets if p != "raw"]) * len(self.budgets)
        raw = 1 if "raw" in self.presets else 0
        return len(sample.replay_points) * len(self.budgets) + len(self.questions_of(sample)) * (
            budgeted + raw
        )


@dataclass(slots=True)
class Timings:
    replay_s: float = 0.0  # summed over conversations, not wall time
    qa_s: float = 0.0
    requests: int = 0
    errors: int = 0
    # CPU seconds of each worker process (all its threads): on a shared machine the
    # wall time says little, the largest of these is the wall time on idle cores.
    cpu_s: list[float] = field(default_factory=list)

    def add(self, other: Timings) -> None:
        self.replay_s += other.replay_s
        self.qa_s += other.qa_s
        self.requests += other.requests
        self.errors += other.errors
        self.cpu_s += other.cpu_s


class Runner:
    def __init__(
        self,
        client: httpx.AsyncClient,
        stub: StubUpstream,
        script: Script,
        settings: Settings,
        tick: Callable[[], None],
    ) -> None:
        self.client, self.stub, self.script = client, stub, script
        self.settings = settings
        self.tick = tick
        self.counter = TokenCounter("cl100k_base")
        self.timings = Timings()

    async def _send(
        self, slot: Slot, messages: list[dict[str, Any]], reply: str, headers: dict[str, str]
    ) -> list[dict[str, Any]] | None:
        """One request; returns what the stub received (None on an error)."""
        slot.reply, slot.received = reply, None
        resp = await self.client.post(
            "/v1/chat/completions", json={"model": "stub", "messages": messages}, headers=headers
        )
        with self.stub.state.lock:
            # Bodies are kept by the Script; the stub's own log would grow to gigabytes.
            self.stub.state.received.clear()
        self.timings.requests += 1
        self.tick()
        if resp.status_code != 200 or slot.received is None:
            self.timings.errors += 1
            return None
        return slot.received

    async def replay(self, sample: Sample, slot: Slot, headers: dict[str, str]) -> None:
        start = time.perf_counter()
        replay_headers = {**headers, "X-Memory-Policy": REPLAY_PRESET}
        for i in sample.replay_points:
            prior = [{"role": "system", "content": sample.system}, *sample.messages[:i]]
            await self._send(slot, prior, sample.messages[i]["content"], replay_headers)
        self.timings.replay_s += time.perf_counter() - start

    async def ask(
        self,
        sample: Sample,
        slot: Slot,
        item: QAItem,
        preset: str,
        headers: dict[str, str],
    ) -> Outcome | None:
        question = {"role": "user", "content": item.question}
        messages = [{"role": "system", "content": sample.system}, *sample.messages, question]
        forwarded = await self._send(
            slot, messages, QA_REPLY, {**headers, "X-Memory-Policy": preset}
        )
        if forwarded is None:
            return None
        ctx = scoring_context(forwarded, sample.system, item.question)
        evidence = None
        if item.evidence:
            evidence = all(ctx.has_turn(sample.turns[d].text) for d in item.evidence)
        return Outcome(
            sample.id,
            item.index,
            item.category,
            preset,
            0 if preset == "raw" else int(headers["X-Memory-Budget"]),
            ctx.has_answer(item.answer),
            evidence,
            forwarded_tokens(self.counter, forwarded),
            sample.evidence_age(item),
        )

    async def run_sample(self, sample: Sample) -> list[Outcome]:
        slot = self.script.register(sample)
        out: list[Outcome] = []
        for n, budget in enumerate(self.settings.budgets):
            # A tenant per budget (the bearer token names it when no keys are
            # configured), so the replays of one conversation never meet.
            headers = {
                "Authorization": f"Bearer locomo-{budget}",
                "X-Memory-Session": f"locomo-{sample.id}",
                "X-Memory-Budget": str(budget),
            }
            await self.replay(sample, slot, headers)
            presets = [p for p in self.settings.presets if p != "raw" or n == 0]
            start = time.perf_counter()
            for item in self.settings.questions_of(sample):
                for preset in presets:
                    got = await self.ask(sample, slot, item, preset, headers)
                    if got is not None:
                        out.append(got)
            self.timings.qa_s += time.perf_counter() - start
        return out


async def run_worker(
    samples: list[Sample], settings: Settings, tick: Callable[[], None]
) -> tuple[list[Outcome], Timings]:
    """One stub, one proxy, these conversations (`settings.concurrency` at a time)."""
    cpu = time.process_time()
    script = Script()
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        stub.state.responder = script
        async with (
            serve_proxy(stub_settings(stub.url, Path(tmp) / "locomo.db")) as base,
            httpx.AsyncClient(base_url=base, timeout=120) as client,
        ):
            runner = Runner(client, stub, script, settings, tick)
            gate = asyncio.Semaphore(settings.concurrency)

            async def one(sample: Sample) -> list[Outcome]:
                async with gate:
                    return await runner.run_sample(sample)

            results = await asyncio.gather(*(one(s) for s in samples))
    runner.timings.cpu_s.append(time.process_time() - cpu)
    return [o for r in results for o in r], runner.timings


def _worker_process(samples: list[Sample], settings: Settings, queue: Any) -> None:
    """Entry of a worker process: ticks in batches, then its results."""
    pending = 0

    def tick() -> None:
        nonlocal pending
        pending += 1
        if pending >= 25:  # a queue message per request would cost more than the bar is worth
            queue.put(("tick", pending))
            pending = 0

    try:
        outcomes, timings = asyncio.run(run_worker(samples, settings, tick))
    except BaseException:
        queue.put(("error", traceback.format_exc()))
        raise
    queue.put(("tick", pending))
    queue.put(("done", outcomes, timings))


def shard(samples: list[Sample], settings: Settings, workers: int) -> list[list[Sample]]:
    """Conversations per worker, largest first onto the least loaded (by requests)."""
    shards: list[list[Sample]] = [[] for _ in range(min(workers, len(samples)) or 1)]
    load = [0] * len(shards)
    for sample in sorted(samples, key=settings.requests_for, reverse=True):
        i = load.index(min(load))
        shards[i].append(sample)
        load[i] += settings.requests_for(sample)
    return shards


def _progress() -> Progress:
    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    return Progress("LoCoMo requests", *columns, console=Console(stderr=True), transient=True)


def run_all(
    samples: list[Sample], settings: Settings, workers: int
) -> tuple[list[Outcome], Timings]:
    """All conversations over `workers` processes (each its own proxy: 2 cores, 2 GILs)."""
    total = sum(settings.requests_for(s) for s in samples)
    if workers <= 1:
        with _progress() as progress:
            task = progress.add_task("requests", total=total)
            return asyncio.run(run_worker(samples, settings, lambda: progress.advance(task)))
    # Fork before any thread exists here (the progress bar has one); spawn would
    # re-import everything for nothing.
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_worker_process, args=(part, settings, queue), daemon=True)
        for part in shard(samples, settings, workers)
    ]
    for proc in procs:
        proc.start()
    outcomes: list[Outcome] = []
    timings = Timings()
    with _progress() as progress:
        task = progress.add_task("requests", total=total)
        done = 0
        while done < len(procs):
            try:
                message = queue.get(timeout=5)
            except Empty:
                # A worker killed from outside (OOM) would leave us waiting forever.
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise SystemExit("locomo: a worker process died") from None
                continue
            if message[0] == "tick":
                progress.advance(task, message[1])
            elif message[0] == "done":
                outcomes += message[1]
                timings.add(message[2])
                done += 1
            else:
                raise SystemExit(f"locomo: a worker failed:\n{message[1]}")
    for proc in procs:
        proc.join()
    return outcomes, timings


# --- the report ----------------------------------------------------------------------------

# Bounds (history tokens after the evidence) of the evidence-age buckets.
AGE_BUCKETS = (2_000, 4_000, 8_000, 16_000)


@dataclass(slots=True)
class Cell:
    n: int = 0
    answer: int = 0
    evidence_n: int = 0
    evidence: int = 0
    tokens: int = 0

    def add(self, o: Outcome) -> None:
        self.n += 1
        self.answer += o.answer
        self.tokens += o.tokens
        if o.evidence is not None:
            self.evidence_n += 1
            self.evidence += o.evidence

    @property
    def answer_share(self) -> float:
        return self.answer / self.n if self.n else 0.0

    @property
    def evidence_share(self) -> float:
        return self.evidence / self.evidence_n if self.evidence_n else 0.0

    @property
    def mean_tokens(self) -> float:
        return self.tokens / self.n if self.n else 0.0

    def summary(self) -> dict[str, float | int]:
        return {
            **asdict(self),
            "answer_share": round(self.answer_share, 4),
            "evidence_share": round(self.evidence_share, 4),
            "mean_tokens": round(self.mean_tokens, 1),
        }


Table = dict[str, dict[str, Cell]]  # preset -> column -> cell


def age_bucket(age: int) -> str:
    low = 0
    for high in AGE_BUCKETS:
        if age < high:
            return f"{low // 1000}-{high // 1000}k"
        low = high
    return f">={low // 1000}k"


def tabulate(outcomes: list[Outcome], budget: int, presets: Sequence[str]) -> Table:
    """Columns: each category, "1-4", "all", and "age:<bucket>" (categories 1-4)."""
    table: Table = {p: defaultdict(Cell) for p in presets}
    for o in outcomes:
        if o.preset not in table or o.budget not in (0, budget):
            continue
        row = table[o.preset]
        row[str(o.category)].add(o)
        row["all"].add(o)
        if o.category in SCORED:
            row["1-4"].add(o)
            if o.age is not None:
                row[f"age:{age_bucket(o.age)}"].add(o)
    return table


def _row(cells: dict[str, Cell], columns: Sequence[str], fmt: Callable[[Cell], str]) -> str:
    return " | ".join(fmt(cells[c]) if c in cells else "-" for c in columns)


def markdown(table: Table, budget: int) -> str:
    columns = [*(str(c) for c in SCORED), "1-4", "5"]
    names = {**{str(c): CATEGORIES[c] for c in CATEGORIES}, "1-4": "1-4"}
    first = next(iter(table.values()), {})
    head = " | ".join(f"{names[c]} (n={first[c].n if c in first else 0})" for c in columns)
    lines = [
        f"### budget {budget:,} tokens: answer in context / evidence in context",
        f"| preset | mean tokens | {head} |",
        "|---" * (len(columns) + 2) + "|",
    ]
    for preset, row in table.items():
        both = _row(row, columns, lambda c: f"{c.answer_share:.3f} / {c.evidence_share:.3f}")
        lines.append(f"| {preset} | {row['all'].mean_tokens:,.0f} | {both} |")
    return "\n".join(lines)


def age_markdown(table: Table, budget: int) -> str:
    """Evidence found by how far back it sits: recall beyond the recent window."""
    labels = [age_bucket(0), *(age_bucket(b) for b in AGE_BUCKETS)]
    columns = [f"age:{label}" for label in labels]
    first = next(iter(table.values()), {})
    head = " | ".join(
        f"{label} (n={first[c].evidence_n if c in first else 0})"
        for label, c in zip(labels, columns, strict=True)
    )
    lines = [
        f"evidence in context by its age (history tokens after it), categories 1-4, "
        f"budget {budget:,}:",
        f"| preset | {head} |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for preset, row in table.items():
        lines.append(f"| {preset} | {_row(row, columns, lambda c: f'{c.evidence_share:.3f}')} |")
    return "\n".join(lines)


def targets(table: Table, budget: int) -> list[str]:
    """The engine's targets (issue #4), checked on the answer share."""
    out = []
    full, window, raw = table.get("full"), table.get("window"), table.get("raw")
    cats = [str(c) for c in SCORED if full and str(c) in full]
    if full and window:
        wins = {c: full[c].answer_share > window[c].answer_share for c in cats}
        beats = [f"{CATEGORIES[int(c)]} {'yes' if won else 'NO'}" for c, won in wins.items()]
        out.append(f"- full beats window at {budget:,}: {', '.join(beats)}")
    if full and raw:
        names = {**{c: CATEGORIES[int(c)] for c in cats}, "1-4": "1-4"}
        ratios = [
            f"{name} {full[c].answer_share / raw[c].answer_share:.2f}"
            for c, name in names.items()
            if raw[c].answer_share
        ]
        out.append(f"- full / raw at {budget:,} (target >= 0.8 at 2,000): {', '.join(ratios)}")
    return out


def report_json(
    outcomes: list[Outcome],
    tables: dict[int, Table],
    timings: Timings,
    args: argparse.Namespace,
    wall_s: float,
) -> dict[str, Any]:
    return {
        "config": {
            "budgets": args.budgets,
            "presets": args.presets,
            "conversations": args.conversations,
            "questions_per_conv": args.questions_per_conv,
            "question_stride": args.question_stride,
            "workers": args.workers,
            "concurrency": args.concurrency,
        },
        "wall_s": round(wall_s, 1),
        "timings": asdict(timings),
        "tables": {
            str(b): {p: {c: cell.summary() for c, cell in row.items()} for p, row in t.items()}
            for b, t in tables.items()
        },
        # Ids only (sample, index into its qa list): no text of the data set leaves the run.
        "items": [asdict(o) for o in outcomes],
    }


def _int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _preset_list(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = set(names) - set(PRESETS)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown preset(s) {sorted(unknown)}")
    return names


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument(
        "--budgets", type=_int_list, default=[2000, 4000], help="comma-separated (2000,4000)"
    )
    parser.add_argument(
        "--presets", type=_preset_list, default=list(PRESETS), help=f"from {','.join(PRESETS)}"
    )
    parser.add_argument("--conversations", type=int, default=None, help="first N only")
    parser.add_argument(
        "--questions-per-conv", type=int, default=None, help="first M QA items of each"
    )
    parser.add_argument(
        "--question-stride",
        type=int,
        default=1,
        help="every K-th QA item (a subset that keeps every category; applied first)",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="processes, each with its own stub and proxy"
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="conversations in flight per worker"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"locomo: no data at {args.data} (see --data)")
    samples = load_samples(args.data)[: args.conversations]
    settings = Settings(
        args.budgets, args.presets, args.questions_per_conv, args.concurrency, args.question_stride
    )
    start = time.perf_counter()
    outcomes, timings = run_all(samples, settings, args.workers)
    wall = time.perf_counter() - start
    tables = {b: tabulate(outcomes, b, args.presets) for b in args.budgets}
    items = len({(o.sample, o.index) for o in outcomes})
    print(
        f"LoCoMo: {len(samples)} conversations, {items} QA items, {timings.requests} "
        f"requests ({timings.errors} errors); raw ignores the budget (asked once)\n"
    )
    for budget, table in tables.items():
        print(markdown(table, budget), end="\n\n")
        print(age_markdown(table, budget), end="\n\n")
        print("\n".join(targets(table, budget)), end="\n\n")
    print(
        f"wall time {wall:.1f} s ({args.workers} worker(s), CPU s per worker: "
        f"{', '.join(f'{c:.0f}' for c in timings.cpu_s)}; per conversation, summed: "
        f"replay {timings.replay_s:.1f} s, questions {timings.qa_s:.1f} s)"
    )
    if args.json:
        report = report_json(outcomes, tables, timings, args, wall)
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
