"""POST a JSON body and read a JSON reply, with timeouts and retry (stdlib only).

Retried: HTTP 408, 409, 429, 500, 502, 503, 504, 529 and a dropped connection. The wait is
the server's ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` when it sends
one, else exponential backoff with jitter; never past the caller's deadline. A timeout is not
retried: it has already used the time the caller gave.

Nothing here logs a header: the headers carry the API key.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .errors import ChatModelError, redact

log = logging.getLogger("soulframe.chat")

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
#: the longest a server's Retry-After is honoured; past it we give up rather than hang
MAX_RETRY_AFTER_S = 60.0
#: how much of an error body goes into an exception message
ERROR_BODY_CHARS = 500


@attrs.frozen
class RetryPolicy:
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait, or None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
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
    """The human part of an API error body (OpenAI and Anthropic both use error.message)."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:ERROR_BODY_CHARS]
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:ERROR_BODY_CHARS]
        if isinstance(err, str):
            return err[:ERROR_BODY_CHARS]
        if data.get("message"):
            return str(data["message"])[:ERROR_BODY_CHARS]
    return text.strip()[:ERROR_BODY_CHARS]


def post_json(
    url: str,
    payload: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    timeout: float,
    retry: RetryPolicy = RetryPolicy(),
    secrets: tuple[str | None, ...] = (),
    what: str = "chat model",
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``url`` and return the decoded JSON object.

    ``timeout`` is the whole budget in seconds, retries and waits included. ``secrets`` are
    scrubbed from every error message. Raises :class:`ChatModelError`.
    """
    deadline = time.monotonic() + timeout
    body = json.dumps(payload).encode("utf-8")
    all_headers = {"content-type": "application/json", "accept": "application/json", **headers}
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ChatModelError(f"{what}: timed out after {timeout:g}s", timeout=True)
        request = urllib.request.Request(url, data=body, headers=all_headers, method="POST")
        wait: float | None = None
        try:
            with urllib.request.urlopen(request, timeout=remaining) as response:
                raw = response.read()
            try:
                data = json.loads(raw.decode("utf-8"))
            except ValueError:
                raise ChatModelError(
                    f"{what}: the reply from {url} is not JSON: "
                    f"{redact(raw.decode('utf-8', 'replace')[:200], *secrets)!r}"
                ) from None
            if not isinstance(data, dict):
                raise ChatModelError(f"{what}: the reply from {url} is not a JSON object")
            return data
        except urllib.error.HTTPError as exc:
            status = exc.code
            detail = redact(_error_detail(exc.read() or b""), *secrets)
            retryable = status in RETRY_STATUSES
            if not retryable or attempt >= retry.max_retries:
                hint = ""
                if status in (401, 403):
                    hint = " (check the API key)"
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ChatModelError(
                    f"{what}: HTTP {status} from {url}{tries}: {detail}{hint}",
                    status=status,
                    retryable=retryable,
                ) from None
            wait = _retry_after(exc.headers)
            log.info(
                "%s: HTTP %s from %s, retrying (%d/%d)",
                what,
                status,
                url,
                attempt + 1,
                retry.max_retries,
            )
        except TimeoutError:
            raise ChatModelError(
                f"{what}: timed out after {timeout:g}s waiting for {url}", timeout=True
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise ChatModelError(
                    f"{what}: timed out after {timeout:g}s waiting for {url}", timeout=True
                ) from None
            if attempt >= retry.max_retries or not isinstance(reason, ConnectionError):
                raise ChatModelError(
                    f"{what}: cannot reach {url}: {redact(str(reason), *secrets)}", retryable=True
                ) from None
            log.info("%s: connection to %s failed (%s), retrying", what, url, type(reason).__name__)
        except (ConnectionError, http.client.HTTPException) as exc:
            if attempt >= retry.max_retries:
                raise ChatModelError(
                    f"{what}: connection to {url} failed: {type(exc).__name__}", retryable=True
                ) from None
            log.info("%s: connection to %s failed (%s), retrying", what, url, type(exc).__name__)
        attempt += 1
        if wait is None:
            wait = min(retry.backoff_max_s, retry.backoff_base_s * (2 ** (attempt - 1)))
            wait *= 0.5 + random.random() / 2  # jitter: many clients retrying at once spread out
        elif wait > MAX_RETRY_AFTER_S:
            raise ChatModelError(
                f"{what}: {url} asked us to retry after {wait:.0f}s, longer than {MAX_RETRY_AFTER_S:.0f}s",
                retryable=True,
            )
        if time.monotonic() + wait >= deadline:
            raise ChatModelError(
                f"{what}: timed out after {timeout:g}s (the server asked to retry in {wait:.1f}s)",
                timeout=True,
            )
        sleep(wait)
