"""How the chat clients call their API: :func:`soulframe.kit.post_json` with the model's
settings — its timeout as the budget of the whole call (retries and waits included), its
retries, its key scrubbed from every message — raising :class:`ChatModelError`; and what
both clients read alike from a reply."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from soulframe.kit import RetryPolicy, post_json

from .errors import ChatModelError
from .settings import ModelSettings


def post(
    settings: ModelSettings,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    what: str,
    timeout: float | None = None,
) -> dict[str, Any]:
    """POST ``body`` to ``url``; ``timeout`` overrides ``[model] timeout_s`` for this call."""
    budget = settings.timeout_s if timeout is None else timeout
    return post_json(
        url,
        body,
        headers=headers,
        what=what,
        error=ChatModelError,
        timeout=budget,
        total_timeout=budget,
        retry=RetryPolicy(max_retries=settings.max_retries),
        secrets=(settings.api_key,),
        key_source=settings.key_source,
        hints={404: "check [model] base_url and [model] name"},
    )


def usage_counts(usage: object) -> dict[str, int]:
    """The token counts of a reply's ``usage``. They only feed the log of calls, so a malformed
    one is dropped rather than failing an answer that is otherwise fine."""
    if not isinstance(usage, Mapping):
        return {}
    return {k: int(v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
