"""The offline model's weights in their final in-memory layout, memory-mapped.

Reading ``model.safetensors`` and rearranging it for the forward pass (a copy and a
transpose of every matrix, Q/K/V fused: :func:`.minilm.arrange`) was most of a cold start:
each ``soulframe memory search`` process paid it again. The arranged tensors are written
once to ``<user cache dir>/soulframe/models/<source>-<key>.weights`` (mode 0600) and later
processes memory-map that file: nothing is copied, the pages are shared between processes
through the OS page cache, and a query reads only the rows of the word-embedding table its
word pieces need.

The file is keyed by the weights it was built from: the resolved path, size, mtime and inode
of ``model.safetensors`` and the contents of ``config.json``. Any change to them builds a new
file (and removes the stale one). A file that is truncated, does not parse, or was built
from other weights is rebuilt; a cache directory that cannot be written only costs the
speed-up (the weights are then arranged in memory, as before).

When the weights are the pinned all-MiniLM-L6-v2, building the cache also checks the
SHA-256 of ``model.safetensors`` against the pin: a tampered or damaged file is refused
rather than cached.

Layout: a 16-byte magic, a little-endian u64 header length, a JSON header (key, sha256,
tensors as ``[name, offset, shape]``, data size), padding to 64 bytes, then the float32
little-endian tensors, each 64-byte aligned.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from .minilm import F32, BertConfig, arrange, read_safetensors

log = logging.getLogger("soulframe.embeddings")

MAGIC = b"SOULFRAME-W\x00v1\x00\x00"
assert len(MAGIC) == 16
ALIGN = 64
#: bumped when :func:`.minilm.arrange` changes what it produces
LAYOUT_VERSION = 1


class WeightsMismatchError(ValueError):
    """``model.safetensors`` is not the file its pinned SHA-256 says it should be."""


@attrs.frozen
class CacheResult:
    """The arranged tensors and what the cache did to provide them."""

    tensors: Mapping[str, F32]
    #: "hit" (memory-mapped), "built" (no file yet), "rebuilt" (the file was unusable),
    #: "off" (no cache directory), "unwritable" (arranged in memory; the file could not be written)
    status: str
    path: Path | None


def default_dir() -> Path:
    """``<user cache dir>/soulframe/models`` (``$XDG_CACHE_HOME/soulframe/models`` on Linux,
    ``$SOULFRAME_HOME/cache/models`` when set)."""
    from soulframe.kit import cache_dir

    return cache_dir() / "models"


def cache_key(model_dir: Path) -> str:
    """What the cache file is keyed by (cheap: one stat and a small read, no hashing of the
    weights)."""
    weights = model_dir / "model.safetensors"
    st = weights.stat()
    h = hashlib.sha256()
    h.update(f"layout={LAYOUT_VERSION};path={weights.resolve()};size={st.st_size};"
             f"mtime={st.st_mtime_ns};ino={st.st_ino};".encode())
    h.update((model_dir / "config.json").read_bytes())
    return h.hexdigest()


def cache_path(directory: Path, model_dir: Path, key: str) -> Path:
    source = hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:12]
    return directory / f"{source}-{key[:24]}.weights"


def load(
    model_dir: Path,
    config: BertConfig,
    *,
    directory: Path | None,
    expected_sha256: str | None = None,
) -> CacheResult:
    """The arranged tensors of the model in ``model_dir``: memory-mapped from the cache when
    a valid file is there, else read, arranged, written to the cache and memory-mapped."""
    if directory is None:
        return CacheResult(_arrange_from(model_dir, config, expected_sha256)[0], "off", None)
    key = cache_key(model_dir)
    path = cache_path(directory, model_dir, key)
    status = "built"
    if path.exists():
        tensors = read(path, key)
        if tensors is not None:
            return CacheResult(tensors, "hit", path)
        status = "rebuilt"
        log.info("the weight cache %s is unusable; rebuilding it", path)
    arranged, sha = _arrange_from(model_dir, config, expected_sha256)
    try:
        write(path, key, sha, arranged)
    except OSError as exc:
        log.info("cannot write the weight cache %s (%s); the weights stay in memory", path, exc)
        return CacheResult(arranged, "unwritable", None)
    _remove_stale(path)
    mapped = read(path, key)
    if mapped is None:  # pragma: no cover - a file we just wrote and cannot read back
        return CacheResult(arranged, "unwritable", None)
    return CacheResult(mapped, status, path)


def _arrange_from(model_dir: Path, config: BertConfig, expected_sha256: str | None) -> tuple[dict[str, F32], str]:
    weights = model_dir / "model.safetensors"
    sha = file_sha256(weights)
    if expected_sha256 is not None and sha != expected_sha256:
        raise WeightsMismatchError(
            f"{weights}: SHA-256 {sha} does not match the pinned {expected_sha256} "
            "(damaged or replaced weights); reinstall with `soulframe models install --force`"
        )
    return arrange(config, read_safetensors(weights)), sha


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def write(path: Path, key: str, sha256: str, tensors: Mapping[str, F32]) -> None:
    """Write the cache file atomically (a temporary file renamed over it), mode 0600."""
    entries: list[list[Any]] = []
    offset = 0
    for name, arr in tensors.items():
        entries.append([name, offset, list(arr.shape)])
        offset += _aligned(arr.size * 4)
    header = json.dumps({"key": key, "sha256": sha256, "tensors": entries, "data_bytes": offset},
                        separators=(",", ":")).encode()
    head = MAGIC + struct.pack("<Q", len(header)) + header
    head += b"\x00" * (_aligned(len(head)) - len(head))
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".weights", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.chmod(tmp, 0o600)
            f.write(head)
            for arr in tensors.values():
                data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
                f.write(data)
                f.write(b"\x00" * (_aligned(len(data)) - len(data)))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path, key: str) -> dict[str, F32] | None:
    """The memory-mapped tensors of a cache file, or ``None`` when it is unusable
    (truncated, not a cache file, built from other weights)."""
    try:
        with path.open("rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    try:
        if len(mm) < len(MAGIC) + 8 or mm[: len(MAGIC)] != MAGIC:
            return None
        (size,) = struct.unpack_from("<Q", mm, len(MAGIC))
        start = len(MAGIC) + 8
        if size > len(mm) - start:
            return None
        header = json.loads(bytes(mm[start : start + size]))
        if header.get("key") != key:
            return None
        data = _aligned(start + size)
        if data + int(header["data_bytes"]) != len(mm):
            return None
        out: dict[str, F32] = {}
        for name, offset, shape in header["tensors"]:
            count = 1
            for dim in shape:
                count *= int(dim)
            if offset < 0 or data + offset + count * 4 > len(mm):
                return None
            arr = np.frombuffer(mm, dtype="<f4", count=count, offset=data + offset).reshape(shape)
            out[str(name)] = arr
        return out
    except (ValueError, KeyError, TypeError, struct.error):
        return None


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _remove_stale(current: Path) -> None:
    """Cache files of the same source built from earlier weights."""
    prefix = current.name.split("-", 1)[0] + "-"
    for other in current.parent.glob(f"{prefix}*.weights"):
        if other != current:
            try:
                other.unlink(missing_ok=True)
            except OSError:  # still mapped by a running process (Windows): next time
                pass
