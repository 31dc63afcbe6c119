"""POST JSON with the standard library: timeouts, retries with backoff on 429/5xx (honouring
``Retry-After``), and errors a user can act on that never contain the API key."""

from __future__ import annotations

import email.utils
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
from soulframe.embedding import EmbeddingError

from .settings import Secret

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class EmbeddingHTTPError(EmbeddingError):
    """An HTTP request to an embedding API failed; ``status`` is None for network errors."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@attrs.frozen
class RetryPolicy:
    max_retries: int = 4
    #: first backoff in seconds, doubled each retry, with jitter, capped at ``max_delay``
    backoff: float = 0.5
    #: the longest wait, computed or asked for by ``Retry-After``; a server asking for
    #: longer gets an error instead of an early retry
    max_delay: float = 30.0


def check_url(url: str, key: str) -> str:
    """``url`` if it is an http(s) URL with a host, else a :class:`ConfigError` naming ``key``."""
    from soulframe.model import ConfigError

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{key} = {url!r} — expected an http:// or https:// URL")
    return url.rstrip("/")


def redact(text: str, secrets: Iterable[Secret | None]) -> str:
    """``text`` with every secret (and any long-enough piece of it an API echoes) masked."""
    for s in secrets:
        if s is None:
            continue
        value = s.reveal()
        if value:
            text = text.replace(value, "***")
            # APIs echo a key partly ("Incorrect API key provided: sk-abc*****wxyz")
            if len(value) >= 12:
                text = text.replace(value[:8], "***").replace(value[-6:], "***")
    return text


def _retry_after(headers: Mapping[str, str] | Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_detail(body: bytes) -> str:
    """The API's own error message, if the body is JSON in the usual shapes."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300]
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err.get("status") or err)[:300]
    if isinstance(err, str):
        return err[:300]
    if isinstance(data, dict) and "message" in data:
        return str(data["message"])[:300]
    return text[:300]


def post_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    secrets: Iterable[Secret | None] = (),
    what: str,
    key_hint: str = "",
    timeout: float = 60.0,
    retry: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON reply.

    :param what: names the service in messages ("OpenAI embeddings").
    :param key_hint: where the key came from, for the 401 message ("$OPENAI_API_KEY").
    :raises EmbeddingHTTPError: after the retries are used up, at once for other 4xx.
    """
    secrets = tuple(secrets)
    body = json.dumps(payload).encode("utf-8")
    attempt = 0
    while True:
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "User-Agent": "soulframe-embeddings", **headers},
        )
        delay: float | None
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                raw = resp.read()
            try:
                return json.loads(raw)
            except ValueError:
                raise EmbeddingHTTPError(
                    redact(f"{what}: the reply from {url} is not JSON: {raw[:200]!r}", secrets), 200
                ) from None
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                detail = _error_detail(exc.read())
            except OSError:
                detail = ""
            detail = redact(detail, secrets)
            if status in RETRY_STATUSES and attempt < retry.max_retries:
                delay = _retry_after(exc.headers)
                if delay is not None and delay > retry.max_delay:
                    # retrying sooner than asked only earns another refusal
                    raise EmbeddingHTTPError(
                        f"{what}: HTTP {status} from {url}; the server asks to retry after "
                        f"{delay:.0f} s, longer than the {retry.max_delay:.0f} s soulframe waits"
                        + (f": {detail}" if detail else ""),
                        status,
                    ) from None
            elif status in (401, 403):
                raise EmbeddingHTTPError(
                    f"{what}: {url} rejected the API key (HTTP {status})"
                    + (f" from {key_hint}" if key_hint else "")
                    + (f": {detail}" if detail else ""),
                    status,
                ) from None
            elif status == 404:
                raise EmbeddingHTTPError(
                    f"{what}: {url} answered 404 Not Found — check embedding.base_url and "
                    f"embedding.model" + (f": {detail}" if detail else ""),
                    status,
                ) from None
            else:
                retried = f" after {attempt + 1} attempts" if attempt else ""
                raise EmbeddingHTTPError(
                    f"{what}: HTTP {status} from {url}{retried}" + (f": {detail}" if detail else ""),
                    status,
                ) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            if attempt >= retry.max_retries:
                raise EmbeddingHTTPError(
                    redact(f"{what}: cannot reach {url} ({reason}) after {attempt + 1} attempts", secrets)
                ) from None
            delay = None
        except ValueError as exc:  # urllib: "unknown url type"
            raise EmbeddingHTTPError(redact(f"{what}: bad URL {url!r}: {exc}", secrets)) from None
        if delay is None:
            delay = retry.backoff * (2**attempt) * (0.5 + random.random())
        sleep(min(delay, retry.max_delay))
        attempt += 1
