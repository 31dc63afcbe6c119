"""``soulframe import SOURCE PATH``: one function per kind of source, one report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from soulframe import ConfigError, SoulframeError

from .history import HistoryWriter
from .names import SOURCES
from .report import ImportReport
from .sources import READERS, Conversation, MemoryFileIn, Unreadable

if TYPE_CHECKING:
    from soulframe import AgentLike

Progress = Callable[[int, int], None] | None


def run_import(agent: AgentLike, source: str, path: Path, *, dry_run: bool = False,
               progress: Progress = None) -> ImportReport:
    if not path.exists():
        raise SoulframeError(f"import {source}: {path}: no such file or directory")
    report = ImportReport(source, dry_run=dry_run)
    writer = HistoryWriter(agent, report, dry_run=dry_run)
    if source in READERS:
        for item in READERS[source](path, progress):
            if isinstance(item, Conversation):
                writer.conversation(item)
            elif isinstance(item, MemoryFileIn):
                writer.memory_file(item)
            elif isinstance(item, Unreadable):
                report.unreadable.append((item.where, item.why))
    elif source == "openclaw":
        _openclaw(agent, path, writer, report)
    elif source == "soulframe":
        _restore(agent, path, writer, report, progress)
    else:
        raise SoulframeError(f"import: unknown source {source!r} (one of {', '.join(SOURCES)})")
    if not dry_run:
        writer.tombstones.upgrade()  # the old unkeyed tombstones this import met, keyed now
        if report.files:
            agent.memory.sync()
    return report


def _openclaw(agent: AgentLike, home: Path, writer: HistoryWriter, report: ImportReport) -> None:
    from . import openclaw

    data: dict[str, object] = {}
    values: dict[str, object] = {}
    config = openclaw.find_config(home) if home.is_dir() else (home if home.suffix == ".json" else None)
    if config is not None:
        home = config.parent
        values, data = openclaw.map_config(config, report)
    else:
        report.notes.append(f"{home}: no openclaw.json: only the workspace files are imported")
    # the workspace first: a home whose workspace is refused changes nothing, config included
    src = openclaw.their_workspace(home, data)
    if src is None:
        raise SoulframeError(f"import openclaw: {home}: no workspace/ folder and no workspace files")
    if config is not None and values:
        _write_config(agent, values, config, writer, report)
    max_bytes = int(agent.config.get("memory.max_file_bytes"))
    openclaw.copy_workspace(src, writer, report, max_bytes)
    sessions = sorted(home.glob("agents/*/sessions/*.jsonl"))
    if sessions:
        report.notes.append(f"{len(sessions)} session transcript(s) under agents/*/sessions were not "
                            "imported: their daily logs and MEMORY.md are what OpenClaw kept of them")


def _write_config(agent: AgentLike, values: dict[str, object], source: Path,
                  writer: HistoryWriter, report: ImportReport) -> None:
    from soulframe.kit import atomic_write

    from .openclaw import to_toml

    # a value soulframe does not take (a mistyped time zone, a negative size) would make
    # every later command in this workspace fail on the file: each key is checked alone
    # first, one refused is left out and listed, and nothing is written that does not load
    values = dict(values)
    for key in sorted(values):
        why = _config_problem(agent, to_toml({key: values[key]}, source))
        if why is not None:
            del values[key]
            theirs = next((a for a, b, _v in report.mapped if b == key), key)
            report.mapped = [m for m in report.mapped if m[1] != key]
            report.unmapped.append((theirs, None, f"not accepted for {key}: {why}"))
    if not values:
        report.notes.append("no configuration written: soulframe takes none of the mapped values")
        return
    text = to_toml(values, source)
    why = _config_problem(agent, text)
    if why is not None:
        report.notes.append(f"the mapped configuration does not load ({why}): not written")
        return
    target = agent.workspace.root / "soulframe.toml"
    if target.exists() and target.read_text(encoding="utf-8", errors="replace") == text:
        report.notes.append("soulframe.toml already holds this configuration")
        return
    if target.exists():
        target = agent.workspace.root / "soulframe.openclaw.toml"
        report.notes.append(f"soulframe.toml exists: the mapped keys are in {target.name}; "
                            "merge what you want by hand")
    if writer.dry_run:
        report.notes.append(f"would write {target.name}")
        return
    atomic_write(target, text, mode=0o600)
    report.notes.append(f"configuration written to {target.name}")


def _config_problem(agent: AgentLike, text: str) -> str | None:
    """Why ``text`` does not load as a ``soulframe.toml``, or None; checked in a private
    temporary folder, so a dry run writes nothing of the workspace's either."""
    import re
    import tempfile

    from soulframe.kit import load_config

    with tempfile.TemporaryDirectory(prefix="soulframe-openclaw-") as tmp:
        path = Path(tmp) / "soulframe.toml"
        path.write_text(text, encoding="utf-8")
        try:
            load_config(path, workspace=agent.workspace.root, pm=agent.pm)
        except ConfigError as exc:  # said without the temporary file's name
            return re.sub(rf"^{re.escape(str(path))}(?: line \d+)?: ", "", str(exc))
    return None


def _restore(agent: AgentLike, archive: Path, writer: HistoryWriter, report: ImportReport,
             progress: Progress) -> None:
    """Your own files, back as they were: byte for byte, not through the write-time checks
    nor the tombstones (what a check or a forget would take out is said, not dropped)."""
    from soulframe.kit import atomic_write, ensure_private_dir
    from soulframe.memorykit import scan_for_unsafe

    from .archive import read

    # every member checked before the first is written: a damaged or hostile archive writes nothing
    _manifest, members = read(archive)
    root = agent.workspace.root
    state = Path(agent.state_dir).resolve()
    inside_state = [rel for rel, _d, _m in members
                    if (p := agent.workspace.resolve(rel).resolve()) == state or state in p.parents]
    if inside_state:
        raise SoulframeError(f"{archive}: refusing files that would land in the state directory "
                             f"{state}: {', '.join(inside_state)}")
    for i, (rel, data, mode) in enumerate(members, 1):
        path = agent.workspace.resolve(rel)
        blocked = next((p for p in path.parents if root in p.parents and p.exists() and not p.is_dir()), None)
        if blocked is not None:
            report.notes.append(f"{rel}: not restored: {blocked.relative_to(root).as_posix()} is a file here")
        elif path.exists() or path.is_symlink():
            if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
                report.duplicates += 1
            else:
                report.notes.append(f"{rel}: exists with other content: kept yours, not restored")
        else:
            report.imported += 1
            report.files.append(rel)
            text = data.decode("utf-8", errors="replace")
            found = sorted({f"{f.kind} ({f.name})" for f in scan_for_unsafe(text)})
            if found:
                report.notes.append(f"{rel}: restored as it was; the write-time checks would flag "
                                    f"{', '.join(found)}")
            forgotten = sum(1 for line in text.splitlines() if line.strip() and line in writer.tombstones)
            if forgotten:
                report.notes.append(f"{rel}: restored as it was, with {forgotten} line(s) forgotten since "
                                    "this export was made: `soulframe forget` them again")
            if not writer.dry_run:
                ensure_private_dir(path.parent)
                # the owner's bits only: a script stays runnable, nothing is setuid or
                # readable by others, whatever the manifest says
                atomic_write(path, data, mode=0o700 if mode & 0o111 else 0o600)
        if progress is not None:
            progress(i, len(members))  # files already here count as done too
    if not writer.dry_run and root.stat().st_mode & 0o077:
        root.chmod(0o700)  # as `soulframe init` makes it: `mkdir` leaves it readable by all
