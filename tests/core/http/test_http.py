"""soulframe._engine.http, the one HTTP client the chat and embedding plugins share, against a real
HTTP server on 127.0.0.1 that replays a script of replies (status, headers, body, delay, or
a dropped connection)."""

from __future__ import annotations

import email.message
import email.utils
import json
import logging
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest
from soulframe._engine.http import (
    RequestError,
    RetryPolicy,
    Secret,
    error_detail,
    post_json,
    redact,
    resolve_api_key,
    retry_after,
)
from soulframe._engine.model import SoulframeError

KEY = "sk-test-0123456789abcdefSECRET"
FAST = RetryPolicy(max_retries=3, backoff=0.01)


# --------------------------------------------------------------------------- the server


@attrs.frozen
class Step:
    status: int = 200
    body: Any = attrs.field(factory=lambda: {"ok": True})
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay: float = 0.0
    #: close the connection without answering, as a crashed proxy does
    drop: bool = False
    #: seconds between the body's bytes, as a stalled server sending keep-alive bytes does
    trickle: float = 0.0
    #: after this many bytes of the body, send nothing more for a minute (a hung backend)
    stall_after: int | None = None


@attrs.frozen
class Seen:
    path: str
    headers: Mapping[str, str]  # lower-cased names
    json: Any
    at: float


class ScriptServer:
    def __init__(self, *steps: Step) -> None:
        self.script: deque[Step] = deque(steps)
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()},
                            json.loads(raw or b"null"), time.monotonic())
                with fake._lock:
                    fake.requests.append(seen)
                    step = fake.script.popleft() if fake.script else Step(400, {"error": "script exhausted"})
                time.sleep(step.delay)
                if step.drop:
                    self.close_connection = True
                    return
                body = step.body if isinstance(step.body, bytes) else json.dumps(step.body).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in step.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not step.trickle:
                        self.wfile.write(body)
                    for i in range(len(body) if step.trickle else 0):
                        if i == step.stall_after:
                            time.sleep(60)
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(step.trickle)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: that is what the test is about

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a handler still sleeping must not hold up close
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1/things"

    def __enter__(self) -> ScriptServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ScriptServer] = []

    def start(*steps: Step) -> ScriptServer:
        servers.append(ScriptServer(*steps).__enter__())
        return servers[-1]

    yield start
    for srv in servers:
        srv.__exit__()


def fail(status: int, message: str = "", **headers: str) -> Step:
    return Step(status, {"error": {"message": message or f"fake {status}"}},
                {k.replace("_", "-"): v for k, v in headers.items()})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- Retry-After


def headers(**values: str) -> email.message.Message:
    """Response headers as urllib gives them (case-insensitive)."""
    msg = email.message.Message()
    for name, value in values.items():
        msg[name.replace("_", "-")] = value
    return msg


def test_retry_after_in_seconds_milliseconds_and_as_an_http_date() -> None:
    assert retry_after(headers(Retry_After="7")) == 7.0
    assert retry_after(headers(retry_after=" 1.5 ")) == 1.5
    # retry-after-ms (OpenAI, Anthropic) is more precise, so it wins
    assert retry_after(headers(Retry_After="7", retry_after_ms="250")) == 0.25
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after(headers(Retry_After=date), now=now) == pytest.approx(30, abs=1)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert retry_after(headers(Retry_After=past), now=now) == 0.0


def test_retry_after_that_cannot_be_read_is_ignored() -> None:
    assert retry_after(None) is None
    assert retry_after(headers()) is None
    for nonsense in ("soon", "inf", "nan", ""):
        assert retry_after(headers(Retry_After=nonsense)) is None, nonsense
    assert retry_after(headers(Retry_After="-5")) == 0.0


def test_error_detail_finds_the_message_in_each_api_shape() -> None:
    assert error_detail(b'{"error": {"message": "bad key", "type": "x"}}') == "bad key"
    assert error_detail(b'{"error": {"code": 400, "status": "INVALID_ARGUMENT"}}') == "INVALID_ARGUMENT"
    assert error_detail(b'{"error": "model not found"}') == "model not found"
    assert error_detail(b'{"message": "Forbidden"}') == "Forbidden"
    assert error_detail(b"  <html>bad gateway</html>\n") == "<html>bad gateway</html>"
    assert len(error_detail(b"x" * 5000)) == 500


# --------------------------------------------------------------------------- secrets


def test_redact_masks_the_key_and_the_pieces_apis_echo() -> None:
    text = f"got {KEY}; Incorrect API key provided: {KEY[:8]}*****{KEY[-6:]}"
    for secret in (KEY, Secret(KEY)):
        out = redact(text, None, secret)
        assert KEY not in out and KEY[:8] not in out and KEY[-6:] not in out and KEY[-8:] not in out
        assert out.startswith("got ***;")
    # a short secret is masked whole, but its pieces would be everyday words
    assert redact("token abc and abcdef", "abcdef") == "token abc and ***"
    assert redact("nothing to hide", None, "", Secret("")) == "nothing to hide"


