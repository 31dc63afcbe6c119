"""The errors the chat clients raise: always a :class:`~soulframe.model.SoulframeError`,
so the CLI prints the message without a traceback, and never with a secret in it."""

from __future__ import annotations

from soulframe.model import SoulframeError


class ChatModelError(SoulframeError):
    """A chat-model call failed: bad configuration, HTTP error, timeout or a malformed reply.

    ``status`` is the HTTP status when there was one; ``retryable`` tells a caller whether the
    same request might succeed later (429/5xx, connection reset). Messages never contain an
    API key: everything that came from the server is passed through :func:`redact` first.
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


class ChatConfigError(ChatModelError):
    """The ``[model]`` configuration is incomplete (no provider, no key, no base URL)."""


def redact(text: str, *secrets: str | None) -> str:
    """Replace every occurrence of each secret (and its tail, which APIs like to echo back
    as ``sk-...abcd``) with ``***``."""
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, "***")
        # servers echo a key partially ("Incorrect API key provided: sk-abc...wxyz"): the last
        # 8 characters identify a key, so they go too
        if len(secret) >= 16:
            text = text.replace(secret[-8:], "***")
    return text
