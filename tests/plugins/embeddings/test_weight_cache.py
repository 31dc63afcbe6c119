"""The offline model's arranged weights, cached and memory-mapped (soulframe_embeddings.weightcache)."""

from __future__ import annotations

import mmap
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from soulframe._engine.embedding import EmbeddingUnavailableError
from soulframe_embeddings import weights as W
from soulframe_embeddings.local import LocalProvider

pytestmark = pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")

TEXTS = [
    "Tomas keeps his spare house key under the blue flowerpot",
    "how do I get into his place if he's away",
    "Dr Okafor moved the knee appointment to 3 December",
    "hello world",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """Vectors from the weights arranged in memory, no cache involved."""
    return LocalProvider(weight_cache=False).embed_documents(TEXTS)


def _mapped(arr: np.ndarray) -> bool:
    """Whether the array's memory is a memory-mapped file."""
    base: object = arr
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return isinstance(base, mmap.mmap)


def _cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.weights"))


def test_the_cache_is_built_once_then_memory_mapped_with_the_same_vectors(tmp_path: Path, reference: np.ndarray) -> None:
    first = LocalProvider(cache_dir=tmp_path)
    np.testing.assert_allclose(first.embed_documents(TEXTS), reference, atol=1e-6)
    assert first.weight_cache_status == "built"
    [cached] = _cache_files(tmp_path)
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    built_at = cached.stat().st_mtime_ns

    second = LocalProvider(cache_dir=tmp_path)
    np.testing.assert_allclose(second.embed_documents(TEXTS), reference, atol=1e-6)
    assert second.weight_cache_status == "hit"
    assert cached.stat().st_mtime_ns == built_at  # read, not rewritten
    encoder = second._load().encoder
    assert _mapped(encoder.word) and _mapped(encoder.layers[0].qkv_w)
    assert not encoder.word.flags.writeable


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "other-weights"])
def test_a_corrupt_cache_file_is_rebuilt(tmp_path: Path, reference: np.ndarray, damage: str) -> None:
    LocalProvider(cache_dir=tmp_path).embed_query("warm up")
    [cached] = _cache_files(tmp_path)
    data = cached.read_bytes()
    if damage == "truncated":
        cached.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        cached.write_bytes(b"\x00garbage" * 1000)
    elif damage == "empty":
        cached.write_bytes(b"")
    else:  # a valid file built from other weights: the key in its header differs
        key_at = data.index(b'"key":"') + len(b'"key":"')
        cached.write_bytes(data[:key_at] + b"0" * 8 + data[key_at + 8 :])
    provider = LocalProvider(cache_dir=tmp_path)
    np.testing.assert_allclose(provider.embed_documents(TEXTS), reference, atol=1e-6)
    assert provider.weight_cache_status == "rebuilt"
    assert len(_cache_files(tmp_path)) == 1
    again = LocalProvider(cache_dir=tmp_path)
    again.embed_query("x")
    assert again.weight_cache_status == "hit"


def test_changed_weights_get_a_new_cache_and_the_stale_one_goes(tmp_path: Path) -> None:
    source = LocalProvider().weights.path
    assert source is not None
    model = tmp_path / "model"
    model.mkdir()
    for name in W.REQUIRED_FILES:
        (model / name).symlink_to(source / name)
    cache = tmp_path / "cache"
    LocalProvider(str(model), cache_dir=cache).embed_query("x")
    [old] = _cache_files(cache)
    # the user replaces the weights with their own copy (here the same bytes, a new file)
    (model / "model.safetensors").unlink()
    (model / "model.safetensors").write_bytes((source / "model.safetensors").read_bytes())
    provider = LocalProvider(str(model), cache_dir=cache)
    provider.embed_query("x")
    assert provider.weight_cache_status == "built"
    [new] = _cache_files(cache)
    assert new != old and not old.exists()


def test_an_unwritable_cache_directory_only_costs_the_speed_up(tmp_path: Path, reference: np.ndarray) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    provider = LocalProvider(cache_dir=blocked / "cache")
    np.testing.assert_allclose(provider.embed_documents(TEXTS), reference, atol=1e-6)
    assert provider.weight_cache_status == "unwritable"


def test_tampered_pinned_weights_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a downloaded copy whose model.safetensors was altered after the download
    source = LocalProvider().weights.path
    assert source is not None
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    copy = W.downloaded_dir()
    copy.mkdir(parents=True)
    for name in ("tokenizer.json", "config.json"):
        (copy / name).write_bytes((source / name).read_bytes())
    data = bytearray((source / "model.safetensors").read_bytes())
    data[-100] ^= 0x01  # one bit of one weight
    (copy / "model.safetensors").write_bytes(bytes(data))
    provider = LocalProvider(cache_dir=tmp_path / "cache")
    assert provider.weights.path == copy and provider.weights.sha256 == W.FILE_SHA256["model.safetensors"]
    with pytest.raises(EmbeddingUnavailableError, match="does not match the pinned"):
        provider.embed_query("x")
    assert _cache_files(tmp_path / "cache") == []
    assert os.path.exists(copy / "model.safetensors")  # the user's file is left alone
