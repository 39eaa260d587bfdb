"""Secrets out of what the proxy stores and reports.

A configured key is replaced where it stands as a token of its own, never
inside a longer word: a short placeholder key ("eval", "test") must not turn
"evaluation" into "[redacted]uation" in a request record, which the
inspector shows and the eval scores.
"""

from __future__ import annotations

import re
from functools import lru_cache

REDACTED = "[redacted]"
# A bearer token in a header echoed into an error or a record.
_AUTH_RE = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]+")
_TOKEN_CHAR = r"A-Za-z0-9_\-"


@lru_cache(maxsize=256)
def _secret_pattern(secret: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![{_TOKEN_CHAR}]){re.escape(secret)}(?![{_TOKEN_CHAR}])")


def redact_secrets(text: str, secrets: list[str]) -> str:
    """`text` with every secret of 4 characters or more replaced where it is a
    token of its own."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = _secret_pattern(secret).sub(REDACTED, text)
    return text


def redact_text(text: str, secrets: list[str]) -> str:
    """`redact_secrets`, and any bearer token."""
    text = redact_secrets(text, secrets)
    # A case-insensitive pattern has no literal prefix for `re` to skip ahead by, so
    # it is tried at every position: on a request record (the whole prompt, tens of
    # KiB) that is most of the redaction's time. Only the ASCII letters match
    # "bearer" case-insensitively, so a text whose lower case lacks it has none.
    if "bearer" not in text.lower():
        return text
    return _AUTH_RE.sub(rf"\1{REDACTED}", text)
