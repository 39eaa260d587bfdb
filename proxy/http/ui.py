"""The web inspector: one static page at `/ui`, reading the admin API.

The page itself holds no data and needs no key: the operator types the admin
key into it, and every call it makes goes to `/memory/…` with that key.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter()


@lru_cache(maxsize=1)
def _page() -> str:
    return (resources.files("proxy") / "static" / "inspector.html").read_text(encoding="utf-8")


@router.get("/ui", response_class=HTMLResponse, include_in_schema=False)
@router.get("/ui/", response_class=HTMLResponse, include_in_schema=False)
async def inspector() -> HTMLResponse:
    # The key lives in the page's sessionStorage; forbid framing and referrers so
    # no other origin can drive the page or learn what it looked at.
    return HTMLResponse(
        _page(),
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": (
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
                "frame-ancestors 'none'; form-action 'none'"
            ),
        },
    )
