"""Token accounting and the structural rules every assembler must respect.

The budget counts forwarded *messages* (content plus a fixed per-message
overhead), so `message_tokens` is the single definition used by the proxy when
it builds a `Turn`, by the assemblers when they add text of their own, and by
the tests. The structural half (`group_turns`, `split_mandatory`) encodes the
provider rules that turn a careless cut into a 400: a tool result must follow
the assistant message that called it, and that message needs all its results.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.types import MESSAGE_OVERHEAD_TOKENS, TokenCounter, Turn

# Roles that set up the conversation rather than take part in it.
SYSTEM_ROLES = frozenset({"system", "developer"})
# Below this a request has no room for anything but the current input; the
# derived budget never goes lower so that a large `max_tokens` cannot zero it.
MIN_DERIVED_BUDGET = 256
# Share of the input window usable for the prompt: tokenizers disagree by a
# few percent and the provider adds its own framing.
WINDOW_SAFETY = 0.9
# Fixed cost charged for a non-text content part (image, audio, file): counting
# its base64 payload as text would be wildly wrong, and providers bill images
# at a flat rate per tile. 85 is OpenAI's low-detail image cost.
NON_TEXT_PART_TOKENS = 85

_POSITIVE_INT_RE = re.compile(r"[0-9]+")


def message_text(message: Mapping[str, Any]) -> tuple[str, int]:
    """Countable text of one chat message dict, and the number of non-text parts.

    Tool calls count as their JSON: that is roughly what the provider renders
    into the prompt, and it keeps `arguments` (often the bulk) in the count.
    """
    content = message.get("content")
    extra_parts = 0
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif isinstance(part, Mapping) and isinstance(part.get("refusal"), str):
                pieces.append(part["refusal"])
            elif isinstance(part, str):
                pieces.append(part)
            else:
                extra_parts += 1
        text = "".join(pieces)
    else:
        text = ""
    calls = message.get("tool_calls") or message.get("function_call")
    if calls:
        dumped = json.dumps(calls, ensure_ascii=False)
        text = f"{text}{dumped}" if text else dumped
    return text, extra_parts


def message_tokens(message: Turn | Mapping[str, Any] | str, count: TokenCounter) -> int:
    """Tokens one forwarded message costs: content + `MESSAGE_OVERHEAD_TOKENS`.

    A `Turn` already carries its cost (`Turn.tokens`, which the proxy must set
    to `message_tokens(turn.raw, count)`), so it is returned as is: the
    assemblers never re-tokenise client messages. A `str` is content only.
    """
    if isinstance(message, Turn):
        return message.tokens
    if isinstance(message, str):
        return count(message) + MESSAGE_OVERHEAD_TOKENS
    text, extra_parts = message_text(message)
    content_tokens = count(text) if text else 0
    return content_tokens + extra_parts * NON_TEXT_PART_TOKENS + MESSAGE_OVERHEAD_TOKENS


def group_tokens(group: Sequence[Turn]) -> int:
    return sum(t.tokens for t in group)


def group_turns(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Split turns into atomic groups that are kept or dropped as a whole.

    An assistant message with `tool_call_ids` takes the tool messages that
    directly follow it and answer one of its ids (parallel calls included).
    A tool message that answers nothing before it (or answers an id twice)
    becomes a group of its own: an orphan, see `is_forwardable`. The legacy
    `function_call` / `function` pair is grouped the same way.
    """
    groups: list[list[Turn]] = []
    i, n = 0, len(turns)
    while i < n:
        turn = turns[i]
        group = [turn]
        i += 1
        if turn.role == "assistant" and turn.tool_call_ids:
            pending = set(turn.tool_call_ids)
            while i < n and turns[i].role == "tool" and turns[i].tool_call_id in pending:
                pending.discard(turns[i].tool_call_id)
                group.append(turns[i])
                i += 1
        elif (
            turn.role == "assistant"
            and turn.raw.get("function_call")
            and i < n
            and turns[i].role == "function"
        ):
            # Legacy functions API: one call, answered by the next "function" message.
            group.append(turns[i])
            i += 1
        groups.append(group)
    return groups


def is_forwardable(group: Sequence[Turn]) -> bool:
    """False for groups a provider would reject out of context.

    That is an orphan tool message, or a tool-calling assistant message that
    lacks some of its results (the client cancelled a call, or history was
    edited). Only the mandatory tail is forwarded regardless: it is the
    client's own current request.
    """
    head = group[0]
    if head.role in ("tool", "function"):
        return False
    if head.role == "assistant" and head.tool_call_ids:
        answered = {t.tool_call_id for t in group[1:]}
        return answered >= set(head.tool_call_ids)
    if head.role == "assistant" and head.raw.get("function_call"):
        return len(group) == 2
    return True


def split_mandatory(turns: Sequence[Turn]) -> tuple[list[Turn], list[Turn], list[Turn]]:
    """Split a conversation into (system, history, tail).

    - system: the leading system/developer messages (later ones stay history);
    - tail, the current input that is never cut:
      * when the conversation ends with tool results answering an assistant
        tool-call message: that message and its results, plus the user
        message right before it if there is one (in an agent loop with
        several tool rounds after the user's request, that request is in
        history; the full assembler keeps it preferentially);
      * otherwise the last user message and everything after it;
      * with no user message at all, the last atomic group;
    - history: everything in between.
    """
    start = 0
    while start < len(turns) and turns[start].role in SYSTEM_ROLES:
        start += 1
    system, rest = list(turns[:start]), list(turns[start:])
    if not rest:
        return system, [], []
    cut = _tail_start(rest)
    return system, rest[:cut], rest[cut:]


