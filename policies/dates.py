"""Date labels of turns, so that recalled and summarised text keeps its "when".

A turn's date is the session date a client wrote into the conversation when
there is one (a transcript replayed later starts each session with a marker
such as "[date: 1:56 pm on 8 May, 2023]"; every following turn belongs to
that session), else the day the proxy stored the turn (`created_at`, UTC).
"""

from __future__ import annotations

import re
import time

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
    """The date a turn's leading marker names ("8 May 2023"), or None.

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
    return " ".join(found.group(0).replace(",", " ").split())


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

    def __len__(self) -> int:
        return len(self._labels)

    def add(self, text: str, created_at: float | None) -> str:
        marker = marker_date(text)
        if marker is not None:
            label, marked = marker, True
        elif self._marked and self._marked[-1]:
            label, marked = self._labels[-1], True
        else:
            label, marked = day_label(created_at), False
        self._labels.append(label)
        self._marked.append(marked)
        return label

    def truncate(self, ordinal: int) -> None:
        del self._labels[ordinal:]
        del self._marked[ordinal:]

    def get(self, ordinal: int) -> str:
        return self._labels[ordinal] if 0 <= ordinal < len(self._labels) else ""
