"""`create_app(settings)`: everything is built here, in the lifespan; nothing at import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from policies.llm.calls import Complete
from policies.registry import Policies
from proxy.chat.pipeline import Pipeline
from proxy.config import ConfigError, load_settings
from proxy.errors import install_error_handlers
from proxy.http.admin import router as admin_router
from proxy.http.auth import Authenticator
from proxy.http.passthrough import router as passthrough_router
from proxy.http.routes import router
from proxy.http.services import Services
from proxy.http.ui import router as ui_router
from proxy.http.wire_routes import router as wire_router
from proxy.llm_policies import Completion, injected
from proxy.request_log import RequestLog
from proxy.responses_store import ResponseStore
from proxy.settings import Settings
from proxy.store.repo import Store
from proxy.upstream import Upstream


def create_app(settings: Settings, complete: Complete | None = None) -> FastAPI:
    """`complete`: what the LLM-backed policies ask instead of `memory.llm_model`
    (`memproxy eval` answers them from recorded replies)."""
    try:
        memory = settings.memory
        completion = Completion(settings, complete)
        policies = Policies.from_settings(
            memory.policy,
            memory.policy_params,
            extractor=memory.extractor,
            summarizer=memory.summarizer,
            injected=injected(settings, completion),
        )
    except ValueError as exc:
        raise ConfigError(f"invalid config: {exc}") from None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # An unreachable database does not stop the server: chat is served as
        # `memory.on_store_error` says until the store answers (then migrated).
        store = await Store.open(
            settings.memory.database_url, timeout_s=settings.memory.store_timeout_s, require=False
        )
        upstream = Upstream(settings)
        upstream.load_in_background()
        completion.bind(upstream)
        secrets = [*settings.server.api_keys, settings.server.admin_key or ""]
        request_log = RequestLog(
            store,
            store_content=settings.log.store_content,
            retention_days=settings.log.retention_days,
            secrets=[s for s in secrets if s] + upstream.secrets,
        )
        request_log.start()
        pipeline = Pipeline(settings, store, upstream, policies, request_log)
        app.state.services = Services(
            settings=settings,
            auth=Authenticator(settings.server.api_keys, settings.server.admin_key),
            store=store,
            upstream=upstream,
            pipeline=pipeline,
            request_log=request_log,
        )
        try:
            yield
        finally:
            await pipeline.aclose()
            await request_log.close()
            await store.close()

    app = FastAPI(title="memproxy", version="0.1.0", lifespan=lifespan)
    install_error_handlers(app)
    app.state.responses = ResponseStore()  # what /v1/responses produced (previous_response_id)
    app.include_router(router)
    app.include_router(wire_router)
    app.include_router(admin_router)
    app.include_router(ui_router)
    app.include_router(passthrough_router)  # embeddings, files, ...: no memory work
    return app


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` / `--workers N`: config from $MEMPROXY_CONFIG."""
    return create_app(load_settings())