def _tail_start(rest: Sequence[Turn]) -> int:
    if rest[-1].role == "tool":
        for i in range(len(rest) - 1, -1, -1):
            turn = rest[i]
            if turn.role == "assistant" and turn.tool_call_ids:
                # Only a call answered by the trailing results counts; an
                # orphan trailing tool message falls through to the user rule.
                if len(group_turns(rest[i:])) == 1:
                    return i - 1 if i > 0 and rest[i - 1].role == "user" else i
                break
            if turn.role != "tool":
                break
    for i in range(len(rest) - 1, -1, -1):
        if rest[i].role == "user":
            return i
    groups = group_turns(rest)
    return len(rest) - len(groups[-1])


def resolve_budget(
    header_value: str | None,
    config_budget: int | None,
    model_input_window: int | None,
    requested_output: int | None,
    default_window: int = 8192,
) -> int:
    """Budget for the forwarded messages: header, else config, else derived.

    Raises ValueError (a 400 for the caller) when the header is present but is
    not a positive integer, or when the configured budget is not positive.
    """
    if header_value is not None:
        value = header_value.strip()
        if not _POSITIVE_INT_RE.fullmatch(value) or int(value) <= 0:
            raise ValueError(
                f"X-Memory-Budget must be a positive integer number of tokens, got {header_value!r}"
            )
        return int(value)
    if config_budget is not None:
        if config_budget <= 0:
            raise ValueError(f"memory.budget_tokens must be positive, got {config_budget}")
        return config_budget
    window = model_input_window if model_input_window and model_input_window > 0 else None
    derived = int((window or default_window) * WINDOW_SAFETY) - max(requested_output or 0, 0)
    return max(derived, MIN_DERIVED_BUDGET)


@dataclass(slots=True)
class RecentWindow:
    """Which history groups the recent-turns section keeps, and why not the others."""

    kept: list[int]  # group indexes, ascending
    tokens: int
    dropped: dict[int, str] = field(default_factory=dict)  # group index -> reason


def select_recent_groups(
    groups: Sequence[Sequence[Turn]],
    room: int,
    *,
    step: int = 0,
    pin: int | None = None,
    extra: Sequence[int] | None = None,
) -> RecentWindow:
    """Newest-first window of whole, forwardable groups within `room` tokens.

    `step` > 0 quantises where the window starts (a high/low-water mark
    without state): the start only moves when the conversation has grown by
    another `step` tokens, so consecutive requests share a longer prompt
    prefix and hit the provider's cache; the cost is up to `step` tokens of
    unused room. `pin` is a group to keep even if it is outside the window
    (the user's request in a multi-round tool loop) when it fits. `extra`:
    tokens that go with each group (sections kept in place before it).
    """
    sizes = [group_tokens(g) for g in groups]
    if extra is not None:
        sizes = [n + e for n, e in zip(sizes, extra, strict=True)]
    ok = [is_forwardable(g) for g in groups]
    kept = _suffix_window(sizes, ok, room, step)
    if pin is not None and ok[pin] and pin not in kept and sizes[pin] <= room:
        kept = [pin, *_suffix_window(sizes, ok, room - sizes[pin], step)]
    used = sum(sizes[i] for i in kept)
    dropped: dict[int, str] = {}
    # A window that opens on an assistant answer reads as an answer to the
    # memory block, and some providers want a user message first: take the
    # question along if it fits, else start at the first user message.
    if kept and groups[kept[0]][0].role == "assistant":
        j = kept[0] - 1
        if j >= 0 and ok[j] and groups[j][0].role == "user" and used + sizes[j] <= room:
            kept.insert(0, j)
            used += sizes[j]
        else:
            first_user = next(
                (k for k, idx in enumerate(kept) if groups[idx][0].role == "user"), None
            )
            if first_user:
                for idx in kept[:first_user]:
                    dropped[idx] = "would open the recent window on an assistant answer"
                    used -= sizes[idx]
                kept = kept[first_user:]
    kept_set = set(kept)
    for i, group in enumerate(groups):
        if i in kept_set or i in dropped:
            continue
        if not ok[i]:
            dropped[i] = (
                "orphan tool message" if group[0].role == "tool" else "tool calls lack results"
            )
        else:
            dropped[i] = "outside recent window"
    return RecentWindow(kept=kept, tokens=used, dropped=dropped)


def _suffix_window(sizes: Sequence[int], ok: Sequence[bool], room: int, step: int) -> list[int]:
    prefix = [0]
    for size, fine in zip(sizes, ok, strict=True):
        prefix.append(prefix[-1] + (size if fine else 0))
    threshold = prefix[-1] - room
    start = 0
    if threshold > 0:
        if step > 0:
            threshold = -(-threshold // step) * step
        start = bisect_left(prefix, threshold)
    return [i for i in range(start, len(sizes)) if ok[i]]
