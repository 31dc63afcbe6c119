"""``soulframe logs``: the chat-model calls soulframe made (:mod:`soulframe._engine.calllog`)."""

from __future__ import annotations

import click

from .state import State, echo_json, pass_state


@click.command("logs")
@click.option("-n", "--count", type=click.IntRange(min=1), default=20, show_default=True,
              help="Show the last N calls.")
@click.option("--purpose", metavar="NAME",
              help="Only calls made for NAME: heartbeat, boot, flush, summon, consolidate, save-session.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {path, calls: [{time, agent, purpose, provider, model, input_tokens, "
              "output_tokens, duration_s, outcome, error, tool_calls}]}.")
@pass_state
def logs_command(state: State, count: int, purpose: str | None, as_json: bool) -> None:
    """The chat-model calls soulframe made — heartbeat, boot, flush, summon, consolidate,
    save-session: when, which model, tokens in and out, how long, and the outcome. Never
    the prompt or the reply; secrets in errors are masked. Kept logs.retention_days (90);
    logs.enabled = false turns the log off.

    \b
      soulframe logs
      soulframe logs --purpose heartbeat -n 5 --json
    """
    from ..calllog import entries, log_path

    agent = state.agent()
    path = log_path(agent)
    calls = [e for e in entries(path)
             if e.get("agent") == agent.id and (purpose is None or e.get("purpose") == purpose)]
    calls = calls[-count:]
    if as_json:
        echo_json({"path": str(path), "calls": calls})
        return
    if not calls:
        click.echo(f"no chat-model calls logged{f' for {purpose}' if purpose else ''} ({path})")
        return
    rows = [(str(c.get("time", "")).replace("+00:00", "Z"), str(c.get("purpose", "")),
             f"{c.get('provider', '')}/{c.get('model', '')}",
             _num(c.get("input_tokens")), _num(c.get("output_tokens")),
             f"{float(c.get('duration_s') or 0):.1f}s",
             "ok" if c.get("outcome") == "ok" else f"error: {c.get('error', '')}")
            for c in calls]
    head = ("time", "purpose", "model", "in", "out", "took", "outcome")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    right = {3, 4, 5}
    for r in [head, *rows]:
        cells = [r[i].rjust(w) if i in right else r[i].ljust(w) for i, w in enumerate(widths)]
        click.echo(("  ".join(cells) + "  " + r[-1]).rstrip())


def _num(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"