def test_a_secret_never_prints_itself() -> None:
    s = Secret(KEY)
    assert KEY not in repr(s) and KEY not in str(s) and KEY not in f"{s} {[s]!r}"
    assert s.reveal() == KEY and s == Secret(KEY) and s != Secret("other") and s != KEY
    assert len({s, Secret(KEY)}) == 1
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(s)


def test_api_key_precedence_literal_then_named_variable_then_default() -> None:
    env = {"MY_KEY": "from-my-key", "OPENAI_API_KEY": "from-default"}
    key, var = resolve_api_key("literal", "MY_KEY", "OPENAI_API_KEY", environ=env)
    assert key == Secret("literal") and var is None
    key, var = resolve_api_key(None, "MY_KEY", "OPENAI_API_KEY", environ=env)
    assert key == Secret("from-my-key") and var == "MY_KEY"
    key, var = resolve_api_key("", None, "OPENAI_API_KEY", environ=env)
    assert key == Secret("from-default") and var == "OPENAI_API_KEY"
    # a variable the config names but nobody set: no key, and never the default's key
    key, var = resolve_api_key(None, "UNSET_KEY", "OPENAI_API_KEY", environ=env)
    assert key is None and var == "UNSET_KEY"
    assert resolve_api_key(None, None, None, environ=env) == (None, None)


def test_api_key_is_read_from_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOULFRAME_TEST_KEY", KEY)
    key, var = resolve_api_key(None, "SOULFRAME_TEST_KEY")
    assert key is not None and key.reveal() == KEY and var == "SOULFRAME_TEST_KEY"


# --------------------------------------------------------------------------- post_json


def test_posts_json_and_returns_the_reply(serve: Any) -> None:
    srv = serve(Step(body={"answer": 42}))
    reply = post_json(srv.url, {"q": "life"}, headers={"Authorization": f"Bearer {KEY}"},
                      user_agent="soulframe-test")
    assert reply == {"answer": 42}
    sent = srv.requests[0]
    assert sent.path == "/v1/things" and sent.json == {"q": "life"}
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["user-agent"] == "soulframe-test"


def test_429_and_5xx_are_retried_then_succeed(serve: Any) -> None:
    srv = serve(fail(429), fail(503), fail(529), Step(body={"ok": 1}))
    assert post_json(srv.url, {}, retry=FAST) == {"ok": 1}
    assert len(srv.requests) == 4


def test_retries_run_out_with_a_message_that_counts_them(serve: Any) -> None:
    srv = serve(fail(503, "overloaded"), fail(503, "overloaded"), fail(503, "overloaded"))
    with pytest.raises(RequestError) as info:
        post_json(srv.url, {}, what="test API", retry=RetryPolicy(max_retries=2, backoff=0.01))
    assert str(info.value) == f"test API: HTTP 503 from {srv.url} after 3 attempts: overloaded"
    assert info.value.status == 503 and info.value.retryable and not info.value.timeout
    assert isinstance(info.value, SoulframeError)  # the CLI prints it without a traceback
    assert len(srv.requests) == 3


def test_a_client_error_is_not_retried_and_a_hint_is_added(serve: Any) -> None:
    srv = serve(fail(404, "no such route"), Step())
    with pytest.raises(RequestError) as info:
        post_json(srv.url, {}, retry=FAST, hints={404: "check base_url"})
    assert str(info.value).endswith(f"HTTP 404 from {srv.url}: no such route (check base_url)")
    assert info.value.status == 404 and not info.value.retryable
    assert len(srv.requests) == 1


def test_retry_after_is_honoured(serve: Any) -> None:
    srv = serve(fail(429, Retry_After="0.5"), fail(503, retry_after_ms="300"), Step())
    post_json(srv.url, {}, retry=FAST)
    first, second, third = (r.at for r in srv.requests)
    assert second - first >= 0.5
    assert third - second >= 0.3


def test_retry_after_as_an_http_date_is_honoured(serve: Any) -> None:
    srv = serve(fail(503, Retry_After=email.utils.formatdate(time.time() + 2, usegmt=True)), Step())
    post_json(srv.url, {}, retry=FAST)
    # the date has one-second resolution: somewhere between 1 and 2 seconds from the send
    assert srv.requests[1].at - srv.requests[0].at >= 0.9


