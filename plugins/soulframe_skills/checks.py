"""The ``soulframe doctor`` check for skills (seed 003 §8.10), offered through
``register_doctor_checks``: SKILL.md files that were skipped, skills the inline prompt
block leaves out, and ``skills.pinned`` names no skill has. Cheap: it reads the skill
snapshot the agent already has.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from soulframe import Finding
from soulframe.cli import quiet_logs as _quiet_logs

if TYPE_CHECKING:
    from soulframe import CheckedAgent

#: at most this many per-file findings of one kind; the rest are counted in one line
MAX_LISTED = 10


def skills(agent: CheckedAgent) -> Iterable[Finding]:
    """SKILL.md files that were skipped, skills the inline prompt block leaves out, and
    pinned skills that do not exist."""
    from soulframe.kit import SkillLimits as Limits
    from soulframe.kit import render_skills_inline as render_inline

    with _quiet_logs():  # the skills loader logs each problem; they are findings here
        snap = agent.skills.snapshot()
    problems = list(snap.problems)
    for p in problems[:MAX_LISTED]:
        yield Finding("skills", "warning", f"skipped: {p.message}", p.path)
    if len(problems) > MAX_LISTED:
        yield Finding("skills", "warning", f"{len(problems) - MAX_LISTED} more SKILL.md problems "
                      "(`soulframe skills list` shows them all)")
    loaded = list(snap.skills)
    if loaded and agent.skills.mode() == "inline":
        limits = Limits(max_in_prompt=int(agent.config.get("skills.max_in_prompt")),
                        max_prompt_bytes=int(agent.config.get("skills.max_prompt_bytes")))
        _, cut = render_inline(loaded, limits=limits, has_skill_read=True, has_skill_search=True)
        for p in cut:
            yield Finding("skills", "warning", p.message)
    names = sorted({s.name for s in loaded})
    for name in agent.config.get("skills.pinned") or ():
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            yield Finding("skills", "warning",
                          f"{agent.config.where('skills.pinned')} names {name!r}, which no skill "
                          f"tier holds{hint}: sub-agent prompts cannot list it")
