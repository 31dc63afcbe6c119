"""The commands: ``import``, ``export`` and ``forget``."""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from soulframe import SoulframeError
from soulframe.cli import State, echo_json, pass_state

from .names import SOURCES


def add_commands(cli: click.Group) -> None:
    cli.add_command(import_command)
    cli.add_command(export_command)
    cli.add_command(forget_command)


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal (never in ``--json`` output)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    holder: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in holder:
            holder["bar"] = click.progressbar(length=max(total, 1), label=label, file=sys.stderr)
            holder["bar"].__enter__()
            holder["done"] = 0
        holder["bar"].update(done - holder["done"])
        holder["done"] = done

    try:
        yield update
    finally:
        if "bar" in holder:
            holder["bar"].__exit__(None, None, None)


# --------------------------------------------------------------------------- import


@click.command("import")
@click.argument("source", type=click.Choice(SOURCES))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Read everything and report what would be imported; write nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as JSON: {source, dry_run, imported, messages, updated, duplicates, "
                   "refused, forgotten, unreadable, files, notes, config: {mapped, unmapped}}.")
@pass_state
def import_command(state: State, source: str, path: Path, dry_run: bool, as_json: bool) -> None:
    """Bring your history in from another assistant.

    \b
    SOURCE is one of:
      chatgpt      ChatGPT's data export: conversations.json (or its folder); only the
                   branch you last saw of an edited conversation
      claude       the Claude.ai data export's conversations.json
      claude-code  ~/.claude (session transcripts, CLAUDE.md files) or one .jsonl
      codex        ~/.codex (session rollouts, AGENTS.md files) or one .jsonl
      openclaw     an OpenClaw home: workspace/ as it is, openclaw.json mapped to
                   soulframe.toml (every key without an equivalent is listed)
      soulframe    an archive written by `soulframe export`

    Exits with status 1 when nothing could be read (the report names each file and why).

    Conversations become dated history under memory/ (one file per conversation,
    `Speaker: text` lines with their provenance, the conversation's own dates), never
    MEMORY.md: consolidation decides what is promoted. Every message passes the
    write-time checks (refused ones are quarantined); importing again adds nothing; what
    `soulframe forget` removed stays out.

    \b
      soulframe import chatgpt ~/Downloads/chatgpt-export/ --dry-run
      soulframe import openclaw ~/.openclaw
    """
    from .importer import run_import

    agent = state.agent()
    with progress_bar(f"import {source}", not as_json) as progress:
        report = run_import(agent, source, path, dry_run=dry_run, progress=progress)
    if as_json:
        echo_json(report.to_dict())
    else:
        for line in report.lines():
            click.echo(line)
    if report.nothing_read:
        raise click.exceptions.Exit(1)  # for scripts: nothing could be read (the report says why)


# --------------------------------------------------------------------------- export


@click.command("export")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@pass_state
def export_command(state: State, out: Path, force: bool, as_json: bool) -> None:
    """Write the workspace's files to one archive (.tar.gz) with a manifest (versions,
    sizes, sha256 checksums); provenance stays in the Markdown. No index, no database, no
    configuration (soulframe.toml can hold API keys), no hidden files. Restore it with
    `soulframe import soulframe OUT` into a new workspace.

    \b
      soulframe export ~/soulframe-2026-11-26.tar.gz
    """
    from .archive import export

    if not out.name.endswith((".tar.gz", ".tgz")):
        # the archive is a gzipped tar whatever the name says; a .zip would not open as one
        raise SoulframeError(f"export: {out}: name the archive .tar.gz (it is a gzipped tar)")
    if out.exists() and not force:
        raise SoulframeError(f"export: {out} exists (--force overwrites it)")
    agent = state.agent()
    with progress_bar("export", not as_json) as progress:
        manifest = export(agent, out, progress)
    if as_json:
        echo_json({"archive": str(out), **manifest})
        return
    size = sum(f["size"] for f in manifest["files"])
    click.echo(f"{out}: {len(manifest['files'])} file(s), {size:,} bytes; left out: {manifest['left_out']}")


# --------------------------------------------------------------------------- forget


def _date(_ctx: Any, _param: Any, value: str | None) -> _dt.date | None:
    if value is None:
        return None
    try:
        return _dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected YYYY-MM-DD") from None


