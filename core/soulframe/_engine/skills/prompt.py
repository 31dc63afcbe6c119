"""The text of the skills section: inline ``<available_skills>`` or search-mode instructions.

The wording follows seed 001 §4 ("scan <available_skills>, read exactly one, only after
selecting"); search mode (seed 000 §9) tells the agent to find skills with ``skill_search``.
The block is the whole section, heading included, as every standard section renders its own
``## ...`` line.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ..model import Skill
from ..neutralise import strip_invisible
from .loader import SkillProblem, SkillWarning

if TYPE_CHECKING:
    from ..model import PromptContext
    from .skillset import SkillSet

log = logging.getLogger("soulframe.skills")

SkillMode = Literal["inline", "search"]
_MISSING = object()


class BlockCache:
    """The rendered skills block of one skill set, per (snapshot version, mode, has
    ``skill_read``, has ``skill_search``): a prompt build with nothing changed renders
    nothing. The skill set clears it when it loads a new snapshot."""

    def __init__(self) -> None:
        self._texts: dict[tuple[int, str, bool, bool], str | None] = {}

    def get(self, key: tuple[int, str, bool, bool], default: object = None) -> object:
        return self._texts.get(key, default)

    def put(self, key: tuple[int, str, bool, bool], text: str | None) -> None:
        self._texts[key] = text

    def clear(self) -> None:
        self._texts.clear()

#: the section heading of seed 001 §4 and seed 002
HEADING = "## Skills (mandatory)"

_RULES = (
    "- If exactly one skill clearly applies: {read}, then follow it.\n"
    "- If multiple could apply: choose the most specific one, then read/follow it.\n"
    "- If none clearly apply: do not read any SKILL.md.\n"
    "Constraints: never read more than one skill up front; only read after selecting."
)


@attrs.frozen
class Limits:
    """The prompt limits of seed 001 §4 (configurable)."""

    max_in_prompt: int = 150
    max_prompt_bytes: int = 30 * 1024


def _read_phrase(has_skill_read: bool) -> str:
    if has_skill_read:
        return "read it with `skill_read` (pass its name)"
    return "read its SKILL.md (the location) with `read`"


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escape(text: str) -> str:
    """XML text escaping (``xml.sax.saxutils`` would pull urllib and email into every
    prompt build's imports: ~13 ms)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """A double-quoted XML attribute value."""
    return '"' + escape(text).replace('"', "&quot;").replace("\n", "&#10;") + '"'


def skill_entry(skill: Skill, config: Any = None) -> str:
    """One ``<skill>`` element, XML-escaped (names and descriptions are user text); with
    ``config``, secrets in the description are masked as in ``skill_read``'s text."""
    # a description is the skill author's text: what a reader cannot see (bidi overrides,
    # zero-width and tag characters) or a terminal would act on (escape, bell) is dropped
    description = " ".join(_CONTROLS.sub(" ", strip_invisible(skill.description)).split())
    if config is not None:
        from ..redaction import mask_for_model

        description = mask_for_model(description, config)
    return (
        f"  <skill location={quoteattr(str(skill.path))}>"
        f"<name>{escape(skill.name)}</name>"
        f"<description>{escape(description)}</description></skill>"
    )


def render_inline(
    skills: Sequence[Skill], *, limits: Limits, has_skill_read: bool, has_skill_search: bool,
    config: Any = None,
) -> tuple[str, list[SkillProblem]]:
    """The inline block, and a problem for every limit that cut it (never silently); with
    ``config``, secrets in descriptions are masked (``memory.mask_secrets``)."""
    head = (
        f"{HEADING}\n"
        "Before replying: scan <available_skills> <description> entries.\n"
        + _RULES.format(read=_read_phrase(has_skill_read))
        + "\n\n<available_skills>\n"
    )
    tail = "</available_skills>"
    budget = limits.max_prompt_bytes - len(head.encode()) - len(tail.encode()) - 200
    lines: list[str] = []
    used = 0
    problems: list[SkillProblem] = []
    cut_by = ""
    for skill in skills:
        if len(lines) >= limits.max_in_prompt:
            cut_by = f"skills.max_in_prompt = {limits.max_in_prompt}"
            break
        entry = skill_entry(skill, config) + "\n"
        size = len(entry.encode())
        if used + size > budget:
            # this one does not fit; a shorter one after it may (one long description must
            # not take every skill after it out of the list)
            cut_by = f"skills.max_prompt_bytes = {limits.max_prompt_bytes:,}"
            continue
        lines.append(entry)
        used += size
    text = head + "".join(lines) + tail
    left = len(skills) - len(lines)
    if left:
        where = "find them with `skill_search`" if has_skill_search else "they are not shown"
        text += f"\n{left} more skills are not listed ({cut_by} reached): {where}."
        problems.append(SkillProblem(
            "skills prompt",
            f"{left} of {len(skills)} skills left out of the prompt: {cut_by} reached "
            "(search mode lists none and finds all; set skills.mode = \"auto\" or \"search\")",
        ))
    return text, problems


def render_search(count: int, *, has_skill_read: bool) -> str:
    """Search mode: no list, the agent finds skills with ``skill_search``."""
    noun = "skill is" if count == 1 else "skills are"
    return (
        f"{HEADING}\n"
        f"{count} {noun} installed; they are not listed here. Before replying, if the task "
        "might match a skill: call `skill_search` with a few keywords describing the task. "
        "It returns the best matches (name, description, location).\n"
        + _RULES.format(read=_read_phrase(has_skill_read))
    )


def choose_mode(
    skills: Sequence[Skill], config: Any, prompt_mode: str | None = None
) -> SkillMode:
    """Inline or search (seed 000 §9), decided afresh at every prompt build.

    Task mode is search-only (seed 002). Otherwise ``skills.mode`` may force either; on
    ``auto`` the skills are inlined while there are at most ``skills.inline_max_count``
    (20) of them and their names+descriptions estimate (chars / 4) at most
    ``skills.inline_max_tokens`` (3,500) tokens.
    """
    if prompt_mode == "task":
        return "search"
    forced = config.get("skills.mode")
    if forced in ("inline", "search"):
        return forced  # type: ignore[no-any-return]
    tokens = sum(len(s.name) + len(s.description) for s in skills) / 4
    if len(skills) <= int(config.get("skills.inline_max_count")) and tokens <= int(
        config.get("skills.inline_max_tokens")
    ):
        return "inline"
    return "search"


def skills_block(skills: SkillSet, ctx: PromptContext) -> str | None:
    """The skills section for ``ctx`` (heading included), or ``None`` when there are
    no skills to show.

    Full mode: inline ``<available_skills>`` (at most ``skills.max_in_prompt`` entries
    and ``skills.max_prompt_bytes``, with a note and a warning when cut) or, past the
    inline thresholds, search-mode instructions for ``skill_search``/``skill_read``.
    Task mode: search only. Minimal mode (sub-agents): only the skills named in
    ``skills.pinned``, inline (seed 002). Decided afresh at every build, so a
    hot-reloaded skill shows at once; the text is cached per version.
    """
    snap = skills.snapshot()
    prompt_mode = ctx.mode
    if not snap.skills or prompt_mode == "none":
        return None
    names = {t.name for t in ctx.tools}
    has_read = "skill_read" in names
    has_search = "skill_search" in names
    mode: str = "pinned" if prompt_mode == "minimal" else choose_mode(
        snap.skills, skills.config, prompt_mode)
    if mode == "search" and not has_search:
        # without the search tool the skills would be unreachable: list what fits
        mode = "inline"
    key = (snap.version, mode, has_read, has_search)
    cached = skills.blocks.get(key, _MISSING)
    if cached is not _MISSING:
        return cached  # type: ignore[return-value]
    text: str | None
    if mode == "search":
        text = render_search(len(snap.skills), has_skill_read=has_read)
    else:
        shown: Sequence[Skill] = snap.skills
        if mode == "pinned":
            pinned = set(skills.config.get("skills.pinned") or ())
            shown = [s for s in snap.skills if s.name in pinned]
        if not shown:
            text = None
        else:
            limits = Limits(
                max_in_prompt=int(skills.config.get("skills.max_in_prompt")),
                max_prompt_bytes=int(skills.config.get("skills.max_prompt_bytes")),
            )
            text, problems = render_inline(
                shown, limits=limits, has_skill_read=has_read, has_skill_search=has_search,
                config=skills.config,
            )
            for p in problems:
                warnings.warn(str(p), SkillWarning, stacklevel=2)
                log.info("skills: %s", p)  # the warning is the user's copy
    skills.blocks.put(key, text)
    return text