def test_a_retry_after_longer_than_the_policy_waits_is_an_error_not_an_early_retry(serve: Any) -> None:
    srv = serve(fail(429, "slow down", Retry_After="3600"), Step())
    started = time.monotonic()
    with pytest.raises(RequestError) as info:
        post_json(srv.url, {}, what="test API", retry=RetryPolicy(max_delay=30))
    assert "the server asks to retry after 3600 s, longer than the 30 s soulframe waits" in str(info.value)
    assert "slow down" in str(info.value)
    assert info.value.status == 429 and info.value.retryable
    assert time.monotonic() - started < 1 and len(srv.requests) == 1


def test_the_deadline_covers_the_whole_call(serve: Any) -> None:
    # each reply takes 0.4 s and is a 503: three attempts would take 1.2 s, the call has 1
    srv = serve(*[Step(503, {"error": "busy"}, delay=0.4)] * 5)
    started = time.monotonic()
    with pytest.raises(RequestError, match="timed out after 1s") as info:
        post_json(srv.url, {}, timeout=1, total_timeout=1, retry=RetryPolicy(max_retries=5, backoff=0.05))
    assert info.value.timeout
    assert time.monotonic() - started < 1.5


def test_a_slow_reply_times_out_at_the_deadline(serve: Any) -> None:
    srv = serve(Step(delay=2))
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"timed out after 0\.3s waiting for http://127") as info:
        post_json(srv.url, {}, timeout=0.3, total_timeout=0.3)
    assert info.value.timeout and time.monotonic() - started < 1.2
    assert len(srv.requests) == 1


def test_a_reply_sent_slowly_times_out_at_the_deadline(serve: Any) -> None:
    # every byte comes within the socket's timeout, but the whole reply would take 30 s
    srv = serve(Step(body={"text": "x" * 290}, trickle=0.1))
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"timed out after 1s waiting for http://127") as info:
        post_json(srv.url, {}, timeout=1, total_timeout=1)
    assert info.value.timeout and time.monotonic() - started < 10
    assert len(srv.requests) == 1


def test_a_reply_that_stops_arriving_near_the_deadline_ends_at_the_deadline(serve: Any) -> None:
    # bytes for 1.6 s, then nothing: the read waiting for the next byte may only wait out what
    # is left of the 2 s, not a whole socket timeout more (that was 3.6 s)
    srv = serve(Step(body={"text": "x" * 290}, trickle=0.1, stall_after=16))
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"timed out after 2s") as info:
        post_json(srv.url, {}, timeout=2, total_timeout=2)
    assert info.value.timeout and time.monotonic() - started < 3


def test_a_slow_error_body_does_not_hold_the_call_either(serve: Any) -> None:
    srv = serve(Step(500, {"error": {"message": "x" * 290}}, trickle=0.1))
    started = time.monotonic()
    with pytest.raises(RequestError, match="HTTP 500"):
        post_json(srv.url, {}, timeout=1, total_timeout=1, retry=RetryPolicy(max_retries=0))
    assert time.monotonic() - started < 10


def test_a_reply_larger_than_the_limit_is_an_error(serve: Any) -> None:
    srv = serve(Step(body={"data": "x" * 5000}))
    with pytest.raises(RequestError, match="larger than 1,000 bytes"):
        post_json(srv.url, {}, what="test API", max_bytes=1000)


def test_a_retry_after_past_the_deadline_gives_up_at_once(serve: Any) -> None:
    srv = serve(fail(429, Retry_After="20"), Step())
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"the server asked to retry in 20\.0s") as info:
        post_json(srv.url, {}, timeout=2, total_timeout=2)
    assert info.value.timeout and time.monotonic() - started < 1
    assert len(srv.requests) == 1


def test_without_a_deadline_a_timed_out_attempt_is_retried(serve: Any) -> None:
    srv = serve(Step(delay=1.0), Step(body={"second": True}))
    assert post_json(srv.url, {}, timeout=0.3, retry=FAST) == {"second": True}
    assert len(srv.requests) == 2
    srv = serve(*[Step(delay=1.0)] * 2)
    with pytest.raises(RequestError, match=r"timed out after 0\.3s waiting for .* after 2 attempts"):
        post_json(srv.url, {}, timeout=0.3, retry=RetryPolicy(max_retries=1, backoff=0.01))


def test_a_dropped_connection_is_retried(serve: Any) -> None:
    srv = serve(Step(drop=True), Step(body={"ok": True}))
    assert post_json(srv.url, {}, retry=FAST) == {"ok": True}
    assert len(srv.requests) == 2
    srv = serve(Step(drop=True), Step(drop=True))
    with pytest.raises(RequestError, match="connection to .* failed: RemoteDisconnected after 2 attempts"):
        post_json(srv.url, {}, retry=RetryPolicy(max_retries=1, backoff=0.01))


def test_an_unreachable_server_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1/things"
    with pytest.raises(RequestError) as info:
        post_json(url, {}, what="test API", retry=RetryPolicy(max_retries=1, backoff=0.01))
    assert str(info.value).startswith(f"test API: cannot reach {url} (")
    assert str(info.value).endswith("after 2 attempts")
    assert info.value.status is None and info.value.retryable


