"""A real forwarding HTTP proxy on 127.0.0.1 that records what it was asked.

    with FakeProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url}       # http://127.0.0.1:PORT
        ...
        proxy.requests                          # ["CONNECT 127.0.0.1:4443", "GET http://...", ...]
        proxy.logins                            # the Proxy-Authorization sent, decoded, or None

``CONNECT host:port`` opens a tunnel (what a client does for an https:// URL) and relays
bytes both ways; ``GET http://...`` (an absolute URL, what a client does for http://) is
forwarded and the answer relayed. Only 127.0.0.1 targets are served.
"""

from __future__ import annotations

import base64
import http.client
import select
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeProxy:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.logins: list[str | None] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _record(self) -> None:
                proxy.requests.append(f"{self.command} {self.path}")
                sent = self.headers.get("Proxy-Authorization")
                proxy.logins.append(base64.b64decode(sent.split()[1]).decode() if sent else None)

            def do_CONNECT(self) -> None:
                self._record()
                host, _, port = self.path.rpartition(":")
                if host != "127.0.0.1":
                    self.send_error(403)
                    return
                upstream = socket.create_connection((host, int(port)), timeout=30)
                self.send_response(200, "Connection established")
                self.end_headers()
                sockets = [self.connection, upstream]
                try:
                    while True:
                        ready, _, _ = select.select(sockets, [], [], 30)
                        if not ready:
                            break
                        for s in ready:
                            data = s.recv(65536)
                            if not data:
                                return
                            (upstream if s is self.connection else self.connection).sendall(data)
                finally:
                    upstream.close()
                    self.close_connection = True

            def do_GET(self) -> None:
                self._record()
                parts = urllib.parse.urlsplit(self.path)
                if parts.hostname != "127.0.0.1":
                    self.send_error(403)
                    return
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("proxy-authorization", "proxy-connection", "connection")}
                path = parts.path + (f"?{parts.query}" if parts.query else "")
                conn.request("GET", path, headers=headers)
                answer = conn.getresponse()
                body = answer.read()
                self.send_response(answer.status, answer.reason)
                for k, v in answer.getheaders():
                    if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                conn.close()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
