"""Clock times in an item's text, moved by a number of minutes.

Every time of a span moves ("9am to 1pm" an hour earlier is "8am to 12pm"), each
written back in its own style: am/pm, 24-hour, or a Chinese part of the day
("下午3点半").
"""

from __future__ import annotations

import re

_CLOCK = re.compile(
    r"(?P<zh>早上|上午|中午|下午|晚上|凌晨)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<ampm>am|pm)?"
    r"(?P<dian>点半?)?(?P<fen>\d+分)?",
    re.IGNORECASE,
)
_ZH_HALF = {"早上": 0, "上午": 0, "凌晨": 0, "中午": 12, "下午": 12, "晚上": 12}


def shift_clock(text: str, minutes: float) -> str | None:
    """Every clock time in `text` moved by `minutes` ("10am to 8pm" +120 → "12pm to 10pm")."""
    out, last, moved = [], 0, 0
    for m in _CLOCK.finditer(text):
        # A bare hour counts only as one end of a span ("9 to 5pm").
        bare = not (m.group("ampm") or m.group("m") or m.group("dian"))
        if bare and not re.match(r"\s?(?:to|until|till|-|–|到|至)", text[m.end() :], re.I):
            continue
        hour = int(m.group("h"))
        minute = int(m.group("m") or 0)
        if m.group("dian") == "点半":
            minute = 30
        if m.group("fen"):
            minute = int(m.group("fen")[:-1])
        ampm = (m.group("ampm") or "").lower()
        if not ampm:
            nxt = re.search(r"\d\s?(am|pm)", text[m.end() :], re.IGNORECASE)
            ampm = nxt.group(1).lower() if nxt else ""
        if ampm:
            hour = hour % 12 + (12 if ampm == "pm" else 0)
        elif m.group("zh") and hour < 12:
            hour += _ZH_HALF[m.group("zh")]
        total = (hour * 60 + minute + int(minutes)) % (24 * 60)
        out.append(text[last : m.start()] + _clock_text(m, total, bool(ampm)))
        last = m.end()
        moved += 1
    if not moved:
        return None
    return "".join(out) + text[last:]


def _clock_text(m: re.Match[str], total: int, meridiem: bool) -> str:
    hour, minute = divmod(total, 60)
    if meridiem:
        h12 = hour % 12 or 12
        mins = f":{minute:02d}" if minute or m.group("m") else ""
        return f"{h12}{mins}{'pm' if hour >= 12 else 'am'}"
    if m.group("dian"):
        zh = m.group("zh") or ""
        if zh:
            zh = (
                "凌晨"
                if hour < 5
                else "上午"
                if hour < 12
                else "中午"
                if hour < 13
                else ("下午" if hour < 18 else "晚上")
            )
        h = hour % 12 if zh and hour > 12 else hour
        tail = "点半" if minute == 30 else f"点{minute}分" if minute else "点"
        return f"{zh}{h}{tail}"
    return f"{hour:02d}:{minute:02d}" if m.group("h").startswith("0") else f"{hour}:{minute:02d}"
