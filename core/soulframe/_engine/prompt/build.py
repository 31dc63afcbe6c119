"""Assemble the system prompt from the registered sections (seed 002).

``build_system_prompt(agent, session)``:

1. resolves the prompt mode (:func:`resolve_mode`);
2. collects the context files the session may see (:func:`soulframe._engine.prompt.context.collect_context`)
   and the agent's display identity;
3. renders every section registered through ``register_prompt_sections`` whose ``modes``
   include the mode, in ``(order, name)`` order, skipping those that render nothing and
   those listed in ``prompt.disabled_sections``;
4. lets the truncation policy (``bootstrap.truncation``) fit the sections into
   ``prompt.budget_tokens`` — sections with ``truncate_priority=None`` are never cut;
5. says what was cut: a short notice in the prompt (which file or section, where the rest
   is) and :attr:`SystemPrompt.notices`;
6. splits the prompt at the cache boundary: stable sections first, then the marker
   (``prompt.cache_boundary``), then the dynamic ones, each zone keeping section order;
7. tells ``prompt_built`` observers.

The section table is collected once per :class:`~soulframe.Agent`; context files are cached
by mtime by their source, so a warm build does little more than render strings.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .. import plugins as _plugins
from ..agentcache import SectionTable, cache_of
from ..model import (
    PROMPT_MODES,
    ConfigError,
    ContextFile,
    Identity,
    PromptContext,
    PromptMode,
    RenderedSection,
    Section,
    Session,
    SoulframeError,
    SoulframeWarning,
    SystemPrompt,
    TruncationNotice,
)

if TYPE_CHECKING:
    from ..model import AgentLike

DEFAULT_BOUNDARY = "<!-- SOULFRAME_CACHE_BOUNDARY -->"
#: the notice the core adds when something was cut; sits just before the recency reminders
NOTICE_SECTION = "truncation_notice"
NOTICE_ORDER = 15.9
#: sessions that run lean by default (seed 002: auto-detected from the session)
LEAN_SESSIONS = ("subagent", "cron")


class PromptWarning(SoulframeWarning):
    """Something in the prompt configuration is probably a mistake (e.g. a disabled section
    name that no plugin registers)."""


# --------------------------------------------------------------------------- mode


def _check_mode(mode: str, where: str) -> PromptMode:
    if mode not in PROMPT_MODES:
        raise SoulframeError(f"{where} = {mode!r} — expected one of {', '.join(PROMPT_MODES)}")
    return mode  # type: ignore[return-value]


def resolve_mode(agent: AgentLike, session: Session, override: str | None = None) -> PromptMode:
    """The prompt mode for ``session``, in seed 002's order.

    1. a runtime override (``override``, then ``session.mode``);
    2. auto-detection from the session: sub-agent and cron sessions run ``minimal`` — or
       ``task`` when the agent is configured for task mode ("capped at task"); heartbeat
       sessions run ``minimal``;
    3. the agent's configured mode (``prompt_mode`` in its ``[[agents]]`` entry, else
       ``prompt.mode``);
    4. ``full``.
    """
    if override:
        return _check_mode(override, "mode")
    if session.mode:
        return _check_mode(session.mode, "session.mode")
    configured = agent.spec.prompt_mode or agent.config.get("prompt.mode")
    if configured:
        configured = _check_mode(str(configured), f"agents[{agent.spec.id}].prompt_mode")
    if session.kind in LEAN_SESSIONS:
        return "task" if configured == "task" else "minimal"
    if session.kind == "heartbeat":
        return "minimal"
    return configured or "full"


# --------------------------------------------------------------------------- the section table


def section_table(agent: AgentLike) -> SectionTable:
    """Collected once per agent (and again if ``prompt.disabled_sections`` changes)."""
    disabled = tuple(agent.config.get("prompt.disabled_sections") or ())
    cached = cache_of(agent).sections
    if cached is not None and cached.disabled == disabled:
        return cached
    found: dict[str, Section] = _plugins.collect_named(agent.pm, "register_prompt_sections")
    for name in disabled:
        if name not in found:
            import difflib  # only for a "did you mean": kept off the start-up path

            hint = difflib.get_close_matches(name, list(found), n=1)
            warnings.warn(
                f"prompt.disabled_sections: no section is named {name!r}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
                + f"; sections: {', '.join(sorted(found))}",
                PromptWarning,
                stacklevel=3,
            )
    kept = sorted((s for s in found.values() if s.name not in disabled), key=lambda s: (s.order, s.name))
    table = SectionTable(
        disabled=disabled,
        sections=tuple(kept),
        by_mode={m: tuple(s for s in kept if m in s.modes) for m in PROMPT_MODES},
    )
    cache_of(agent).sections = table
    return table


# --------------------------------------------------------------------------- building


def _memo_estimator(agent: AgentLike, estimate: Callable[[str], int]) -> Callable[[str], int]:
    """``estimate`` remembered per text: most sections render the same text build after
    build, and a warm build should not re-scan them."""
    cached = cache_of(agent).token_memo
    if cached is None or cached[0] is not estimate:
        cached = (estimate, {})
        cache_of(agent).token_memo = cached
    memo: dict[str, int] = cached[1]

    def memo_estimate(text: str) -> int:
        n = memo.get(text)
        if n is None:
            if len(memo) >= 512:  # bounded: the clock and the session change some texts
                memo.clear()
            n = memo[text] = estimate(text)
        return n

    return memo_estimate


def _identity(agent: AgentLike, files: Sequence[ContextFile]) -> Identity:
    """The resolved identity, re-parsed only when IDENTITY.md changes (the config it also
    reads is fixed for the agent's lifetime)."""
    from .identity import resolve_identity

    f = next((f for f in files if f.name == "IDENTITY.md"), None)
    key = None if f is None else (f.scope, f.content)
    cached = cache_of(agent).identity
    if cached is not None and cached[0] == key:
        return cached[1]
    identity = resolve_identity(agent, files)
    cache_of(agent).identity = (key, identity)
    return identity


def _timezone_name(agent: AgentLike, now: Any) -> str:
    name = agent.spec.timezone or agent.config.get("timezone")
    return str(name) if name else str(now.tzname() or "local time")


def _render(section: Section, ctx: PromptContext, estimate: Any) -> RenderedSection | None:
    try:
        text = section.render(ctx)
        if text is not None and not isinstance(text, str):
            raise TypeError(f"render returned {type(text).__name__}, expected str or None")
    except SoulframeError:
        raise
    except Exception as exc:
        # a broken section must not silently vanish from the prompt (it may be safety): the
        # prompt fails, saying whose section it is and how to go on without that plugin
        pm = ctx.agent.pm
        third_party = section.plugin and not (isinstance(pm, _plugins.PluginManager) and pm.is_own(section.plugin))
        raise SoulframeError(
            f"prompt section {section.name!r} from plugin {section.plugin or '?'!r} failed: "
            f"{type(exc).__name__}: {exc}"
            + (f" (disable it with plugins.disabled = [{section.plugin!r}])" if third_party else "")
        ) from exc
    if not text or not text.strip():
        return None
    text = text.strip("\n")
    return RenderedSection(
        name=section.name, order=section.order, zone=section.zone, text=text,
        tokens=estimate(text), plugin=section.plugin, truncate_priority=section.truncate_priority,
    )


_WRAPPED = re.compile(r'<(?:context_file|internal_config|system_context) name="([^"]+)">')


def notice_text(
    notices: Sequence[TruncationNotice], files_of: Mapping[str, Sequence[str]] | None = None,
    *, brief: bool = False,
) -> str | None:
    """The short note the model sees about what was cut and where the rest is.

    :param files_of: section name -> the context files it showed, so a cut section of
        context files names the files to read.
    :param brief: names only, on one line: what a small budget can still hold when the
        hints of a dozen cut sections would cost more than the sections kept.
    """
    lines = []
    for n in notices:
        if n.name.startswith("("):  # about the prompt as a whole: for the user, not the model
            continue
        if brief:
            line = n.name
        elif n.hint:
            line = f"- {n.name}: {n.hint}"
        elif n.kept_chars:
            line = f"- {n.name}: {n.kept_chars:,} of {n.original_chars:,} characters kept"
        else:
            line = f"- {n.name}: left out"
        shown = (files_of or {}).get(n.name)
        if shown:
            line += f" (files: {', '.join(shown)})"
        lines.append(line)
    if not lines:
        return None
    if brief:
        return ("## Truncated Context\n"
                "Left out or shortened to fit this prompt (read them from their sources when "
                "you need them; context files with the context_read tool): " + ", ".join(lines))
    return (
        "## Truncated Context\n"
        "Some context was shortened to fit this prompt. When you need the rest, read it "
        "from its source:\n" + "\n".join(lines)
    )


def _fit(
    agent: AgentLike, rendered: list[RenderedSection], budget: int, estimate: Callable[[str], int],
    context_notices: Sequence[TruncationNotice],
) -> tuple[list[RenderedSection], tuple[TruncationNotice, ...]]:
    """Budget enforcement plus the notice. The notice itself costs tokens, so when adding
    it tips the prompt over the budget, the sections are fitted again into what is left
    (a few rounds at most), and when the note listing every cut with its hint does not
    fit, a brief one naming them does. If the never-cut sections alone exceed the budget,
    a notice says by how much and the prompt stays over."""
    from .context import checked_cut, truncation_policy

    files_of: dict[str, list[str]] | None = None
    for brief in (False, True):
        target = budget
        for _ in range(6):  # the note grows with each cut, so a few rounds may be needed
            kept, cut = list(rendered), list[TruncationNotice]()
            if sum(r.tokens for r in kept) > target:
                kept, cut = checked_cut(agent, "enforce_budget", truncation_policy(agent).enforce_budget,
                                        (kept, target, estimate), RenderedSection)
            if target != budget:
                # the policy names the budget it was given; the user knows the configured one
                cut = [attrs.evolve(n, hint=n.hint.replace(f"= {target}", f"= {budget}")) for n in cut]
            notices = (*context_notices, *cut)
            if not notices:
                return kept, notices
            if files_of is None:  # only when something was cut: keep the warm path lean
                files_of = {r.name: _WRAPPED.findall(r.text) for r in rendered}
            note = notice_text(notices, files_of, brief=brief)
            if note is None:
                return kept, notices
            kept.append(RenderedSection(
                name=NOTICE_SECTION, order=NOTICE_ORDER, zone="dynamic", text=note,
                tokens=estimate(note), plugin="soulframe",
            ))
            kept.sort(key=lambda r: r.order)  # stable: equal orders keep table order
            over = sum(r.tokens for r in kept) - budget
            if over <= 0:
                return kept, _still_over(notices, kept, budget)
            target -= over + 16  # fit the sections into what the note leaves, with some slack
    return kept, _still_over(notices, kept, budget)


def _still_over(
    notices: Sequence[TruncationNotice], kept: Sequence[RenderedSection], budget: int
) -> tuple[TruncationNotice, ...]:
    """The notices with the one about the whole prompt stated against the configured
    budget: the policy was given a smaller target to leave room for the note, so its own
    figure (or its verdict) may be about that target."""
    rest = tuple(n for n in notices if n.name != "(prompt)")
    over = sum(r.tokens for r in kept) - budget
    if over <= 0:
        return rest
    chars = sum(len(r.text) for r in kept)
    return (*rest, TruncationNotice(
        name="(prompt)", original_chars=chars, kept_chars=chars,
        hint=(f"still {over} tokens over prompt.budget_tokens = {budget}: the sections that "
              "are never cut (safety, tooling, workspace, identity...) and the note on what "
              "was cut need more; raise the budget"),
    ))


def _one_boundary(
    rendered: list[RenderedSection], marker: object, estimate: Callable[[str], int]
) -> list[RenderedSection]:
    """Sections with any cache-boundary marker in their text replaced (whatever section,
    built-in or a plugin's, let it through), so the prompt holds exactly the one added
    between the zones."""
    from ..neutralise import without_boundary

    boundary = None if marker is None else str(marker)
    out = []
    for r in rendered:
        text = without_boundary(r.text, boundary)
        out.append(r if text == r.text else attrs.evolve(r, text=text, tokens=estimate(text)))
    return out


def effective_budget(budget_tokens: int, config: Any) -> int:
    """The token budget of a prompt: ``prompt.budget_tokens``, scaled down for a small
    model so the system prompt never takes more than ``prompt.max_window_share`` of the
    model's context window (seed 002: "defaults to 24K but scales with context window").
    With the default 200,000-token window the configured budget stands."""
    window = int(config.get("model.context_window") or 0)
    share = float(config.get("prompt.max_window_share") or 0)
    if window > 0 and share > 0:
        return max(1, min(budget_tokens, int(window * share)))
    return budget_tokens


def build_system_prompt(
    agent: AgentLike,
    session: Session,
    *,
    mode: str | None = None,
    budget_tokens: int | None = None,
) -> SystemPrompt:
    """Build the system prompt for ``session`` (see the module docstring).

    :param mode: force a prompt mode (highest priority, above ``session.mode``).
    :param budget_tokens: override ``prompt.budget_tokens`` for this build.
    """
    from .context import collect_context, session_now
    from .tokens import get_estimator

    resolved = resolve_mode(agent, session, mode)
    table = section_table(agent)
    context = collect_context(agent, session, resolved)
    now = session_now(agent, session)
    estimate = _memo_estimator(agent, get_estimator(agent))
    ctx = PromptContext(
        agent=agent,
        spec=agent.spec,
        session=session,
        mode=resolved,
        config=agent.config,
        files=list(context.files),
        tools=list(agent.tools(session)),
        identity=_identity(agent, context.files),
        now=now,
        bootstrapping=context.bootstrapping,
        extras={
            "timezone": _timezone_name(agent, now),
            "missing_files": [(n, agent.workspace.root / n) for n in context.missing],
        },
    )

    rendered = [r for s in table.by_mode[resolved] if (r := _render(s, ctx, estimate)) is not None]
    rendered = _one_boundary(rendered, agent.config.get("prompt.cache_boundary"), estimate)

    budget = int(budget_tokens if budget_tokens is not None else agent.config.get("prompt.budget_tokens"))
    if budget < 1:
        from .context import where

        key = "budget_tokens" if budget_tokens is not None else where(agent.config, "prompt.budget_tokens")
        raise ConfigError(f"{key} = {budget} — expected a positive number of tokens (default 24,000)")
    if budget_tokens is None:
        budget = effective_budget(budget, agent.config)
    rendered, notices = _fit(agent, rendered, budget, estimate, context.notices)

    stable = "\n\n".join(r.text for r in rendered if r.zone == "stable")
    dynamic = "\n\n".join(r.text for r in rendered if r.zone != "stable")
    marker = agent.config.get("prompt.cache_boundary")
    marker = DEFAULT_BOUNDARY if marker is None else str(marker)
    text = f"{stable}\n\n{marker}\n\n{dynamic}" if marker else f"{stable}\n\n{dynamic}"

    prompt = SystemPrompt(
        text=text,
        stable_prefix=stable,
        dynamic_suffix=dynamic,
        mode=resolved,
        session=session,
        sections=tuple(rendered),
        context_files=tuple(context.files),
        notices=tuple(notices),
        budget_tokens=budget,
    )
    _plugins.notify(agent.pm, "prompt_built", agent=agent, prompt=prompt)
    return prompt
