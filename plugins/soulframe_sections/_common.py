"""Helpers the sections share: how a context file is wrapped, which zone it belongs to,
which files a dedicated section shows, sandbox settings and title sanitising."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from soulframe import ContextFile, PromptContext
from soulframe.kit import neutralise, one_line
from soulframe.memorykit import is_curated

#: files whose content changes rarely: they sit above the cache boundary (seed 002). Every
#: other real file (USER.md, BOOTSTRAP.md, MEMORY.md, daily logs ...) goes below it.
DEFAULT_STABLE_FILES: frozenset[str] = frozenset({
    "AGENTS.md", "AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md", "USER_PREDEFINED.md",
    "TOOLS.md", "HEARTBEAT.md",
})

#: per-user files: never operator configuration, even for a predefined agent (seed 000 §4)
PER_USER_FILES: frozenset[str] = frozenset({"USER.md", "BOOTSTRAP.md"})

#: file name -> the section that shows it instead of Project Context
CLAIMED_BY: Mapping[str, str] = {
    "SOUL.md": "persona",
    "IDENTITY.md": "persona",
    "TEAM.md": "team_workspace",
    "DELEGATION.md": "delegation_targets",
}


def disabled(ctx: PromptContext) -> frozenset[str]:
    return frozenset(ctx.config.get("prompt.disabled_sections") or ())


def is_memory_file(name: str) -> bool:
    """The curated memory or a file under ``memory/``: shown by the memory sections, not as
    project context (the names are :mod:`soulframe._engine.memory.files`')."""
    return is_curated(name) or name.startswith("memory/")


def is_stable_file(ctx: PromptContext, f: ContextFile) -> bool:
    if f.kind == "virtual":
        return True
    configured = ctx.config.get("prompt.stable_files")
    stable = frozenset(configured) if configured is not None else DEFAULT_STABLE_FILES
    return f.name in stable


def shown_elsewhere(ctx: PromptContext, f: ContextFile) -> bool:
    """True when a dedicated section (persona, team, delegation) owns this file. If the user
    disabled that section, the file falls back to Project Context rather than vanishing."""
    owner = CLAIMED_BY.get(f.name)
    return owner is not None and owner not in disabled(ctx)


def tag_for(ctx: PromptContext, f: ContextFile) -> str:
    """``system_context`` for generated files, ``internal_config`` for a predefined agent's
    operator-written files (a signal to keep them confidential), ``context_file`` otherwise."""
    if f.kind == "virtual":
        return "system_context"
    if (
        ctx.spec.type == "predefined"
        and f.scope == "agent"
        and f.name not in PER_USER_FILES
        and not is_memory_file(f.name)
    ):
        return "internal_config"
    return "context_file"


def wrap(ctx: PromptContext, f: ContextFile, *, heading: str = "##") -> str:
    tag = tag_for(ctx, f)
    # a file that holds a wrapper tag must not end its block early or open a fake one
    body = safe_text(ctx, f.content.strip("\n"))
    name = one_line(f.name, 200)
    return f'{heading} {name}\n<{tag} name="{name}">\n{body}\n</{tag}>'


def safe_text(ctx: PromptContext, text: str) -> str:
    """Injected text (a file, an extra prompt) neutralised: no wrapper tag of soulframe's
    and no cache-boundary marker survives in it (:func:`soulframe.kit.neutralise`), and
    no secret unless ``memory.mask_secrets = false``."""
    from soulframe.kit import mask_for_model

    marker = ctx.config.get("prompt.cache_boundary")
    # a key written into a file by hand reaches no model (memory.mask_secrets)
    return neutralise(mask_for_model(text, ctx.config), None if marker is None else str(marker))


def option(ctx: PromptContext, key: str, default: Any = None) -> Any:
    return ctx.spec.options.get(key, default)


def sandbox(ctx: PromptContext) -> dict[str, Any] | None:
    """The effective sandbox settings (config ``sandbox.*``, overridden by the agent's
    ``options.sandbox`` table), or ``None`` when the agent is not sandboxed."""
    from soulframe.kit import sandbox_settings

    return sandbox_settings(ctx.config, ctx.spec)


def sanitize_title(title: str, max_chars: int = 100) -> str:
    """Make an untrusted group-chat title safe to quote in the prompt (seed 002): drop tags
    and markup characters, control and format characters (newlines, bidi overrides), collapse
    whitespace, and cut to ``max_chars`` characters. Every session field is quoted this way
    (:func:`soulframe.kit.one_line`)."""
    return one_line(title, max_chars)


def has_tool(ctx: PromptContext, name: str) -> bool:
    return any(t.name == name for t in ctx.tools)
