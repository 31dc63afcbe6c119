"""Which token estimator a prompt build counts with: the one ``prompt.tokenizer`` names, from
the registry (``register_token_estimators``; the default plugin soulframe_truncation offers
``estimate`` and ``tiktoken``).

The core keeps one estimator of its own, :func:`rough_estimate`, for one case: the default
name ``estimate`` when no plugin registers it (a host that replaced soulframe_truncation with
its own truncation policy and no estimators). Every prompt build counts tokens, for the
budget and ``prompt --explain``, so without it such a host could not build a prompt at all
for a setting it never made. It is deliberately crude and errs high on every script other
than English; the plugin's ``estimate`` is fitted to cl100k.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model import TOKEN_ESTIMATORS

if TYPE_CHECKING:
    from ..model import AgentLike

Estimator = Callable[[str], int]

#: tokens per character outside ASCII: the heaviest script's rate in cl100k (hangul), so
#: a budget counted with the fallback is not overrun in any language
_NON_ASCII_RATE = 1.4


def rough_estimate(text: str) -> int:
    """A token count no plugin is needed for: four ASCII characters a token, 1.4 tokens
    for each other character."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    return max(1, math.ceil(ascii_chars / 4 + _NON_ASCII_RATE * (len(text) - ascii_chars)))


_cache: weakref.WeakKeyDictionary[Any, tuple[str, Estimator]] = weakref.WeakKeyDictionary()


def get_estimator(agent: AgentLike) -> Estimator:
    """The token estimator ``prompt.tokenizer`` selects for ``agent`` (built once per agent).

    Falls back to :func:`rough_estimate` when the configured name is ``"estimate"`` and no
    plugin registers it (see the module's docstring for why the core keeps one).
    """
    name = str(agent.config.get("prompt.tokenizer") or "estimate")
    cached = _cache.get(agent)
    if cached is not None and cached[0] == name:
        return cached[1]
    registry = agent.registry(TOKEN_ESTIMATORS)
    if name not in registry and name == "estimate":
        fn: Estimator = rough_estimate
    else:
        from ..plugins import build

        fn = build(agent, TOKEN_ESTIMATORS, agent.select(TOKEN_ESTIMATORS, name))
    try:
        _cache[agent] = (name, fn)
    except TypeError:  # an agent-like object that cannot be weakly referenced
        pass
    return fn
