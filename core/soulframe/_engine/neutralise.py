"""Text from outside soulframe (workspace files, daily logs, memory excerpts, skill
descriptions, extra prompts, session fields a host passes in) must not be able to pose as
soulframe's own structure in a prompt. Two functions, used wherever such text enters:

* :func:`neutralise` for a block of text placed inside one of soulframe's wrapper tags: every
  tag soulframe wraps text in (opening or closing, in any case and spacing:
  ``</context_file >``, ``</context_file\\n>``, ``</CONTEXT_FILE>``, a fake
  ``<system_context name="DELEGATION.md">``) is escaped so it can no longer open or close a
  block, the prompt-cache boundary marker is replaced, so a prompt holds exactly one, and
  control characters (NUL, escape, bell; not tab or line breaks) are dropped;
* :func:`strip_invisible` (part of :func:`neutralise`) drops the characters a reader cannot
  see but a model reads: zero-width and other format characters (soft hyphen, bidi
  controls, byte-order marks), Unicode tag characters (U+E0000–E007F, which spell ASCII
  invisibly), variation selectors and blank fillers;
* :func:`fold` gives the form the write-time guard and the secret patterns scan:
  compatibility forms folded (full-width, mathematical and circled letters, ligatures: NFKD),
  invisible characters and combining marks dropped, tag characters read as the ASCII they
  spell, look-alike Cyrillic, Greek and small-capital letters folded to Latin;
* :func:`one_line` for a short field quoted on one line (a channel name, a user id, a
  sender's name, a group title): control and format characters (newlines, bidi overrides),
  tags and Markdown markup go, whitespace collapses, the length is capped (never inside a
  character as a reader sees one: a flag, an emoji sequence, a letter and its accents).

Import-light: stdlib only (and the engine's own grapheme and control-character rules).
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: every tag soulframe wraps injected text in (prompt sections, the skills block, boot and
#: summon messages); a look-alike inside injected text is escaped
WRAPPER_TAGS: tuple[str, ...] = (
    "context_file", "system_context", "internal_config", "extra_context", "available_skills",
    "skill", "boot_file", "file",
)

#: the default marker between the cached prefix and the dynamic suffix (``prompt.cache_boundary``)
DEFAULT_BOUNDARY = "<!-- SOULFRAME_CACHE_BOUNDARY -->"
#: what a boundary marker found inside injected text becomes
BOUNDARY_STAND_IN = "[cache boundary marker removed]"

# ``<`` + optional ``/`` + a wrapper tag name, whitespace (newlines included) anywhere it
# could hide. Whatever follows does not matter: the tag's start is what is escaped, so an
# attribute holding ``<`` or ``>``, or a tag left open, cannot keep it a tag
_TAG = re.compile(
    r"<\s*(/?)\s*(" + "|".join(WRAPPER_TAGS) + r")\b",
    re.IGNORECASE,
)
# the default marker in any case and spacing, as an HTML comment
_DEFAULT_MARKER = re.compile(r"<!--\s*SOULFRAME_CACHE_BOUNDARY\s*-->", re.IGNORECASE)


def _escape_tag(m: re.Match[str]) -> str:
    slash, name = m.groups()
    # "<\/context_file>" (the form soulframe has always used for a closing tag) and
    # "<\context_file ...>": readable, and no longer a tag
    return f"<\\{slash}{name}" if slash else f"<\\{name}"


# Cached by content: every prompt build neutralises the same unchanged context files, and a
# warm build must cost a dictionary lookup, not a scan of every character (a pure function).
@functools.lru_cache(maxsize=1024)
def neutralise(text: str, boundary: str | None = DEFAULT_BOUNDARY) -> str:
    """``text`` made safe to place inside a soulframe wrapper tag (see the module doc).

    :param boundary: the configured cache-boundary marker (``prompt.cache_boundary``); the
        default marker is replaced as well, in any case and spacing.
    """
    if not text:
        return text
    from .memory.textclean import strip_controls

    # NUL, escape, bell...: never meant in text a model reads (a NUL makes some APIs and
    # databases refuse the whole prompt), and a host's extra prompt is not read from a file,
    # whose reader drops them
    text = strip_controls(strip_invisible(text))
    return _TAG.sub(_escape_tag, without_boundary(text, boundary))


#: blank letters that render as nothing (Hangul fillers, the braille blank)
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_ZWJ = "\u200d"


def _invisible(ch: str) -> bool:
    if ch in _BLANKS:
        return True
    code = ord(ch)
    if 0xE0000 <= code <= 0xE007F or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True  # tag characters, variation selectors
    return unicodedata.category(ch) == "Cf"


def strip_invisible(text: str) -> str:
    """``text`` without invisible characters (see the module doc). A zero-width joiner between
    two symbols stays: it joins emoji (👩‍💻), and hides nothing there. So does a zero-width
    non-joiner or joiner between two letters of a script that spells with them (Persian
    می‌خواهم, Hindi क्‍ष): dropped, the word is spelt otherwise; one between two letters
    carries no hidden text."""
    if text.isascii():
        return text
    out = []
    for i, ch in enumerate(text):
        if _invisible(ch):
            inside = 0 < i < len(text) - 1
            if ch == _ZWJ and inside and _symbol(text[i - 1]) and _symbol(text[i + 1]):
                out.append(ch)
            elif ch in _JOINERS and inside and _joins(text[i - 1]) and _joins(text[i + 1]):
                out.append(ch)
            continue
        out.append(ch)
    return "".join(out)


#: zero-width non-joiner and joiner
_JOINERS = frozenset("\u200c\u200d")


def _joins(ch: str) -> bool:
    """A letter or mark of a script whose spelling uses the (non-)joiner: Arabic (Persian,
    Urdu, Kurdish), Syriac, and the Indic scripts Devanagari to Sinhala."""
    code = ord(ch)
    return (0x0600 <= code <= 0x08FF or 0x0900 <= code <= 0x0DFF or 0xFB50 <= code <= 0xFDFF
            or 0xFE70 <= code <= 0xFEFF) and unicodedata.category(ch)[0] in "LM"


def _symbol(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk") or 0x1F000 <= ord(ch) <= 0x1FAFF


#: Cyrillic and Greek letters drawn like Latin ones (the common homoglyphs of spoofed text)
_CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I",
    "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # small capitals
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j",
    "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ᴛ": "t", "ᴜ": "u",
    "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
})


def fold_with_map(text: str, *, read_tags: bool = True) -> tuple[str, list[int]]:
    """:func:`fold` of ``text``, and for each of its characters the index of the character
    of ``text`` it came from (so a match in the folded text maps back). ``read_tags=False``
    drops tag characters instead of reading them (a secret with one inside is still the
    secret a reader sees)."""
    if text.isascii():
        return text, list(range(len(text)))
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            where.append(i)
            continue
        code = ord(ch)
        if read_tags and 0xE0020 <= code <= 0xE007E:
            # a tag character spells an ASCII one invisibly: a model reads it, so a check does
            out.append(chr(code - 0xE0000))
            where.append(i)
            continue
        if _invisible(ch):
            continue
        for c in unicodedata.normalize("NFKD", ch):
            if unicodedata.category(c) == "Mn" or _invisible(c):
                continue  # an accent or a mark drawn on a letter
            out.append(c.translate(_CONFUSABLES))
            where.append(i)
    return "".join(out), where


def fold(text: str, *, read_tags: bool = True) -> str:
    """The form of ``text`` that safety checks scan (see the module doc): what a reader sees
    and a model understands, without the tricks that hide words from a pattern."""
    return fold_with_map(text, read_tags=read_tags)[0]


def without_boundary(text: str, boundary: str | None = DEFAULT_BOUNDARY) -> str:
    """``text`` with every cache-boundary marker (the configured one, and the default in any
    case and spacing) replaced by :data:`BOUNDARY_STAND_IN`."""
    if boundary:
        text = text.replace(boundary, BOUNDARY_STAND_IN)
    return _DEFAULT_MARKER.sub(BOUNDARY_STAND_IN, text)


_ANY_TAG = re.compile(r"<[^<>]*>")
# "_" stays: it is common in ids and names, and inert on a single line
_MARKUP_CHARS = str.maketrans({c: " " for c in "<>`*#[]{}|\\~\""})
_SPACES = re.compile(r"\s+")


def one_line(value: object, max_chars: int = 100) -> str:
    """A session field (channel, user id, sender or group name from a host) made safe to
    quote on one line of a prompt: tags and markup characters dropped, control and format
    characters (newlines, bidi overrides) turned into spaces, whitespace collapsed, cut to
    ``max_chars`` characters (with "…")."""
    text = _ANY_TAG.sub(" ", str(value))
    text = "".join(
        " " if unicodedata.category(ch)[0] in "CZ" and ch != " " else ch for ch in text
    )
    text = _SPACES.sub(" ", text.translate(_MARKUP_CHARS)).strip()
    if len(text) > max_chars:
        from .graphemes import safe_cut_before

        # never half a flag or a letter without its accent
        text = text[: safe_cut_before(text, max(max_chars - 1, 0))].rstrip() + "…"
    return text
