"""POST JSON to a web API and read JSON back, for every plugin that calls one (chat models,
embeddings): a deadline, retries, and errors a user can act on that never carry an API key.

Retried: HTTP 408, 409, 429, 500, 502, 503, 504, 529 and a refused or dropped connection.
The wait is the server's ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` when
it sends one — an error when it asks for longer than the policy waits, since retrying sooner
only earns another refusal — else exponential backoff with jitter, never past the deadline.

Stdlib only and import-light: ``urllib.request`` (which loads ``ssl``) is imported by the
first request, so a plugin's settings can use :class:`Secret` at no cost. Nothing here logs a
header: the headers carry the API key.

Secrets in text: :func:`redact` masks known keys in a message, :func:`redact_url` masks the
credentials of one URL (``user:KEY@``, ``?key=KEY``), :func:`redact_urls` every URL and every
credential-shaped value (``sk-…``, ``AKIA…``, ``ghp_…``, ``xoxb-…``, JWTs, PEM keys) in a
message. A ``user:password@`` in a URL is sent as HTTP Basic auth.

Redirects: followed (up to 5, as a POST with its body) only within the origin of the URL
(scheme, host and port). A redirect to another origin is an error naming where it pointed:
the headers carry the API key, and urllib would resend them to any host a Location names.

One module, over the usual size, because it is one transport: the request, its retries
and the errors it raises share the deadline and the secrets they must not print.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Protocol

import attrs

from .model import SoulframeError
from .redaction import (  # noqa: F401  (re-exported: the URL helpers live with the secrets)
    MASK,
    is_secret_name,
    looks_secret,
    mask_secret_values,
    redact_endpoint,
    redact_url,
    redact_urls,
)

log = logging.getLogger("soulframe.http")

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
#: redirects: followed within the origin only (see :func:`same_origin`)
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
#: how much of an error body goes into an exception message
ERROR_BODY_CHARS = 500
#: the largest reply read: far above a chat reply or a batch of embeddings; more is a
#: misdirected download or a runaway server, which would fill the memory before the deadline
MAX_BODY_BYTES = 256 * 1024 * 1024
#: how much of an error body is read (its message is cut at ERROR_BODY_CHARS anyway)
MAX_ERROR_BODY_BYTES = 64 * 1024


class Secret:
    """A string that never prints itself: ``repr`` and ``str`` are ``***``, so an API key
    cannot leak through a log line, an exception message or an attrs ``repr``. Use
    :meth:`reveal` only at the one place it goes into a request header."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:  # pickling would be a way to print it
        raise TypeError("a Secret cannot be pickled")


def redact(text: str, *secrets: Secret | str | None) -> str:
    """``text`` with every secret masked as ``***`` — and the pieces of it APIs echo back
    ("Incorrect API key provided: sk-abc12*****wxyz"): its first 8 and last 6 characters."""
    for secret in secrets:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if not value:
            continue
        text = text.replace(value, "***")
        if len(value) >= 12:  # shorter, and the pieces would be common words
            text = text.replace(value[:8], "***").replace(value[-6:], "***")
    return redact_urls(text)


