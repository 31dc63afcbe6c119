"""``soulframe prompt``: print the system prompt a session would get, as text, as JSON, or as
a table of what fills the token budget (``--explain``).

Only the prompt path is imported here: no numpy, sqlite-vec, psycopg or tokenizers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import click

from ..model import PROMPT_MODES, SESSION_KINDS, Section, Session, SystemPrompt
from .state import State, echo_json, pass_state, user_option

log = logging.getLogger("soulframe.cli")


@click.command("prompt")
@click.option("--mode", type=click.Choice(PROMPT_MODES),
              help="Force a prompt mode (default: from the session kind and the agent's config).")
@click.option("--session", "kind", type=click.Choice(SESSION_KINDS), default=None,
              help="Session kind to build for (default: main; group when --title is given).")
@user_option("The user the session is with.")
@click.option("--channel", metavar="NAME", help="Channel name (telegram, slack, ...).")
@click.option("--title", metavar="TEXT", help="Group chat title (implies --session group).")
@click.option("--budget", type=click.IntRange(min=1), metavar="TOKENS",
              help="Token budget for this build (default: prompt.budget_tokens).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: text, stable_prefix, dynamic_suffix, mode, sections, notices.")
@click.option("--explain", is_flag=True,
              help="Print a table of the sections: zone, size, tokens, truncation, plugin.")
@pass_state
def prompt_command(
    state: State, mode: str | None, kind: str | None, user_id: str | None, channel: str | None,
    title: str | None, budget: int | None, as_json: bool, explain: bool,
) -> None:
    """Print the system prompt for a session.

    \b
    Examples:
      soulframe prompt                              the main session's prompt
      soulframe prompt --session subagent           what a sub-agent sees
      soulframe prompt --title "Studio crew"        a group chat
      soulframe prompt --explain                    what fills the token budget
    """
    if title is not None and kind not in (None, "group"):
        raise click.UsageError("--title is the title of a group chat; use it with --session group")
    session = Session(
        kind=(kind or ("group" if title is not None else "main")),  # type: ignore[arg-type]
        user_id=user_id, channel=channel, chat_title=title,
    )
    started = time.perf_counter()
    prompt = state.agent().system_prompt(session, mode=mode, budget_tokens=budget)
    _log_prompt(prompt, time.perf_counter() - started)
    for n in prompt.notices:
        if n.name == "(prompt)":  # the text is for a model; the user must hear it is over
            click.echo(f"warning: the prompt is ~{prompt.tokens:,} tokens, {n.hint}", err=True)
    if as_json:
        echo_json(prompt.to_dict())
    elif explain:
        from ..prompt.build import section_table

        known = {sec.name: sec for sec in section_table(state.agent()).sections}
        click.echo(explain_table(prompt, known))
    else:
        click.echo(prompt.text)


def explain_table(prompt: SystemPrompt, known: Mapping[str, Section] | None = None) -> str:
    """One row per section in prompt order — including the ones the budget dropped — the
    cache boundary where it falls, and totals against the budget, so a user sees what fills
    their prompt."""
    rows: list[tuple[float, str, str, str, str, str, str]] = [
        (s.order, s.name, s.zone, f"{s.chars:,}", f"{s.tokens:,}", "yes" if s.truncated else "", s.plugin)
        for s in prompt.sections
    ]
    present = {s.name for s in prompt.sections}
    for n in prompt.notices:
        sec = (known or {}).get(n.name)
        if n.kept_chars == 0 and sec is not None and n.name not in present:
            rows.append((sec.order, sec.name, sec.zone, f"{n.original_chars:,}", "-", "dropped", sec.plugin))
    rows.sort(key=lambda r: (r[2] != "stable", r[0]))
    name_w = max([len(r[1]) for r in rows] + [len("section")])
    plugin_w = max([len(r[6]) for r in rows] + [len("plugin")])
    head = (f"{'order':>5}  {'section':<{name_w}}  {'zone':<7}  {'chars':>7}  {'~tokens':>7}  "
            f"{'cut':<7}  {'plugin':<{plugin_w}}")
    lines = [head.rstrip(), "-" * len(head)]
    boundary_drawn = False
    for order, name, zone, chars, tokens, cut, plugin in rows:
        if zone != "stable" and not boundary_drawn:
            lines.append(f"{'':>5}  ── cache boundary ──")
            boundary_drawn = True
        lines.append(
            f"{order:>5g}  {name:<{name_w}}  {zone:<7}  {chars:>7}  {tokens:>7}  {cut:<7}  {plugin}".rstrip()
        )
    lines.append("-" * len(head))
    total_chars = sum(s.chars for s in prompt.sections)
    tokens_total = prompt.tokens
    budget = prompt.budget_tokens
    share = f" of {budget:,} budget ({tokens_total / budget:.0%})" if budget else ""
    lines.append(f"{'':>5}  {'total':<{name_w}}  {'':<7}  {total_chars:>7,}  {tokens_total:>7,}{share}")
    stable = sum(s.tokens for s in prompt.sections if s.zone == "stable")
    lines.append(f"mode: {prompt.mode}   session: {prompt.session.kind}   "
                 f"cached prefix: ~{stable:,} tokens   dynamic: ~{tokens_total - stable:,} tokens")
    for n in prompt.notices:
        lines.append(f"truncated: {n.name}: {n.hint or f'{n.kept_chars} of {n.original_chars} chars kept'}")
    return "\n".join(lines)


def _log_prompt(prompt: Any, seconds: float) -> None:
    """``-v``: what the build did (sections, tokens against the budget, cuts) and how long
    it took; ``-vv``: each section and each cut."""
    budget = f" of {prompt.budget_tokens:,}" if prompt.budget_tokens else ""
    log.info("prompt: %s session, mode %s, %d sections, %d context files, ~%s tokens%s, "
             "%d cut%s, in %.1f ms", prompt.session.kind, prompt.mode, len(prompt.sections),
             len(prompt.context_files), f"{prompt.tokens:,}", budget, len(prompt.notices),
             "" if len(prompt.notices) == 1 else "s", seconds * 1000)
    for sec in prompt.sections:
        log.debug("  section %s: %d chars%s", sec.name, len(sec.text), " (cut)" if sec.truncated else "")
    for n in prompt.notices:
        log.info("  cut %s: %s", n.name, n.hint)
