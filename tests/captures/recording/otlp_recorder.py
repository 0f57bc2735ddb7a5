"""An OTLP/HTTP endpoint that keeps every export exactly as the exporter sent it.

It stands where evalkit's receiver would: the exporter under test posts to `/v1/traces`,
`/v1/logs` (and `/v1/metrics`, kept too), gets the empty success answer OTLP/HTTP defines,
and the request body, its content type and encoding are appended to the capture, byte for byte.

Standard library only, like `fake_llm`.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OtlpRecorder:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.exports: list[dict[str, Any]] = []
        exports, lock = self.exports, threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                # OpenTelemetry JS's Node exporter pipes its body: chunked, with no Content-Length.
                if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                    return self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = b""
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    body += self.rfile.read(size)
                    self.rfile.readline()  # the CRLF closing the chunk
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers, up to the empty line
                return body

            def do_POST(self) -> None:
                raw = self._body()
                path = self.path.split("?")[0]
                signal = path.rsplit("/", 1)[-1]
                content_type = self.headers.get("Content-Type", "application/x-protobuf")
                with lock:
                    exports.append({
                        "signal": signal, "path": path, "content_type": content_type,
                        "content_encoding": self.headers.get("Content-Encoding", ""),
                        "received_unix_nano": time.time_ns(), "body_base64": base64.b64encode(raw).decode(),
                    })
                answer = b"{}" if "json" in content_type else b""
                self.send_response(200)
                self.send_header("Content-Type", "application/json" if answer else "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OtlpRecorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def dumps(self) -> str:
        return "".join(json.dumps(export) + "\n" for export in self.exports)
