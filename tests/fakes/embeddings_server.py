"""A real HTTP server on 127.0.0.1 that speaks the OpenAI embeddings API
(``POST .../embeddings``) and Gemini's ``POST .../models/{model}:batchEmbedContents``.

    with FakeEmbeddingsServer(api_key="sk-test-...", dims=8) as srv:
        config = {"embedding.base_url": srv.openai_base_url, "embedding.api_key": "sk-test-..."}
        ...
        srv.requests        # every request: path, headers, parsed JSON body
        srv.fail_next(429, retry_after="0")   # the next reply is an error, then back to normal

Vectors are deterministic functions of the text (from its sha256), deliberately NOT unit
length, so a client that forgets to normalise is caught. A wrong key gets the API's own
error shape — OpenAI's 401 echoes part of the key, as the real API does, so a client that
copies error bodies into messages must redact them.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections import deque
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


def fake_vector(text: str, dims: int) -> list[float]:
    """A deterministic, non-normalised vector for ``text`` (norm around 3 to 6)."""
    out: list[float] = []
    counter = 0
    while len(out) < dims:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        for (n,) in struct.iter_unpack(">H", digest):
            out.append((n / 65535.0 * 2.0 - 1.0) * 3.0)
        counter += 1
    return out[:dims]


@attrs.frozen
class Recorded:
    method: str
    path: str
    #: header names lower-cased (HTTP header names are case-insensitive)
    headers: Mapping[str, str]
    json: Any


@attrs.frozen
class Failure:
    status: int
    retry_after: str | None = None
    body: Mapping[str, Any] | None = None


class FakeEmbeddingsServer:
    def __init__(self, *, api_key: str | None = None, dims: int = 8) -> None:
        self.api_key = api_key
        self.dims = dims
        self.requests: list[Recorded] = []
        self._failures: deque[Failure] = deque()
        self._lock = threading.Lock()
        #: reply to OpenAI requests with ``data`` in reverse order (indexes stay right)
        self.shuffle = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ control

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def gemini_base_url(self) -> str:
        return f"{self.url}/v1beta"

    def fail_next(self, status: int, *, retry_after: str | None = None,
                  body: Mapping[str, Any] | None = None, times: int = 1) -> None:
        with self._lock:
            for _ in range(times):
                self._failures.append(Failure(status, retry_after, body))

    def __enter__(self) -> FakeEmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # ------------------------------------------------------------------ the protocol

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = None
                with srv._lock:
                    srv.requests.append(Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    failure = srv._failures.popleft() if srv._failures else None
                if failure is not None:
                    headers = {"Retry-After": failure.retry_after} if failure.retry_after is not None else {}
                    self._send(failure.status, failure.body or {"error": {"message": f"fake failure {failure.status}"}}, headers)
                    return
                path = self.path.split("?", 1)[0]  # a key may ride in the query string
                if path.endswith("/embeddings"):
                    self._openai(body)
                elif path.endswith(":batchEmbedContents"):
                    self._gemini(body)
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _openai(self, body: Any) -> None:
                auth = self.headers.get("Authorization", "")
                if srv.api_key is not None and auth != f"Bearer {srv.api_key}":
                    given = auth.removeprefix("Bearer ")
                    # like api.openai.com: the message shows part of the key it got
                    shown = f"{given[:8]}*****{given[-4:]}" if given else ""
                    self._send(401, {"error": {
                        "message": f"Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys.",
                        "type": "invalid_request_error", "code": "invalid_api_key"}})
                    return
                texts = body.get("input") if isinstance(body, dict) else None
                if isinstance(texts, str):
                    texts = [texts]
                if not isinstance(texts, list) or not body.get("model"):
                    self._send(400, {"error": {"message": "input (list) and model are required"}})
                    return
                dims = int(body.get("dimensions") or srv.dims)
                data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dims)}
                        for i, t in enumerate(texts)]
                if srv.shuffle:
                    data.reverse()
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})

            def _gemini(self, body: Any) -> None:
                key = self.headers.get("x-goog-api-key")
                if srv.api_key is not None and key != srv.api_key:
                    # Gemini answers a bad key with 400 INVALID_ARGUMENT, a missing one with 403
                    status = 403 if not key else 400
                    self._send(status, {"error": {
                        "code": status,
                        "message": "API key not valid. Please pass a valid API key." if key else
                        "Method doesn't allow unregistered callers. Please use API Key.",
                        "status": "PERMISSION_DENIED" if not key else "INVALID_ARGUMENT"}})
                    return
                reqs = body.get("requests") if isinstance(body, dict) else None
                if not isinstance(reqs, list) or len(reqs) > 100:
                    self._send(400, {"error": {"code": 400, "message": "at most 100 requests per batch",
                                               "status": "INVALID_ARGUMENT"}})
                    return
                model = self.path.split("?", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
                out = []
                for r in reqs:
                    if r.get("model") != f"models/{model}":
                        self._send(400, {"error": {"code": 400, "message": "model mismatch",
                                                   "status": "INVALID_ARGUMENT"}})
                        return
                    text = "".join(p.get("text", "") for p in r["content"]["parts"])
                    dims = int(r.get("outputDimensionality") or srv.dims)
                    # the task type changes the vector, as it does for real
                    out.append({"values": fake_vector(f"{r.get('taskType', '')}|{text}", dims)})
                self._send(200, {"embeddings": out})

        return Handler
