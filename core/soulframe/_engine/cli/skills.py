"""``soulframe skills``: list, search, show, scaffold and watch skills.

Imported when the CLI is built, so it imports nothing heavy: search pulls in numpy
only when ``skills search`` runs, watchdog only for ``skills watch``.
"""

from __future__ import annotations

import re
import time
import unicodedata
from typing import Any

import click

from ..graphemes import clip_columns, display_width, pad_columns
from ..model import Skill, SoulframeError
from .state import State, echo_json, pass_state

#: a skill's name is its folder's name: letters of any script and digits, with '.', '_'
#: and '-' inside (never a leading '.': no hidden folder, no '..')
_NAME_RE = re.compile(r"^[^\W_][\w.-]{0,63}$")


def _valid_name(name: str) -> bool:
    """:data:`_NAME_RE` with the combining marks of a word allowed after its first letter:
    Thai and Devanagari write vowels as marks (ประชุม, रिपोर्ट), which ``\\w`` does not
    match, and NFC leaves them apart."""
    plain = "".join("a" if i and unicodedata.category(c).startswith("M") else c
                    for i, c in enumerate(name))
    return _NAME_RE.fullmatch(plain) is not None


_TIERS = {"workspace": ("skills",), "project": (".agents", "skills")}

TEMPLATE = """---
{front_matter}
---

# {title}

Say when this skill applies (the description above is all the agent sees when choosing),
then what to do.

## Steps

1. First step: a concrete command or action.
2. What "done" looks like, and what to do when a step fails.

Files kept next to this SKILL.md are reachable as `{{baseDir}}/...`, for example
`{{baseDir}}/scripts/run.sh`.
"""


@click.group("skills")
def skills_group() -> None:
    """Skills: SKILL.md files found in five tiers, listed in the prompt or searched.

    \b
    Tiers, highest first (a higher tier overrides a same-named skill below):
      1 workspace  <workspace>/skills/
      2 project    <workspace>/.agents/skills/
      3 personal   skills.personal_dir  (~/.agents/skills)
      4 global     skills.global_dir    (~/.soulframe/skills) + skills.extra_dirs
      5 builtin    shipped with soulframe

    \b
    Quick start:
      soulframe skills new deploy-site -d "Deploy the site; use when asked to ship"
      soulframe skills list                 which tier won, what it shadows, problems
      soulframe skills search "ship the website"
      soulframe skills show deploy-site     the SKILL.md as the agent reads it
    Managed mode (PostgreSQL): publish, grant, revoke, grants, accessible.
    """


def _skill_row(skills: Any, skill: Any) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "tier": skill.tier,
        "tier_name": skill.tier_name,
        "location": str(skill.path),
        "shadows": [
            {"tier": s.tier, "tier_name": s.tier_name, "location": str(s.path)}
            for s in skills.shadowed(skill.name)
        ],
    }


@skills_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (skills, mode, problems).")
@pass_state
def list_command(state: State, as_json: bool) -> None:
    """List the effective skills: which tier each came from and what it shadows.

    \b
      soulframe -w ~/agent skills list
      soulframe -w ~/agent skills list --json
    """
    skills = state.agent().skills
    snap = skills.snapshot()
    rows = [_skill_row(skills, s) for s in snap.skills]
    mode = skills.mode()
    if as_json:
        echo_json({
            "skills": rows,
            "mode": mode,
            "problems": [{"path": p.path, "message": p.message} for p in snap.problems],
        })
        return
    if not rows:
        click.echo("no skills found (create one with `soulframe skills new NAME`)")
    width = max((display_width(r["name"]) for r in rows), default=0)
    for r in rows:
        tier = f"{r['tier']} {r['tier_name']}"
        line = f"{pad_columns(r['name'], width)}  {tier:<12}  {_clip(r['description'], 70)}"
        click.echo(line.rstrip())
        for s in r["shadows"]:
            click.echo(f"{'':<{width}}  shadows {s['tier']} {s['tier_name']}: {s['location']}")
    click.echo(
        f"{len(rows)} skill{'s' if len(rows) != 1 else ''}; prompt mode: {mode}"
        + (f"; {len(snap.problems)} skipped (see warnings)" if snap.problems else "")
    )


@skills_group.command("search")
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 100), default=None, help="How many results (default skills.max_results).")
@click.option("--keyword-only", is_flag=True, help="BM25 only, even when embeddings are available.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of {name, description, score, text_score, vector_score, ...}.")
@pass_state
def search_command(state: State, query: str, k: int | None, keyword_only: bool, as_json: bool) -> None:
    """Search skills by name, description and headings (BM25, + embeddings when on).

    Prints one skill a line, best first: score, name, description.

    \b
      soulframe skills search "deploy the website"
      soulframe skills search 報告 --keyword-only --json
    """
    hits = state.agent().skills.search(query, k, semantic=False if keyword_only else None)
    if as_json:
        echo_json([h.to_dict() for h in hits])
        return
    if not hits:
        click.echo(f"no skill matches {query!r}")
        return
    width = max(display_width(h.name) for h in hits)
    for h in hits:
        click.echo(f"{h.score:7.3f}  {pad_columns(h.name, width)}  {_clip(h.description, 70)}")


