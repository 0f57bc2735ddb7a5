"""`Recording`: run a framework against the fake LLM with its telemetry going to the recorder.

    with Recording(capture_dir, replies, framework="openai-agents", instrumentation="openinference") as rec:
        rec.env()                      # OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OTEL_EXPORTER_OTLP_* …
        ... build the framework's tracer provider with rec.otlp_endpoint, run the agent ...
        rec.flush(provider)            # force_flush + shutdown, so every export reached the recorder

On exit it writes, into `capture_dir`:
- `exports.jsonl`: one OTLP/HTTP request a line (signal, content type, encoding, body in base64);
- `llm_log.jsonl`: the fake LLM's log, one request and its answer a line (the ground truth);
- `llm_errors.jsonl`: only when a reply scripted an error, each request answered with it (`Script.failures`);
- `llm_compactions.jsonl`: only when the framework compacted a conversation with the Responses API's
  `responses.compact`, each request and its answer (`Script.compactions`);
- `meta.json`: framework, instrumentation, the versions installed, the session id, notes.

Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from .fake_llm import FakeLLM, Reply
from .otlp_recorder import OtlpRecorder


class Recording:
    def __init__(self, capture_dir: str | Path, replies: list[Reply] | list[dict[str, Any]], *, framework: str,
                 instrumentation: str, packages: list[str], session_id: str | None = None,
                 notes: str = "") -> None:
        self.capture_dir = Path(capture_dir)
        self.llm = FakeLLM(replies)
        self.recorder = OtlpRecorder()
        self.meta: dict[str, Any] = {"framework": framework, "instrumentation": instrumentation,
                                     "session_id": session_id, "notes": notes, "packages": packages}

    @property
    def base_url(self) -> str:
        return self.llm.base_url

    @property
    def otlp_endpoint(self) -> str:
        return self.recorder.endpoint

    def env(self) -> None:
        """Point every client library and OTLP exporter this process creates at the fakes."""
        os.environ.update({
            "OPENAI_BASE_URL": self.llm.base_url, "OPENAI_API_KEY": "sk-fake",
            "ANTHROPIC_BASE_URL": self.llm.base_url.removesuffix("/v1"), "ANTHROPIC_API_KEY": "sk-ant-fake",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.recorder.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": self.recorder.endpoint + "/v1/traces",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": self.recorder.endpoint + "/v1/logs",
        })

    def flush(self, *providers: Any) -> None:
        for provider in providers:
            provider.force_flush()
            if hasattr(provider, "shutdown"):
                provider.shutdown()

    def __enter__(self) -> Recording:
        self.llm.__enter__()
        self.recorder.__enter__()
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.recorder.__exit__()
        self.llm.__exit__()
        if exc_type is not None:
            return
        # A record script that runs another language's packages (npm) names their versions itself.
        versions = dict(self.meta.get("versions") or {})
        for package in self.meta["packages"]:
            if versions.get(package) is not None:
                continue
            try:
                versions[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                versions[package] = None
        self.meta["versions"] = versions
        self.meta["python"] = sys.version.split()[0]
        self.meta["llm_calls"] = len(self.llm.log)
        self.meta["unused_replies"] = self.llm.unused
        failures = self.llm.script.failures
        if failures:  # only when scripted, so that captures recorded before re-record the same
            self.meta["failed_llm_requests"] = len(failures)
        if self.llm.audio.log:  # only when spoken to, so that captures recorded before re-record the same
            self.meta["audio_requests"] = len(self.llm.audio.log)
        compactions = self.llm.script.compactions
        if compactions:  # only when asked for, so that captures recorded before re-record the same
            self.meta["compactions"] = len(compactions)
        self.meta["exports"] = len(self.recorder.exports)
        self.capture_dir.mkdir(parents=True, exist_ok=True)
        (self.capture_dir / "exports.jsonl").write_text(self.recorder.dumps())
        (self.capture_dir / "llm_log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in self.llm.log))
        if failures:  # the requests answered with a scripted error: no calls of the log, the ground truth of failures
            (self.capture_dir / "llm_errors.jsonl").write_text("".join(json.dumps(e) + "\n" for e in failures))
        if compactions:  # the compactions asked for: no calls of the log (no reply was scripted for them)
            (self.capture_dir / "llm_compactions.jsonl").write_text(
                "".join(json.dumps(e) + "\n" for e in compactions))
        if self.llm.audio.log:  # speech heard and said (`fake_audio`): no calls of the log
            (self.capture_dir / "llm_audio.jsonl").write_text(self.llm.audio.dumps())
        (self.capture_dir / "meta.json").write_text(json.dumps(self.meta, indent=1) + "\n")
        if self.llm.unused:
            print(f"warning: {self.llm.unused} scripted replies were never asked for", file=sys.stderr)
        if not self.recorder.exports:
            raise RuntimeError("nothing was exported: is the tracer provider flushed (rec.flush(provider))?")
