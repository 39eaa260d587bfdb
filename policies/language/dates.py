"""Date labels of turns, so that recalled and summarised text keeps its "when".

A turn's date is the session date a client wrote into the conversation when
there is one (a transcript replayed later starts each session with a marker
such as "[date: 1:56 pm on 8 May, 2023]"; every following turn belongs to
that session), or a date the client put on the message itself (its `name`,
or a `metadata` date: `stated_date`), else the day the proxy stored the
turn (`created_at`, UTC).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# A leading marker: "[date: …]", "[2023-05-08]", "Date: …", "(session date: …)".
_MARKER = re.compile(
    r"^\s*(?:[\[(]\s*(?:(?:session\s+)?date|time|日期)?\s*[:：]?\s*([^\])\n]{4,60}?)\s*[\])]"
    r"|(?:session\s+)?date\s*[:：]\s*([^\n]{4,60}?)(?:\n|$))",
    re.IGNORECASE,
)
_DATE_IN = re.compile(
    rf"\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{4}}年\d{{1,2}}月\d{{1,2}}日"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+\d{{4}}"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}",
    re.IGNORECASE,
)


def marker_date(text: str) -> str | None:
    """The date a turn's leading marker names, as written ("8 May, 2023"), or None.

    Verbatim like every date memproxy passes on (DESIGN: dates are never
    paraphrased); only whitespace is folded.

    Only a bracketed or `Date:` marker at the very start counts, and it must
    contain a recognisable date: a turn that merely mentions a date is not a
    session boundary.
    """
    m = _MARKER.match(text)
    if m is None:
        return None
    inner = m.group(1) or m.group(2) or ""
    found = _DATE_IN.search(inner)
    if found is None:
        return None
    return " ".join(found.group(0).split())


def strip_marker(text: str) -> str:
    """`text` without its leading date marker (see `marker_date`): the marker is
    metadata about the turn, not something its speaker said."""
    m = _MARKER.match(text)
    if m is None or _DATE_IN.search(m.group(1) or m.group(2) or "") is None:
        return text
    return text[m.end() :].lstrip()


def strip_markers(text: str) -> str:
    """`text` without the date markers that open any of its lines (a client that
    merges consecutive turns of one speaker may carry a session start inside)."""
    if "\n" not in text:
        return strip_marker(text)
    return "\n".join(strip_marker(line) for line in text.split("\n"))


def last_marker_date(text: str) -> str | None:
    """The date of the last marker opening a line of `text`: the session the
    turns after this one belong to."""
    found = None
    for line in text.split("\n"):
        found = marker_date(line) or found
    return found


# Metadata keys a client may date a message with.
_META_KEYS = ("date", "time", "timestamp", "created_at", "sent_at")


def stated_date(raw: Mapping[str, Any]) -> str | None:
    """A date the message carries besides its text: a `name` field that holds
    one ("2024-03-05"), or a date under `metadata`; as written, or None."""
    meta = raw.get("metadata")
    values = [raw.get("name")]
    if isinstance(meta, Mapping):
        values += [meta.get(k) for k in _META_KEYS]
    for value in values:
        if isinstance(value, str):
            found = _DATE_IN.search(value)
            if found is not None:
                return " ".join(found.group(0).split())
    return None


def day_label(created_at: float | None) -> str:
    """`created_at` (epoch seconds) as an ISO day in UTC; "" if unknown."""
    if not created_at or created_at <= 0:
        return ""
    return time.strftime("%Y-%m-%d", time.gmtime(created_at))


class DateLabels:
    """Date label per turn ordinal, appended in order (and cut on a rewind).

    The label of a turn is the latest session marker at or before it, else
    its own stored day.
    """

    def __init__(self) -> None:
        self._labels: list[str] = []
        self._marked: list[bool] = []  # whether the label came from a marker
        # The session date the next turns inherit: the last marker seen, which
        # may sit inside a turn rather than open it.
        self._carry: list[str] = []

    def __len__(self) -> int:
        return len(self._labels)

    def add(self, text: str, created_at: float | None, stated: str | None = None) -> str:
        """The label of the next turn. `stated`: a date the message carries
        besides its text (`stated_date`), taken like a marker."""
        marker = marker_date(text) or stated
        if marker is not None:
            label, marked = marker, True
        elif self._marked and self._marked[-1]:
            label, marked = self._carry[-1], True
        else:
            label, marked = day_label(created_at), False
        later = last_marker_date(text) if "\n" in text else None
        self._labels.append(label)
        self._marked.append(marked or later is not None)
        self._carry.append(later or label)
        return label

    def truncate(self, ordinal: int) -> None:
        del self._labels[ordinal:]
        del self._marked[ordinal:]
        del self._carry[ordinal:]

    def get(self, ordinal: int) -> str:
        return self._labels[ordinal] if 0 <= ordinal < len(self._labels) else ""
