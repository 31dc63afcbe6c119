"""Several agents on one host (seed 003 §5.4, §8.7): describing every configured agent, and
adding one to the config file.

Adding is a text append of one ``[[agents]]`` block (comments and layout of the file are
kept), validated with :func:`soulframe.kit.load_config` on a temporary copy before the
real file is replaced, so a failed add never leaves a broken config behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import tomllib
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import AgentSpec, Config, ConfigError, SoulframeError
from soulframe.kit import ensure_private_dir, load_config, user_config_dir

if TYPE_CHECKING:
    # what the listing shows (discovered files, where the store keeps them) is the engine's own view
    from soulframe import Agent

#: the id rule of soulframe._engine.config (an agent id becomes a file name in the state dir)
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
#: files a workspace needs before it counts as initialised (as `soulframe doctor` says)
CORE_FILES: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md")


# --------------------------------------------------------------------------- listing


def describe_agents(config: Config, pm: Any = None) -> list[dict[str, Any]]:
    """One row per configured agent: id, type, workspace, whether it exists and is
    initialised, the resolved identity and where its name came from, and the memory
    index as far as it can be seen without building anything."""
    return [describe_agent(config, spec, pm, is_default=i == 0) for i, spec in enumerate(config.agents)]


def describe_agent(config: Config, spec: AgentSpec, pm: Any = None, *, is_default: bool = False) -> dict[str, Any]:
    from soulframe import Agent

    root = Path(spec.workspace).expanduser().resolve()
    exists = root.is_dir()
    missing = [n for n in CORE_FILES if not (root / n).is_file()] if exists else list(CORE_FILES)
    row: dict[str, Any] = {
        "id": spec.id,
        "default": is_default,
        "type": spec.type,
        "workspace": str(root),
        "exists": exists,
        "initialised": exists and not missing,
        "missing": missing,
        "identity": None,
        "identity_source": None,
        "memory": None,
        "problems": [],
    }
    agent = Agent(config, agent_id=spec.id, pm=pm)
    try:
        try:
            from soulframe.kit import explain_identity

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # `soulframe doctor` reports file problems
                report = explain_identity(agent)
            ident = report.identity
            row["identity"] = {"name": ident.name, "emoji": ident.emoji, "avatar": ident.avatar,
                               "creature": ident.creature, "vibe": ident.vibe}
            row["identity_source"] = report.sources["name"]
        except (SoulframeError, OSError) as exc:
            row["problems"].append(f"identity: {exc}")
        try:
            row["memory"] = memory_summary(agent)
        except (SoulframeError, OSError) as exc:
            row["problems"].append(f"memory: {exc}")
    finally:
        agent.close()
    return row


def memory_summary(agent: Agent) -> dict[str, Any]:
    """Memory files and the index, without creating an index or loading a model.

    ``index`` is ``"disabled"``, ``"not built"`` (no index file yet: the first search or
    ``soulframe memory index`` builds it), ``"ok"`` or ``"not probed"`` (a store that is not
    a local file: opening it means connecting to a server, which a listing does not do)."""
    if not agent.config.get("memory.enabled"):
        return {"files": None, "index": "disabled"}
    files = agent.memory.files() if agent.root.is_dir() else []
    out: dict[str, Any] = {"files": len(files), "backend": str(agent.config.get("store.backend"))}
    path = agent.store_location()
    if path is None:
        return out | {"index": "not probed"}
    if not path.is_file():
        return out | {"index": "not built", "location": str(path)}
    store = agent.store
    stored = store.files()
    stale = stale_paths(files, stored)
    stats = store.stats()
    return out | {
        "index": "ok",
        "location": str(path),
        "indexed_files": stats.files,
        "chunks": stats.chunks,
        "embedded_chunks": stats.embedded_chunks,
        "stale": len(stale),
    }


def stale_paths(found: list[Any], stored: Mapping[str, Any]) -> list[str]:
    """Memory files new or changed since the index saw them, and indexed files now gone
    (the fast path of the index: size and mtime, no reading)."""
    stale: list[str] = []
    for mf in found:
        old = stored.get(mf.path)
        try:
            st = mf.abspath.stat()
        except OSError:
            continue
        if old is None or old.mtime_ns != st.st_mtime_ns or old.size != st.st_size:
            stale.append(mf.path)
    stale += sorted(set(stored) - {f.path for f in found})
    return stale


# --------------------------------------------------------------------------- adding


@attrs.frozen
class AddResult:
    """What ``soulframe agents add`` did."""

    agent_id: str
    workspace: Path
    agent_type: str
    config_path: Path
    created_config: bool
    #: an explicit ``[[agents]] id = "default"`` was written first, so the agent that was
    #: the default (implicitly) stays the default
    wrote_default: bool
    seeded: list[str] = attrs.field(factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.agent_id,
            "workspace": str(self.workspace),
            "type": self.agent_type,
            "config": str(self.config_path),
            "created_config": self.created_config,
            "wrote_default": self.wrote_default,
            "seeded": list(self.seeded),
        }


def toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def agent_entry(agent_id: str, workspace: Path | None, agent_type: str | None,
                identity: Mapping[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": agent_id}
    if workspace is not None:
        entry["workspace"] = str(workspace)
    if agent_type is not None:
        entry["type"] = agent_type
    if identity:
        entry["identity"] = dict(identity)
    return entry


def toml_block(entry: Mapping[str, Any], comment: str | None = None) -> str:
    lines = [f"# {comment}"] if comment else []
    lines.append("[[agents]]")
    for key, value in entry.items():
        if isinstance(value, Mapping):
            inner = ", ".join(f"{k} = {toml_string(str(v))}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {toml_string(str(value))}")
    return "\n".join(lines) + "\n"


def choose_config_file(current: Path | None) -> tuple[Path, bool]:
    """The file to add to: the config in use (``--config``, ``$SOULFRAME_CONFIG``,
    ``<workspace>/soulframe.toml`` or the user config dir's), else a new
    ``<user config dir>/soulframe.toml``. Returns (path, exists)."""
    if current is not None:
        return current, True
    return user_config_dir() / "soulframe.toml", False


def _raw(path: Path) -> tuple[str, dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a table/object")
    return text, data


def add_agent(
    config_file: Path,
    *,
    exists: bool,
    agent_id: str,
    workspace: Path,
    agent_type: str | None,
    identity: Mapping[str, str],
    known: Config,
    default_workspace: Path | None = None,
) -> tuple[Path, bool]:
    """Append an ``[[agents]]`` block for ``agent_id`` to ``config_file`` (creating it when
    ``exists`` is false). Returns (path, wrote_default).

    :param known: the configuration as loaded now, for the duplicate checks.
    :param default_workspace: written into the explicit default block when the default
        agent's workspace came from ``--workspace`` rather than the file.
    """
    if not AGENT_ID.fullmatch(agent_id):
        raise SoulframeError(
            f"agent id {agent_id!r}: use letters, digits, '-', '_' or '.' (at most 64, "
            "starting with a letter or digit)")
    ids = {a.id for a in known.agents}
    if agent_id in ids:
        raise SoulframeError(
            f"there is already an agent {agent_id!r} in {known.path or 'the configuration'}; "
            f"agents: {', '.join(sorted(ids))}")
    for a in known.agents:
        if Path(a.workspace).expanduser().resolve() == workspace:
            raise SoulframeError(
                f"{workspace} is already the workspace of agent {a.id!r}: each agent needs its own "
                "workspace, or their identities and memories would mix")
    text = ""
    data: dict[str, Any] = {}
    if exists:
        try:
            text, data = _raw(config_file)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{config_file}: cannot read it to add an agent ({exc})") from exc
    has_agents = bool(data.get("agents"))
    default_entry = None
    if not has_agents:
        # the first [[agents]] entry is the default agent: keep the one that was implicit
        default_entry = agent_entry("default", default_workspace, None, {})
    new_entry = agent_entry(agent_id, workspace, agent_type, identity)
    if config_file.suffix == ".json":
        agents = list(data.get("agents") or [])
        if default_entry is not None:
            agents.append(default_entry)
        agents.append(new_entry)
        new_text = json.dumps({**data, "agents": agents}, indent=2, ensure_ascii=False) + "\n"
    else:
        parts = [text.rstrip("\n") + "\n\n" if text.strip() else
                 "# soulframe configuration (see `soulframe config show`)\n\n"]
        if default_entry is not None:
            parts.append(toml_block(default_entry, "the default agent (the one used without --agent)")
                         + "\n")
        parts.append(toml_block(new_entry, f"added by `soulframe agents add {agent_id}`"))
        new_text = "".join(parts)
    _replace_validated(config_file, new_text, agent_id, workspace)
    return config_file, default_entry is not None


def _replace_validated(path: Path, text: str, agent_id: str, workspace: Path) -> None:
    """Write ``text`` next to ``path``, load it as a config, and only then move it into
    place (keeping the file's mode; a new file is 0600: configs may hold API keys)."""
    ensure_private_dir(path.parent)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        try:
            cfg = load_config(tmp, agent_id=agent_id)
        except ConfigError as exc:
            message = str(exc).replace(tmp, str(path))
            raise ConfigError(
                f"adding agent {agent_id!r} would make {path} invalid, so it was left unchanged: "
                f"{message}") from None
        got = cfg.agent(agent_id)
        # as the file has it: $SOULFRAME_WORKSPACE (like -w) puts the selected agent in
        # another workspace for a run, and load_config reads it whoever calls
        configured = got.configured_workspace if got.configured_workspace is not None else got.workspace
        if Path(configured).resolve() != workspace:  # pragma: no cover - a bug if reached
            raise ConfigError(f"{path}: agent {agent_id!r} did not load with workspace {workspace}")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
