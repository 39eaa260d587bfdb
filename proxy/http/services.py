"""The objects one app instance owns, built by the lifespan (no globals)."""

from __future__ import annotations

from dataclasses import dataclass

from proxy.chat.pipeline import Pipeline
from proxy.http.auth import Authenticator
from proxy.request_log import RequestLog
from proxy.settings import Settings
from proxy.store.repo import Store
from proxy.upstream import Upstream


@dataclass(slots=True)
class Services:
    settings: Settings
    auth: Authenticator
    store: Store
    upstream: Upstream
    pipeline: Pipeline
    request_log: RequestLog