@skills_group.command("show")
@click.argument("name")
@click.option("--raw", is_flag=True, help="Print only the SKILL.md text ({baseDir} substituted).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {name, description, tier, tier_name, path, shadows, text}.")
@pass_state
def show_command(state: State, name: str, raw: bool, as_json: bool) -> None:
    """Print a skill's SKILL.md with {baseDir} replaced, and where it came from.

    \b
      soulframe -w ~/agent skills show trip-planner
      soulframe -w ~/agent skills show trip-planner --raw
    """
    skills = state.agent().skills
    text = skills.read(name)
    skill = skills.get(name)
    if as_json and skill is not None:
        echo_json({"name": skill.name, "description": skill.description, "tier": skill.tier,
                   "tier_name": skill.tier_name, "path": str(skill.path),
                   "shadows": [{"tier": s.tier, "tier_name": s.tier_name, "path": str(s.path)}
                               for s in skills.shadowed(name)],
                   "text": text})
        return
    if not raw and skill is not None:
        click.secho(f"# {skill.name} — tier {skill.tier} ({skill.tier_name})", bold=True, err=False)
        click.echo(f"# location: {skill.path}")
        for s in skills.shadowed(name):
            click.echo(f"# shadows: tier {s.tier} ({s.tier_name}) {s.path}")
        click.echo()
    click.echo(text.rstrip("\n"))


@skills_group.command("new")
@click.argument("name")
@click.option("--description", "-d", required=True,
              help="One line: what the skill does and when to use it (the model picks skills by it).")
@click.option("--tier", type=click.Choice(sorted(_TIERS)), default="workspace", show_default=True,
              help="workspace = <workspace>/skills/, project = <workspace>/.agents/skills/.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {path, name, tier, wins, overrides}.")
@pass_state
def new_command(state: State, name: str, description: str | None, tier: str, as_json: bool) -> None:
    """Scaffold a new skill: <tier dir>/NAME/SKILL.md with valid front matter.

    \b
      soulframe -w ~/agent skills new trip-planner -d "Plan train trips across Europe"
      soulframe -w ~/agent skills new release-notes -d "Draft release notes from merged PRs" --tier project
    """
    import yaml

    from ..skills.loader import SKILL_FILE, parse_skill_text
    from ..workspace import create_exclusive, ensure_private_dir

    name = unicodedata.normalize("NFC", name)  # one spelling, as the loader reads names
    if not _valid_name(name):
        raise SoulframeError(
            f"skill name {name!r}: use 1-64 letters (of any script), digits, '.', '_' or '-', "
            "starting with a letter or digit (e.g. deploy-site, café-notes)"
        )
    agent = state.agent()
    desc = " ".join((description or "").split())
    if not desc:
        raise SoulframeError("--description is empty: say in one line what the skill does and when to use it")
    rel = "/".join((*_TIERS[tier], name, SKILL_FILE))
    path = agent.workspace.resolve(rel)
    ensure_private_dir(agent.root)
    for parent in reversed(path.parents):
        if agent.workspace.contains(parent) and not parent.exists():
            ensure_private_dir(parent)
    front = yaml.safe_dump({"name": name, "description": desc}, sort_keys=False,
                           allow_unicode=True, width=10_000).strip()
    title = name.replace("-", " ").replace("_", " ").capitalize()
    text = TEMPLATE.format(front_matter=front, title=title)
    parsed = parse_skill_text(text, path)
    if not isinstance(parsed, Skill):  # cannot happen for a valid name; never write a bad file
        raise SoulframeError(f"internal error: the scaffold does not parse: {parsed}")
    if not create_exclusive(path, text):
        raise SoulframeError(f"{path} already exists; edit it, or pick another name")
    skills = agent.skills
    skills.reload()
    winner = skills.get(name)
    if as_json:
        echo_json({"path": str(path), "name": name, "tier": tier,
                   "wins": winner is not None and winner.path == path,
                   "overrides": [str(s.path) for s in skills.shadowed(name) if s.path != path]})
        return
    click.echo(f"created {path}")
    if winner is not None and winner.path != path:
        click.secho(f"note: {winner.tier_name} skill {winner.path} has the same name and a "
                    "higher tier; it wins", fg="yellow")
    for s in skills.shadowed(name):
        if s.path != path:
            click.echo(f"it overrides tier {s.tier} ({s.tier_name}) {s.path}")
    if description is None:
        click.echo("next: write its description (what it does and when to use it), then the steps")


@skills_group.command("watch")
@click.option("--duration", type=float, default=None, metavar="SECONDS",
              help="Stop after this many seconds (default: until Ctrl-C).")
@pass_state
def watch_command(state: State, duration: float | None) -> None:
    """Watch every skill root and print each hot reload (added, changed, removed).

    \b
      soulframe -w ~/agent skills watch
      soulframe -w ~/agent skills watch --duration 60
    """
    import queue

    skills = state.agent().skills
    events: queue.Queue[Any] = queue.Queue()
    watcher = skills.watch(events.put)
    roots = [s.root for s in skills.snapshot().sources if s.root is not None]
    click.echo(f"watching {len(roots)} skill roots ({len(skills)} skills); Ctrl-C to stop")
    for root in roots:
        click.echo(f"  {root}{'' if root.exists() else '  (not there yet)'}")
    deadline = None if duration is None else time.monotonic() + duration
    try:
        while deadline is None or time.monotonic() < deadline:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            try:
                ev = events.get(timeout=wait)
            except queue.Empty:
                continue
            parts = [f"+{n}" for n in ev.added] + [f"~{n}" for n in ev.changed] + [f"-{n}" for n in ev.removed]
            click.echo(f"reload v{ev.version}: {' '.join(parts) if parts else 'no skill changed'}"
                       f" ({len(skills)} skills, mode {skills.mode()})")
    except KeyboardInterrupt:
        pass
    finally:
        skills.stop_watching()
        del watcher


def _clip(text: str, width: int) -> str:
    return clip_columns(text, width)
