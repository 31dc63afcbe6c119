"""The errors the chat clients raise: always a :class:`~soulframe.model.SoulframeError`,
so the CLI prints the message without a traceback, and never with a secret in it."""

from __future__ import annotations

from soulframe.http import RequestError


class ChatModelError(RequestError):
    """A chat-model call failed: bad configuration, HTTP error, timeout or a malformed reply.

    ``status`` is the HTTP status when there was one; ``retryable`` tells a caller whether the
    same request might succeed later (429/5xx, connection reset); ``timeout`` that the time
    given ran out. Messages never contain an API key: everything that came from the server
    is passed through :func:`soulframe.http.redact` first.
    """


class ChatConfigError(ChatModelError):
    """The ``[model]`` configuration is incomplete (no provider, no key, no base URL)."""