def resolve_api_key(
    value: object,
    env_name: object,
    default_env: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> tuple[Secret | None, str | None]:
    """The API key a config gives, by the precedence every plugin uses: the key itself
    (``api_key``), else the environment variable the config names (``api_key_env``), else
    the plugin's default variable (``OPENAI_API_KEY``...), else the key stored under that
    variable's name with ``soulframe keys set`` (:mod:`soulframe._engine.keys`). A named variable
    that is unset does not fall back to the default: a key meant for one place is never sent
    to another.

    Returns the key (None when there is none) and the variable that was read (None when the
    key was given literally, or there was no variable to read); :func:`key_source` says
    where a found key came from.
    """
    if value:
        return Secret(str(value)), None
    name = str(env_name) if env_name else default_env
    if not name:
        return None, None
    found = (os.environ if environ is None else environ).get(name)
    if not found:
        from .keys import stored_key

        found = stored_key(name)
    return (Secret(found) if found else None), name


def key_source(env_name: str, *, environ: Mapping[str, str] | None = None) -> str:
    """Where :func:`resolve_api_key` found a key for ``env_name``: the environment variable,
    or the keys file (for messages; never the key)."""
    if (os.environ if environ is None else environ).get(env_name):
        return f"environment variable {env_name}"
    return f"keys file ({env_name}, set with `soulframe keys set`)"


@attrs.frozen
class RetryPolicy:
    """How often and how long to retry."""

    #: retries after the first attempt; 0 sends the request once
    max_retries: int = 3
    #: the first backoff in seconds, doubled each retry, with jitter, capped at ``max_backoff``
    backoff: float = 0.5
    max_backoff: float = 20.0
    #: the longest wait, computed or asked for by ``Retry-After``; a server asking for
    #: longer gets an error instead of an early retry
    max_delay: float = 60.0

    def backoff_s(self, retry: int) -> float:
        """The wait before retry number ``retry`` (0 for the first) when the server did not
        say: jittered so many clients retrying at once spread out."""
        wait = min(self.max_backoff, self.max_delay, self.backoff * 2.0**retry)
        return float(wait * (0.5 + random.random() / 2))


DEFAULT_RETRY = RetryPolicy()


class HeaderLookup(Protocol):
    """Response headers: ``email.message.Message`` (case-insensitive) or a mapping."""

    def get(self, name: str, /) -> Any: ...


def retry_after(headers: HeaderLookup | None, *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, or ``Retry-After`` as
    seconds or an HTTP date), or None when it did not say or said something unreadable."""
    if headers is None:
        return None
    ms = _seconds(headers.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    import datetime as dt
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(str(value).strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322, whatever the local zone
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _seconds(value: object) -> float | None:
    if not value:
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def error_detail(body: bytes, limit: int = ERROR_BODY_CHARS) -> str:
    """The human part of an API error body: ``error.message`` (OpenAI, Anthropic, Gemini),
    ``error.status``, a string ``error`` or a top-level ``message``; else the body's text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:limit]
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and (err.get("message") or err.get("status")):
            return str(err.get("message") or err.get("status"))[:limit]
        if isinstance(err, str) and err:
            return err[:limit]
        if data.get("message"):
            return str(data["message"])[:limit]
    return text[:limit]


class ErrorFactory(Protocol):
    """Makes the exception a failed call raises, so each plugin raises its own class."""

    def __call__(
        self, message: str, *, status: int | None, retryable: bool, timeout: bool
    ) -> Exception: ...


class RequestError(SoulframeError):
    """A call to a web API failed (the default of :func:`post_json`'s ``error``).

    ``status`` is the HTTP status when there was one; ``retryable`` says whether the same
    request might succeed later; ``timeout`` that the time given ran out.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        timeout: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.timeout = timeout


def post_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    what: str = "web API",
    error: ErrorFactory = RequestError,
    timeout: float = 60.0,
    total_timeout: float | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    retry_statuses: Collection[int] = RETRY_STATUSES,
    secrets: Iterable[Secret | str | None] = (),
    key_source: str | None = None,
    hints: Mapping[int, str] | None = None,
    user_agent: str = "soulframe",
    sleep: Callable[[float], None] = time.sleep,
    max_bytes: int = MAX_BODY_BYTES,
) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``url`` and return the decoded JSON object.

    :param what: names the service in messages ("OpenAI embeddings", "anthropic model x").
    :param error: builds every exception raised (``ChatModelError``, ``EmbeddingHTTPError``).
    :param timeout: seconds one attempt may take.
    :param total_timeout: seconds the whole call may take, retries and waits included; a
        wait that would end past it is a timeout error at once, not a sleep.
    :param secrets: scrubbed from every message (see :func:`redact`).
    :param key_source: where the key came from ("$OPENAI_API_KEY"), for a 401/403 message.
    :param hints: advice added to the message for a status (``{404: "check base_url"}``).
    :param max_bytes: the largest reply body accepted; a larger one is an error.
    """
    import http.client
    import urllib.error
    import urllib.request

    url, headers = _userinfo_to_header(url, headers)
    masked = (*secrets, *_credentials_in(url), *_header_secrets(headers))
    hints = hints or {}

    def fail(
        message: str, *, status: int | None = None, retryable: bool = False, timeout: bool = False
    ) -> Exception:
        # the endpoint as configured may carry a credential under any query name
        message = message.replace(url, redact_endpoint(url))
        return error(redact(message, *masked), status=status, retryable=retryable, timeout=timeout)

    deadline = None if total_timeout is None else time.monotonic() + total_timeout
    body = json.dumps(dict(payload)).encode("utf-8")
    sent_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": user_agent,
        **(headers or {}),
    }
    try:
        request = urllib.request.Request(url, data=body, headers=sent_headers, method="POST")
    except ValueError as exc:  # "unknown url type"
        raise fail(f"{what}: bad URL {url!r}: {exc}") from None
    # urllib's own redirect handling would resend the headers (the API key) to wherever a
    # Location points; redirects are followed below, within the origin only
    opener = urllib.request.build_opener(_no_redirects())
    shown_url = redact_endpoint(redact(url, *masked))
    hops = 0
    attempt = 0
    while True:
        per_try = timeout
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise fail(f"{what}: timed out after {total_timeout:g}s", timeout=True)
            per_try = min(timeout, remaining)
        tries = f" after {attempt + 1} attempts" if attempt else ""
        wait: float | None = None
        timed_out = False
        until = time.monotonic() + per_try
        try:
            with opener.open(request, timeout=per_try) as response:
                raw = _read_body(response, until, max_bytes)
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            if status in REDIRECT_STATUSES:
                target = _redirect_target(url, exc.headers)
                if target is None or not same_origin(url, target):
                    raise fail(_redirect_refusal(what, url, status, target), status=status) from None
                hops += 1
                if hops > MAX_REDIRECTS:
                    raise fail(f"{what}: more than {MAX_REDIRECTS} redirects from {url}", status=status) from None
                # same origin: the request goes on there, as a POST with its body (a JSON API
                # moved within its own server), and does not count as a retry
                url = target
                request = urllib.request.Request(url, data=body, headers=sent_headers, method="POST")
                shown_url = redact_endpoint(redact(url, *masked))
                continue
            try:
                detail = redact(
                    error_detail(_read_body(exc, until, MAX_ERROR_BODY_BYTES)), *masked
                )
            except (OSError, http.client.HTTPException):
                detail = ""
            retryable = status in retry_statuses
            if not retryable or attempt >= retry.max_retries:
                message = _status_message(
                    what, url, status, detail, tries, key_source, hints.get(status)
                )
                raise fail(message, status=status, retryable=retryable) from None
            wait = retry_after(exc.headers)
            if wait is not None and wait > retry.max_delay:
                # retrying sooner than asked only earns another refusal
                raise fail(
                    f"{what}: HTTP {status} from {url}; the server asks to retry after "
                    f"{wait:.0f} s, longer than the {retry.max_delay:.0f} s soulframe waits"
                    + (f": {detail}" if detail else ""),
                    status=status,
                    retryable=True,
                ) from None
            log.info(
                "%s: HTTP %s from %s, retrying (%d/%d)",
                what, status, shown_url, attempt + 1, retry.max_retries,
            )
        except TimeoutError:  # while reading the reply
            timed_out = True
        except urllib.error.URLError as exc:  # while connecting
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                timed_out = True
            # a refused or reset connection may come back; an unknown host or a bad
            # certificate will not
            elif attempt >= retry.max_retries or not isinstance(reason, ConnectionError):
                raise fail(
                    f"{what}: cannot reach {url} ({reason}){tries}",
                    retryable=isinstance(reason, ConnectionError),
                ) from None
            else:
                log.info("%s: cannot reach %s (%s), retrying", what, shown_url, reason)
        except (ConnectionError, http.client.HTTPException) as exc:  # dropped mid-exchange
            if attempt >= retry.max_retries:
                raise fail(
                    f"{what}: connection to {url} failed: {type(exc).__name__}{tries}",
                    retryable=True,
                ) from None
            log.info(
                "%s: connection to %s failed (%s), retrying", what, shown_url, type(exc).__name__
            )
        else:
            if len(raw) > max_bytes:
                raise fail(
                    f"{what}: the reply from {url} is larger than {max_bytes:,} bytes",
                    status=status,
                )
            return _json_object(raw, url, what, status, fail, masked)
        if timed_out:
            if deadline is not None and per_try < timeout:
                # the attempt had all the time left: the caller's budget is used
                raise fail(
                    f"{what}: timed out after {total_timeout:g}s waiting for {url}", timeout=True
                ) from None
            if attempt >= retry.max_retries:
                raise fail(
                    f"{what}: timed out after {timeout:g}s waiting for {url}{tries}", timeout=True
                ) from None
            log.info("%s: %s timed out after %gs, retrying", what, shown_url, timeout)
        attempt += 1
        why = "the server asked to retry in"
        if wait is None:
            wait, why = retry.backoff_s(attempt - 1), "the next retry was due in"
        if deadline is not None and time.monotonic() + wait >= deadline:
            raise fail(f"{what}: timed out after {total_timeout:g}s ({why} {wait:.1f}s)", timeout=True)
        sleep(wait)


