"""``soulframe install`` / ``soulframe uninstall``: pip in soulframe's own environment (the
one ``soulframe`` runs from, which is what matters under pipx or ``uv tool``), then a report
of the plugins that appeared or went."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys

import click

from .state import echo_json


def plugin_names() -> dict[str, str]:
    """Plugin name -> distribution of every installed plugin, read afresh from disk."""
    from ..plugins import ordered_entry_points

    importlib.invalidate_caches()  # pip just changed site-packages under this process
    return {ep.name: ep.dist.name if ep.dist is not None else "?" for ep in ordered_entry_points()}


def pip_command(args: list[str]) -> list[str]:
    """pip for the interpreter soulframe runs on; ``uv pip`` for it in an environment that
    has no pip (``uv tool install`` makes those)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", *args]
    uv = shutil.which("uv")
    if uv is None:
        raise click.ClickException(
            f"pip is not installed in {sys.prefix} and uv is not on PATH: install pip there "
            f"({sys.executable} -m ensurepip) or use your tool's own command (pipx inject, "
            "uv tool install --with)")
    if args and args[0] == "uninstall":
        args = [a for a in args if a not in ("-y", "--yes")]  # uv does not ask
    return [uv, "pip", *args[:1], "--python", sys.executable, *args[1:]]


def _pip(args: list[str], as_json: bool) -> int:
    import subprocess  # here: every command registers this module, few run pip

    cmd = pip_command(args)
    # pip's own progress goes to the terminal; with --json it goes to stderr so stdout
    # holds only the report
    done = subprocess.run(cmd, stdout=sys.stderr if as_json else None)
    return done.returncode


def _report(before: dict[str, str], after: dict[str, str], code: int, as_json: bool) -> None:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    if as_json:
        echo_json({"pip_exit_code": code, "added": [{"plugin": n, "dist": after[n]} for n in added],
                   "removed": [{"plugin": n, "dist": before[n]} for n in removed]})
    else:
        for n in added:
            click.echo(f"+ plugin {n} (from {after[n]})")
        for n in removed:
            click.echo(f"- plugin {n} (was from {before[n]})")
        if not added and not removed and code == 0:
            click.echo("no plugin appeared or went")
    if code:
        raise SystemExit(code)


@click.command("install")
@click.argument("packages", nargs=-1)
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade the packages to their newest versions.")
@click.option("-e", "--editable", "editable", metavar="PATH", multiple=True,
              help="Install a plugin you are working on from its directory, in place.")
@click.option("--force-reinstall", is_flag=True, help="Reinstall even if already installed.")
@click.option("--no-deps", is_flag=True, help="Install the packages without their dependencies.")
@click.option("--no-build-isolation", is_flag=True,
              help="Build a plugin from source with the build tools already installed (offline).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {pip_exit_code, added, removed}.")
def install_command(packages: tuple[str, ...], upgrade: bool, editable: tuple[str, ...],
                    force_reinstall: bool, no_deps: bool, no_build_isolation: bool,
                    as_json: bool) -> None:
    """Install packages (plugins) into soulframe's own environment with pip, and say which
    plugins appeared.

    \b
      soulframe install ./examples/soulframe-quiet-hours
      soulframe install -e ./my-plugin
    """
    if not packages and not editable:
        raise click.UsageError("name at least one package (or -e PATH)")
    args = ["install", *packages]
    for path in editable:
        args += ["-e", path]
    args += ["--upgrade"] * upgrade + ["--force-reinstall"] * force_reinstall + ["--no-deps"] * no_deps
    args += ["--no-build-isolation"] * no_build_isolation
    before = plugin_names()
    code = _pip(args, as_json)
    _report(before, plugin_names(), code, as_json)


@click.command("uninstall")
@click.argument("packages", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {pip_exit_code, added, removed}.")
def uninstall_command(packages: tuple[str, ...], yes: bool, as_json: bool) -> None:
    """Uninstall packages (plugins) from soulframe's own environment, and say which plugins
    went. soulframe itself cannot be uninstalled this way.

    \b
      soulframe uninstall soulframe-quiet-hours
      soulframe uninstall soulframe-quiet-hours --yes --json
    """
    if any(p.lower().replace("_", "-") == "soulframe" for p in packages):
        raise click.UsageError("that would remove soulframe itself: use pip uninstall soulframe")
    if not yes and not sys.stdin.isatty():
        # pip would ask on a closed stdin and die with a traceback (EOFError)
        raise click.UsageError(
            "uninstall asks before removing a package, and there is no terminal to ask on: "
            "add -y (--yes) to confirm")
    before = plugin_names()
    code = _pip(["uninstall", *packages] + ["-y"] * yes, as_json)
    _report(before, plugin_names(), code, as_json)
