"""A real HTTP server on 127.0.0.1 that answers every request with a redirect (any status,
any ``Location``), or, once told to, sends it on to a route of its own; and records what it
received, headers included. Two of them on different ports stand for an API and the other
host its redirect points to.

    with RedirectServer() as api, RedirectServer() as other:
        api.redirect(302, other.url + "/v1/embeddings")
        api.answer("/v2/embeddings", {...})   # a route of its own, 200
        ...
        other.requests   # what reached the other host (headers lower-cased)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Seen:
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes


class RedirectServer:
    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.status = 404
        self.location: str | None = None
        self.answers: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def redirect(self, status: int, location: str) -> None:
        """Answer every request with ``status`` and ``Location: location``."""
        self.status, self.location = status, location

    def answer(self, path: str, body: Any) -> None:
        """Answer requests for ``path`` with 200 and ``body`` as JSON (the redirect's target
        on this same server)."""
        self.answers[path] = body

    def __enter__(self) -> RedirectServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with srv._lock:
                    srv.requests.append(Seen(self.command, self.path,
                                             {k.lower(): v for k, v in self.headers.items()}, body))
                if self.path in srv.answers:
                    status, raw = 200, json.dumps(srv.answers[self.path]).encode()
                else:
                    status = srv.status
                    raw = json.dumps({"error": {"message": f"nothing here: {self.path}"}}).encode()
                self.send_response(status)
                if status != 200 and srv.location is not None:
                    self.send_header("Location", srv.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = _any

        return Handler
