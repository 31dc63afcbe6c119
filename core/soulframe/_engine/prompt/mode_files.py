"""Which context files a prompt mode uses, and which expected files are missing.

**Mode variants of AGENTS.md** (seed 002's stable files: AGENTS.md, AGENTS_CORE.md,
AGENTS_TASK.md, CAPABILITIES.md, USER_PREDEFINED.md). A workspace may keep a lean copy of its
operating instructions for the lean modes:

* ``task`` mode uses ``AGENTS_TASK.md`` instead of AGENTS.md when it exists;
* ``minimal`` mode (sub-agents, cron, heartbeats) uses ``AGENTS_CORE.md`` instead of
  AGENTS.md when it exists;
* ``full`` mode uses AGENTS.md; a variant never shows beside the file it replaces.

``CAPABILITIES.md`` (what the agent can do) is a stable project-context file in every mode
but ``none``; sub-agent and cron sessions keep their two-file allowlist (seed 000 §1), where
an AGENTS.md variant counts as AGENTS.md. ``USER_PREDEFINED.md`` — the baseline user rules of
a predefined agent (seed 002 "Bootstrap Files in Project Context") — is used by predefined
agents only; an open agent's users each have their own USER.md.

**Missing-file markers** (seed 003 §2.4 "mark missing ones", §3.1 "Missing files produce
only a marker comment"). The files seed 003 §1.1 loads in *every session* — AGENTS.md,
SOUL.md, USER.md, IDENTITY.md, TOOLS.md — are *expected*: when one the session would see is
absent, the prompt carries a one-line marker naming the path it was expected at, so the model
(and whoever reads the prompt) knows it is missing rather than empty. Every other file is
optional (seed 002 "Files are optional; missing files are skipped"): HEARTBEAT.md (heartbeat
runs only), BOOTSTRAP.md (first run only, deleted after), MEMORY.md, daily logs, the variants
above. SOUL.md and IDENTITY.md are marked only where the persona is shown (full and task mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import ContextFile

#: mode -> the AGENTS.md variant that replaces AGENTS.md in that mode
AGENTS_VARIANT: dict[str, str] = {"task": "AGENTS_TASK.md", "minimal": "AGENTS_CORE.md"}
AGENTS_VARIANTS: frozenset[str] = frozenset(AGENTS_VARIANT.values())
#: read from the workspace besides the bootstrap files
EXTRA_FILES: tuple[str, ...] = ("AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md", "USER_PREDEFINED.md")
PREDEFINED_ONLY: frozenset[str] = frozenset({"USER_PREDEFINED.md"})

#: seed 003 §1.1: loaded "every session"; a missing one is marked
EXPECTED_FILES: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md")
#: shown by the persona section, which only full and task mode have
PERSONA_FILES: frozenset[str] = frozenset({"SOUL.md", "IDENTITY.md"})
PERSONA_MODES: frozenset[str] = frozenset({"full", "task"})


def for_mode(files: Sequence[ContextFile], mode: str, agent_type: str = "open") -> list[ContextFile]:
    """``files`` as ``mode`` uses them: the AGENTS.md variant of the mode (if present)
    replaces AGENTS.md, other variants are dropped, USER_PREDEFINED.md only for predefined
    agents, and ``none`` mode keeps only IDENTITY.md, which the identity line is resolved
    from (seed 002: "Identity line only")."""
    if mode == "none":
        return [f for f in files if f.name == "IDENTITY.md"]
    names = {f.name for f in files}
    variant = AGENTS_VARIANT.get(mode)
    use_variant = variant is not None and variant in names
    out = []
    for f in files:
        if f.name in AGENTS_VARIANTS and not (use_variant and f.name == variant):
            continue
        if f.name == "AGENTS.md" and use_variant:
            continue
        if f.name in PREDEFINED_ONLY and agent_type != "predefined":
            continue
        out.append(f)
    return out


def missing_expected(
    files: Sequence[ContextFile], mode: str, visible: Any
) -> list[str]:
    """The expected files the session would see in ``mode`` but nobody provided.

    :param files: the files after :func:`for_mode`.
    :param visible: ``name -> bool``, the session filter.
    """
    if mode == "none":
        return []
    names = {f.name for f in files}
    out = []
    for name in EXPECTED_FILES:
        if name in names or not visible(name):
            continue
        if name == "AGENTS.md" and AGENTS_VARIANT.get(mode) in names:
            continue
        if name in PERSONA_FILES and mode not in PERSONA_MODES:
            continue
        out.append(name)
    return out
