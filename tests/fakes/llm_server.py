"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions and Anthropic
messages, replaying a script of replies. Tests point a real client at it.

    with FakeLLMServer([say("hello"), call("write_file", path="MEMORY.md", content="x")]) as srv:
        settings = {"provider": "openai-compatible", "base_url": srv.openai_base_url, ...}
        ...
        srv.requests[0].json["messages"]   # what the client sent

Which API is spoken is decided by the request path: ``.../chat/completions`` is OpenAI,
``.../v1/messages`` is Anthropic. A script item is a :class:`Reply` (text and/or tool calls,
optionally delayed) or an error (:func:`fail`: any status, with ``Retry-After``). When the
script is empty the ``responder`` callable is asked, else the server answers HTTP 400
"script exhausted" so a test that calls the model more often than it planned fails loudly.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class FakeCall:
    name: str
    arguments: Mapping[str, Any]


@attrs.frozen
class Reply:
    text: str = ""
    tool_calls: tuple[FakeCall, ...] = ()
    #: seconds to wait before answering (to test client timeouts)
    delay: float = 0.0
    #: non-200 replies: an error body in the API's format
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict)
    error_message: str = ""
    #: a raw body to send instead of a well-formed reply (to test malformed replies)
    raw_body: bytes | None = None
    #: seconds between the body's bytes (a stalled proxy sending a byte now and then)
    trickle: float = 0.0


def say(text: str, *, delay: float = 0.0) -> Reply:
    """The model answers with text."""
    return Reply(text=text, delay=delay)


def call(name: str, _text: str = "", *, delay: float = 0.0, **arguments: Any) -> Reply:
    """The model calls one tool."""
    return Reply(text=_text, tool_calls=(FakeCall(name, arguments),), delay=delay)


def calls(*items: tuple[str, Mapping[str, Any]], text: str = "") -> Reply:
    """The model calls several tools in one turn."""
    return Reply(text=text, tool_calls=tuple(FakeCall(n, a) for n, a in items))


def fail(
    status: int, message: str = "", *, retry_after: float | str | None = None, delay: float = 0.0
) -> Reply:
    """The API answers with an error status (429, 503, 401, ...)."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(
        status=status, headers=headers, error_message=message or f"fake error {status}", delay=delay
    )


@attrs.frozen
class RecordedRequest:
    path: str
    headers: Mapping[str, str]  # lower-cased names
    json: Any
    received_at: float
    api: str  # "openai" or "anthropic"


Responder = Callable[[RecordedRequest], Reply | None]


class FakeLLMServer:
    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        require_key: str | None = None,
    ) -> None:
        self.script: deque[Reply] = deque(script)
        self.responder = responder
        self.require_key = require_key
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeLLMServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                fake._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = (
            False  # a handler still sleeping (a delay test) must not hold up stop()
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ addresses

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    # ------------------------------------------------------------------ serving

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            reply = self.responder(request)
            if reply is not None:
                return reply
        return Reply(status=400, error_message="fake server: script exhausted")

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except ValueError:
            body = None
        path = handler.path
        api = "anthropic" if path.rstrip("/").endswith("/messages") else "openai"
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = RecordedRequest(path, headers, body, time.monotonic(), api)
        with self._lock:
            self.requests.append(request)

        if not (path.endswith("/chat/completions") or path.endswith("/v1/messages")):
            return self._send(handler, 404, {"error": {"message": f"no route {path}"}})
        problem = self._check(request)
        if problem is not None:
            return self._send(handler, problem[0], self._error_body(api, problem[0], problem[1]))
        reply = self._next(request)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.raw_body is not None:
            return self._send_raw(handler, reply.status, reply.raw_body, reply.headers)
        if reply.status != 200:
            return self._send(
                handler,
                reply.status,
                self._error_body(api, reply.status, reply.error_message),
                reply.headers,
            )
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        payload = (
            self._anthropic(reply, model) if api == "anthropic" else self._openai(reply, model)
        )
        self._send(handler, 200, payload, reply.headers, reply.trickle)

    def _check(self, request: RecordedRequest) -> tuple[int, str] | None:
        """Validate what a real API would reject: auth, the version header, the body."""
        if (
            not isinstance(request.json, dict)
            or "messages" not in request.json
            or "model" not in request.json
        ):
            return 400, "body must be a JSON object with model and messages"
        h = request.headers
        if request.api == "anthropic":
            if "anthropic-version" not in h:
                return 400, "anthropic-version header is required"
            if "max_tokens" not in request.json:
                return 400, "max_tokens: Field required"
            if any(m.get("role") == "system" for m in request.json["messages"]):
                return 400, "messages: system is not a valid role (use the top-level system)"
            sent = h.get("x-api-key")
        else:
            auth = h.get("authorization", "")
            sent = auth[7:] if auth.lower().startswith("bearer ") else None
        if self.require_key is not None and sent != self.require_key:
            # real APIs echo (part of) the wrong key back: clients must scrub it from errors
            return 401, f"Incorrect API key provided: {sent}"
        return None

    @staticmethod
    def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
        if api == "anthropic":
            kind = {
                429: "rate_limit_error",
                401: "authentication_error",
                529: "overloaded_error",
            }.get(status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": message}}
        return {"error": {"message": message, "type": "fake_error", "code": status}}

    def _openai(self, reply: Reply, model: str) -> dict[str, Any]:
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
                }
                for i, c in enumerate(reply.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _anthropic(self, reply: Reply, model: str) -> dict[str, Any]:
        n = next(self._ids)
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for i, c in enumerate(reply.tool_calls):
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}_{i}",
                    "name": c.name,
                    "input": dict(c.arguments),
                }
            )
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        headers: Mapping[str, str] = {},
        trickle: float = 0.0,
    ) -> None:
        FakeLLMServer._send_raw(
            handler, status, json.dumps(payload).encode("utf-8"), headers, trickle
        )

    @staticmethod
    def _send_raw(
        handler: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        headers: Mapping[str, str] = {},
        trickle: float = 0.0,
    ) -> None:
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            if not trickle:
                handler.wfile.write(data)
            for i in range(len(data) if trickle else 0):
                handler.wfile.write(data[i : i + 1])
                handler.wfile.flush()
                time.sleep(trickle)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to do
