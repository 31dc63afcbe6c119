"""The embedding providers' side of HTTP: their error class and URL check. Sending is
:func:`soulframe.kit.post_json` (timeouts, retries honouring ``Retry-After``, messages that
never contain the API key); :class:`RetryPolicy` is re-exported from there."""

from __future__ import annotations

import urllib.parse

from soulframe.kit import EmbeddingError, RequestError, RetryPolicy, redact_endpoint

__all__ = ["EmbeddingHTTPError", "RetryPolicy", "check_url", "endpoint"]


class EmbeddingHTTPError(EmbeddingError, RequestError):
    """An HTTP request to an embedding API failed; ``status`` is None for network errors."""


def check_url(url: str, key: str) -> str:
    """``url`` if it is an http(s) URL with a host, else a :class:`ConfigError` naming ``key``."""
    from soulframe import ConfigError

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{key} = {redact_endpoint(url)!r} — expected an http:// or https:// URL")
    return url.rstrip("/")


def endpoint(base_url: str, path: str) -> str:
    """``path`` appended to the path of ``base_url``, keeping its query (a server that takes
    its key as ``?key=...`` still gets it, after the path rather than inside it)."""
    parts = urllib.parse.urlsplit(base_url)
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + path.lstrip("/")))
