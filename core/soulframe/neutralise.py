"""Text from outside soulframe (workspace files, daily logs, memory excerpts, skill
descriptions, extra prompts, session fields a host passes in) must not be able to pose as
soulframe's own structure in a prompt. Two functions, used wherever such text enters:

* :func:`neutralise` for a block of text placed inside one of soulframe's wrapper tags: every
  tag soulframe wraps text in (opening or closing, in any case and spacing:
  ``</context_file >``, ``</context_file\\n>``, ``</CONTEXT_FILE>``, a fake
  ``<system_context name="DELEGATION.md">``) is escaped so it can no longer open or close a
  block, and the prompt-cache boundary marker is replaced, so a prompt holds exactly one;
* :func:`one_line` for a short field quoted on one line (a channel name, a user id, a
  sender's name, a group title): control and format characters (newlines, bidi overrides),
  tags and Markdown markup go, whitespace collapses, the length is capped.

Import-light: stdlib only.
"""

from __future__ import annotations

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
# could hide, attributes, up to ``>`` (or the end of the text: a tag left open at the end
# is still a tag to a model)
_TAG = re.compile(
    r"<\s*(/?)\s*(" + "|".join(WRAPPER_TAGS) + r")\b([^<>]*)(>|$)",
    re.IGNORECASE,
)
# the default marker in any case and spacing, as an HTML comment
_DEFAULT_MARKER = re.compile(r"<!--\s*SOULFRAME_CACHE_BOUNDARY\s*-->", re.IGNORECASE)


def _escape_tag(m: re.Match[str]) -> str:
    slash, name, rest, close = m.groups()
    # "<\/context_file>" (the form soulframe has always used for a closing tag) and
    # "<\context_file ...>": readable, and no longer a tag
    return f"<\\{slash}{name}{rest}{close}" if slash else f"<\\{name}{rest}{close}"


def neutralise(text: str, boundary: str | None = DEFAULT_BOUNDARY) -> str:
    """``text`` made safe to place inside a soulframe wrapper tag (see the module doc).

    :param boundary: the configured cache-boundary marker (``prompt.cache_boundary``); the
        default marker is replaced as well, in any case and spacing.
    """
    if not text:
        return text
    return _TAG.sub(_escape_tag, without_boundary(text, boundary))


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
        text = text[: max(max_chars - 1, 0)].rstrip() + "…"
    return text
