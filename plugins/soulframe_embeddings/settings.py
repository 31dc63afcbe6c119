"""Reading the ``[embedding]`` settings, and keeping API keys out of every printout.

Providers receive the soulframe :class:`~soulframe.config.Config` (``config.get("a.b")``
with the defaults table behind it). A plain mapping works too — flat dotted keys
(``{"embedding.model": ...}``) or nested tables (``{"embedding": {"model": ...}}``) — which
keeps the providers usable from a script without a config file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

_MISSING = object()


def setting(config: Any, key: str, default: Any = None) -> Any:
    """``config[key]`` for a Config or a (flat or nested) mapping; ``default`` when unset.

    ``None`` counts as unset, as it does in the defaults table.
    """
    if config is None:
        return default
    if not isinstance(config, Mapping):
        value = config.get(key, default)
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


class Secret:
    """An API key that never prints itself: ``repr``/``str`` are ``***``.

    Only :meth:`reveal` gives the value, at the single place it goes into a request header.
    """

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

    def __reduce__(self) -> Any:  # pickling is a way to print it
        raise TypeError("a Secret cannot be pickled")


def api_key(config: Any, default_env: str | None) -> tuple[Secret | None, str]:
    """The API key and where it came from (for messages; never the key itself).

    Order: ``embedding.api_key`` > the variable named by ``embedding.api_key_env`` >
    ``default_env`` (``OPENAI_API_KEY``, ``GEMINI_API_KEY``; none for openai-compatible,
    so an OpenAI key is never sent to some other server by accident).
    """
    value = setting(config, "embedding.api_key")
    if value:
        return Secret(str(value)), "embedding.api_key"
    env_name = setting(config, "embedding.api_key_env")
    if env_name:
        found = os.environ.get(str(env_name))
        return (Secret(found) if found else None), f"${env_name} (embedding.api_key_env)"
    if default_env:
        found = os.environ.get(default_env)
        return (Secret(found) if found else None), f"${default_env}"
    return None, "embedding.api_key"
