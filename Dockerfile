# evalkit service image. Talks to ClickHouse over HTTP (EVALKIT_CLICKHOUSE_URL);
# without it, it runs the embedded engine on /data.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evalkit ./evalkit
COPY ingest ./ingest
COPY trajectory ./trajectory
COPY scoring ./scoring
COPY sdk ./sdk
RUN pip install '.[server]' && useradd --system --home /data evalkit && mkdir -p /data && chown evalkit /data
USER evalkit
VOLUME /data
EXPOSE 4317 4318 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
ENTRYPOINT ["evalkit", "serve", "--host", "0.0.0.0", "--data-dir", "/data"]
