"""Material a user pastes into a message is data, not the user's own words.

A copied web page, an e-mail quoted with `>`, a code block: whatever
instructions they contain ("from now on ignore all previous rules") were
written by someone else, and must never become the user's standing rules.
The extractor reads the user's own text only: this removes what is
recognisably embedded, and keeps everything else as it is.
"""

from __future__ import annotations

import re

# ``` or ~~~ fences, closed or running to the end of the message.
_FENCE = re.compile(r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)")
# An element with its content: <div ...> ... </div> (markup pasted from a page).
_ELEMENT = re.compile(r"(?s)<([A-Za-z][\w:-]*)\b[^<>]*>.*?</\1\s*>")
# A lone tag left over (<br>, <img ...>, an unclosed <p>).
_TAG = re.compile(r"</?[A-Za-z][\w:-]*\b[^<>]*>")
# Quoted lines, as mail clients and Markdown write them.
_QUOTED = re.compile(r"(?m)^[ \t]*>.*$")


def without_embedded(text: str) -> str:
    """`text` without pasted blocks: fenced code, markup elements, quoted lines."""
    if "```" not in text and "~~~" not in text and "<" not in text and ">" not in text:
        return text
    out = _FENCE.sub(" ", text)
    previous = None
    while previous != out:  # nested elements: the innermost go first
        previous, out = out, _ELEMENT.sub(" ", out)
    out = _TAG.sub(" ", out)
    out = _QUOTED.sub(" ", out)
    return re.sub(r"[ \t]{2,}", " ", out).strip()
