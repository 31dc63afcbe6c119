"""Reading the ``[embedding]`` settings, the API key among them.

Providers receive the soulframe :class:`~soulframe.Config` (``config.get("a.b")``
with the defaults table behind it). A plain mapping works too — flat dotted keys
(``{"embedding.model": ...}``) or nested tables (``{"embedding": {"model": ...}}``) — which
keeps the providers usable from a script without a config file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from soulframe.kit import Secret, resolve_api_key

_MISSING = object()


def setting(config: Any, key: str, default: Any = None) -> Any:
    """``config[key]`` for a Config or a (flat or nested) mapping; ``default`` when unset.

    ``None`` counts as unset, as it does in the defaults table.
    """
    if config is None:
        return default
    if not isinstance(config, Mapping):
        value = config.get(key)  # a Config: its declared default applies
        return default if value is None else value
    if key in config:
        value = config[key]
        return default if value is None else value
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return default if node is None else node


def api_key(config: Any, default_env: str | None) -> tuple[Secret | None, str]:
    """The API key and where it came from (for messages; never the key itself).

    Order: ``embedding.api_key`` > the variable named by ``embedding.api_key_env`` >
    ``default_env`` (``OPENAI_API_KEY``, ``GEMINI_API_KEY``; none for openai-compatible,
    so an OpenAI key is never sent to some other server by accident).
    """
    named = setting(config, "embedding.api_key_env")
    key, env_name = resolve_api_key(setting(config, "embedding.api_key"), named, default_env)
    if env_name is None:
        return key, "embedding.api_key"
    return key, f"${env_name} (embedding.api_key_env)" if named else f"${env_name}"