@click.command("forget")
@click.argument("text", required=False)
@click.option("--query", "-q", help="Forget the lines of the best memory-search hits that contain the query's words.")
@click.option("--file", "file_", metavar="PATH", help="Forget a whole memory file (memory/….md or MEMORY.md).")
@click.option("--since", callback=_date, metavar="YYYY-MM-DD", help="Forget dated history from this day on.")
@click.option("--until", callback=_date, metavar="YYYY-MM-DD", help="Forget dated history up to this day.")
@click.option("--limit", default=6, show_default=True, help="How many search hits --query looks at.")
@click.option("--everywhere", is_flag=True,
              help="Also remove matching lines outside memory: AGENTS.md, SOUL.md, TOOLS.md, skills ... "
                   "(by default those are listed and left as they are).")
@click.option("--dry-run", is_flag=True, help="List what would be forgotten; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {entries: [...], files, user_entries: [{user, path, line, text}], kept, result}.")
@pass_state
def forget_command(state: State, text: str | None, query: str | None, file_: str | None,
                   since: _dt.date | None, until: _dt.date | None, limit: int, everywhere: bool,
                   dry_run: bool, yes: bool, as_json: bool) -> None:
    """Forget memory entries everywhere soulframe copied them.

    An entry is a line of memory (MEMORY.md, memory/, saved sessions, extra paths) or of
    USER.md: every line containing TEXT (ignoring case), the matching lines of the best hits
    for --query, a whole --file, or dated history between --since and --until. A matching
    line of the agent's instructions, identity or skills (AGENTS.md, SOUL.md, skills/ ...)
    is listed and left as it is, unless --everywhere. Removed from the Markdown, the full-text index,
    the vectors and the embedding cache, recall tracking, the consolidation diary and undo
    snapshots, the quarantine; the index is compacted so the bytes are gone from the
    database and its log. A tombstone (a hash, never the text) keeps a later import from
    bringing it back. What soulframe cannot reach (the git history of `soulframe backup`,
    the export it came from) is listed, with the command that would rewrite it.

    \b
      soulframe forget "old flat's door code" --dry-run
      soulframe forget --query "my ex" --yes
      soulframe forget --since 2023-01-01 --until 2023-12-31
    """
    from .forget import forget, select

    if not any(x is not None for x in (text, query, file_, since, until)):
        raise click.UsageError("say what to forget: TEXT, --query, --file or --since/--until")
    agent = state.agent()
    plan = select(agent, text=text, query=query, file=file_, since=since, until=until, limit=limit,
                  everywhere=everywhere)
    listing = {"entries": [e.to_dict() for e in plan.entries], "files": plan.files,
               "user_entries": [e.to_dict() for e in plan.user_entries],
               "kept": [e.to_dict() for e in plan.kept]}
    if plan.kept and not as_json:
        click.secho(f"left as is (not memory; --everywhere removes these too): {len(plan.kept)} line(s)",
                    fg="yellow", err=True)
        for e in plan.kept:
            click.secho(f"  {e.path}:{e.line}  {e.text.strip()[:160]}", fg="yellow", err=True)
    if not plan:
        if as_json:
            echo_json({**listing, "result": None})
        else:
            click.echo("nothing matches: nothing to forget")
        return
    if dry_run or not as_json:
        if not as_json:
            for rel in plan.files:
                click.echo(f"file  {rel}")
            for e in plan.entries:
                if e.path not in plan.files:
                    click.echo(f"{e.path}:{e.line}  {e.text.strip()[:160]}")
            for u in plan.user_entries:
                click.echo(f"user {u.user}: {u.path}:{u.line}  {u.text.strip()[:160]}")
            n = len(plan.entries) + len(plan.user_entries)
            places = {e.path for e in plan.entries} | {(u.user, u.path) for u in plan.user_entries}
            click.echo(f"{n} entr{'y' if n == 1 else 'ies'} in {len(places)} file(s)")
        if dry_run:
            if as_json:
                echo_json({**listing, "result": None, "dry_run": True})
            return
    if not yes:
        if not sys.stdin.isatty():
            raise SoulframeError("forget: not a terminal to ask on; pass --yes to forget, or --dry-run to look")
        # on stderr with --json: stdout holds the one JSON answer, the plan or the refusal
        click.confirm("Forget these everywhere? This cannot be undone", abort=True, err=as_json)
    result = forget(agent, plan)
    if as_json:
        echo_json({**listing, "result": result.to_dict()})
        return
    click.echo(f"forgotten: {result.entries} entr{'y' if result.entries == 1 else 'ies'}; "
               f"{len(result.files_changed)} file(s) rewritten, {len(result.files_removed)} removed")
    for place, n in sorted(result.scrubbed.items()):
        click.echo(f"  {place}: {n} removed")
    if result.store:
        click.echo("  index: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in result.store.items())
                   + " erased; compacted")
    click.echo(f"  tombstones: {result.tombstones} added (hashes only)")
    for note in result.unreachable:
        click.secho(f"  not reached: {note}", fg="yellow")