def test_a_url_without_a_scheme_is_a_clear_error() -> None:
    with pytest.raises(RequestError, match="bad URL '127.0.0.1/v1'"):
        post_json("127.0.0.1/v1", {})


def test_a_reply_that_is_not_a_json_object_is_a_clear_error(serve: Any) -> None:
    srv = serve(Step(body=b"<html>gateway</html>"), Step(body=[1, 2]))
    with pytest.raises(RequestError, match="is not JSON: '<html>gateway</html>'"):
        post_json(srv.url, {})
    with pytest.raises(RequestError, match="is not a JSON object"):
        post_json(srv.url, {})


def test_a_rejected_key_says_where_it_came_from_and_never_shows_it(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # the API echoes the key, as real ones do; the URL carries it too, as some APIs want
    srv = serve(fail(503, f"busy for {KEY}"), fail(401, f"Incorrect API key provided: {KEY[:8]}***{KEY[-4:]}"))
    url = f"{srv.url}?key={KEY}"
    with pytest.raises(RequestError) as info:
        post_json(url, {}, what="test API", retry=FAST, secrets=(Secret(KEY),),
                  key_source="$TEST_API_KEY")
    message = str(info.value)
    assert "rejected the API key (HTTP 401)" in message
    assert message.endswith("(check the API key in $TEST_API_KEY)")
    assert "Incorrect API key provided" in message  # the API's own words are kept
    for piece in (KEY, KEY[:8], KEY[-6:]):
        assert piece not in message and piece not in caplog.text
    assert "HTTP 503" in caplog.text  # the retry was logged
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_each_plugin_raises_its_own_error_class(serve: Any) -> None:
    class MyError(Exception):
        def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                     timeout: bool = False) -> None:
            super().__init__(message)
            self.seen = (status, retryable, timeout)

    srv = serve(fail(400, "bad request"))
    with pytest.raises(MyError, match="HTTP 400") as info:
        post_json(srv.url, {}, error=MyError)
    assert info.value.seen == (400, False, False)


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(backoff=1.0, max_backoff=5.0, max_delay=60.0)
    for retry, full in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (10, 5.0)]:
        waits = [policy.backoff_s(retry) for _ in range(50)]
        assert all(full / 2 <= w <= full for w in waits)
        assert len(set(waits)) > 1  # spread out, not in lock step
    assert RetryPolicy(backoff=1.0, max_delay=2.0).backoff_s(5) <= 2.0


def test_importing_it_is_light() -> None:
    # plugins import Secret from here while the CLI starts: no urllib.request (and ssl) yet
    probe = ("import sys, soulframe._engine.http; "
             "print([m for m in ('urllib.request', 'ssl', 'http.client') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize(("url", "shown"), [
    ("http://user:KEY123@host/v1?key=KEY123", "http://user:***@host/v1?key=***"),
    ("https://TOKEN@github.com/me/agent.git", "https://***@github.com/me/agent.git"),
    ("https://h/v1?model=m&api_key=abc&sig=s1&X-Amz-Signature=zz", "https://h/v1?model=m&api_key=***&sig=***&X-Amz-Signature=***"),
    ("postgresql://soul:hunter2@db:5432/soul", "postgresql://soul:***@db:5432/soul"),
    ("http://localhost:11434/v1", "http://localhost:11434/v1"),
    ("not a url", "not a url"),
])
def test_redact_url_masks_credentials_and_keeps_the_rest(url: str, shown: str) -> None:
    from soulframe._engine.http import redact_url

    assert redact_url(url) == shown


def test_redact_urls_in_a_message_and_credential_shapes() -> None:
    from soulframe._engine.http import looks_secret, redact_urls

    message = ("cannot reach http://u:pw9@h:9/v1/embeddings?key=k9 (refused); "
               "server said: bad key sk-proj-abcdefghijklmnop, token ghp_abcdefghijklmnopqrstuvwx12")
    out = redact_urls(message)
    for secret in ("pw9", "k9 ", "abcdefghijklmnop", "ghp_abcdefghijklmnopqrstuvwx12"):
        assert secret not in out
    assert "cannot reach http://u:***@h:9/v1/embeddings?key=***" in out
    assert looks_secret("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz")
    assert not looks_secret("the sky is blue") and not looks_secret("http://localhost:8080/v1")


def test_ordinary_words_are_not_taken_for_credentials() -> None:
    from soulframe._engine.http import looks_secret, redact_urls

    text = "use the task-management-tools; disk-benchmarks; ask-questions-first; eyJ is a prefix"
    assert not looks_secret(text)
    assert redact_urls(text) == text