def _read_body(response: Any, until: float, limit: int) -> bytes:
    """The body of ``response``, up to ``limit`` bytes and one more (so the caller sees it is
    too large), a chunk at a time. The socket's timeout bounds each read alone, so a server
    sending a byte every tenth of a second would hold the call far past its budget: the clock
    is checked between chunks, and running out raises :class:`TimeoutError` as a stalled read
    does. Each read may also wait only for what is left of the time: a server that sends part
    of a reply and then hangs would otherwise hold a whole socket timeout past the deadline."""
    sock = _socket_of(response)
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the reply was still arriving when the time ran out")
        if sock is not None:
            sock.settimeout(left)
        chunk: bytes = response.read1(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if time.monotonic() >= until:
            raise TimeoutError("the reply was still arriving when the time ran out")
    return b"".join(chunks)


def _socket_of(response: Any) -> Any:
    """The socket a urllib reply (or an ``HTTPError`` wrapping one) reads from, or None when
    it is not a plain socket connection (then the read's own timeout is the bound)."""
    import http.client
    import io
    import socket
    import urllib.response

    if isinstance(response, urllib.response.addinfourl):  # an HTTPError: the reply is inside
        response = response.fp
    if not isinstance(response, http.client.HTTPResponse) or not isinstance(response.fp, io.BufferedReader):
        return None
    raw = response.fp.raw
    # socket.makefile's reader; its socket (plain or TLS) is where the timeout is set
    return raw._sock if isinstance(raw, socket.SocketIO) else None  # type: ignore[attr-defined]


def _no_redirects() -> Any:
    """A redirect handler that follows nothing: every redirect comes back to
    :func:`post_json` as an ``HTTPError`` (urllib is imported by the first request only)."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return NoRedirects()


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (the default port spelled or not)."""
    import urllib.parse

    try:
        pa, pb = urllib.parse.urlsplit(a), urllib.parse.urlsplit(b)
        ports = [p.port or {"http": 80, "https": 443}.get(p.scheme.lower()) for p in (pa, pb)]
    except ValueError:
        return False
    return (pa.scheme.lower() == pb.scheme.lower() and (pa.hostname or "") == (pb.hostname or "")
            and ports[0] == ports[1])


def _redirect_target(url: str, headers: HeaderLookup | None) -> str | None:
    import urllib.parse

    location = headers.get("location") if headers is not None else None
    if not location:
        return None
    try:
        return urllib.parse.urljoin(url, str(location).strip())
    except ValueError:
        return None


def _redirect_refusal(what: str, url: str, status: int, target: str | None) -> str:
    if target is None:
        return f"{what}: HTTP {status} from {url}: a redirect without a usable Location"
    return (
        f"{what}: {url} redirected (HTTP {status}) to {redact_endpoint(target)}, another origin "
        "(scheme, host or port); soulframe follows no redirect that would carry the API key or "
        "the request to another server. If that address is the right one, set base_url to it"
    )


def _userinfo_to_header(
    url: str, headers: Mapping[str, str] | None
) -> tuple[str, Mapping[str, str] | None]:
    """urllib does not send ``user:password@`` from a URL (it takes it for part of the host
    name): send it as HTTP Basic auth instead, unless the caller authenticates already."""
    import base64
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url, headers
    if "@" not in parts.netloc:
        return url, headers
    userinfo, _, host = parts.netloc.rpartition("@")
    bare = urllib.parse.urlunsplit(parts._replace(netloc=host))
    given = {k.lower() for k in (headers or {})}
    if "authorization" in given:
        return bare, headers
    user, _, password = (urllib.parse.unquote(p) for p in userinfo.partition(":"))
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return bare, {**(headers or {}), "Authorization": f"Basic {token}"}


def _credentials_in(url: str) -> list[str]:
    """The values :func:`redact_url` would mask, so messages quoting them in other forms
    (a server echoing the key) are scrubbed too."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    # every query value of the endpoint: a credential can hide under any name (?c=, ?x-sess=)
    found = [v for _k, v in urllib.parse.parse_qsl(parts.query)]
    if parts.password:
        found.append(parts.password)
    # a very short one would mask pieces of ordinary words ("v1" in every path); the URL
    # itself is masked by redact_url whatever its length
    return [v for v in found if len(v) >= 6]


def _header_secrets(headers: Mapping[str, str] | None) -> list[str]:
    out = []
    for name, value in (headers or {}).items():
        if name.lower() in ("authorization", "proxy-authorization") or is_secret_name(name):
            out.append(value.split(" ", 1)[-1])
    return out


def _json_object(
    raw: bytes,
    url: str,
    what: str,
    status: int,
    fail: Callable[..., Exception],
    secrets: tuple[Secret | str | None, ...],
) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        snippet = redact(raw.decode("utf-8", "replace")[:200], *secrets)
        raise fail(f"{what}: the reply from {url} is not JSON: {snippet!r}", status=status) from None
    if not isinstance(data, dict):
        raise fail(f"{what}: the reply from {url} is not a JSON object", status=status)
    return data


def _status_message(
    what: str,
    url: str,
    status: int,
    detail: str,
    tries: str,
    key_source: str | None,
    hint: str | None,
) -> str:
    said = f": {detail}" if detail else ""
    if status in (401, 403):
        where = f" in {key_source}" if key_source else ""
        return f"{what}: {url} rejected the API key (HTTP {status}){tries}{said} (check the API key{where})"
    return f"{what}: HTTP {status} from {url}{tries}{said}" + (f" ({hint})" if hint else "")
