# memproxy: OpenAI-compatible memory-managing proxy.
#   docker build -t memproxy .
#   docker run -p 8400:8400 -e MEMPROXY_API_KEYS=sk-memproxy-mine -e MEMPROXY_ADMIN_KEY=admin-mine \
#     -v memproxy-data:/data memproxy
# The image holds the repository's config.yaml (the demo model answers without a
# provider key); mount your own over it: -v "$PWD/config.yaml:/config/config.yaml:ro".
# It listens on 0.0.0.0, so API keys are required (MEMPROXY_API_KEYS or server.api_keys).
# tests/e2e/test_container_commands.py runs these ENV and ENTRYPOINT lines without Docker.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    MEMPROXY_CONFIG=/config/config.yaml \
    MEMPROXY_DATABASE_URL=sqlite+aiosqlite:////data/memproxy.db

WORKDIR /app
COPY pyproject.toml README.md ./
COPY proxy ./proxy
COPY policies ./policies
COPY config.yaml /config/config.yaml
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 10001 --user-group memproxy \
    && mkdir -p /data /config \
    && chown memproxy:memproxy /data

USER 10001:10001
EXPOSE 8400
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=3s CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8400/health').status == 200 else 1)"]
ENTRYPOINT ["memproxy", "serve", "--host", "0.0.0.0", "--port", "8400"]
