"""Memory: discovery, chunking, incremental sync, keyword search, visibility, get, daily
memory, tools, status. Real files, the real SQLite store; the vector tests that need the
offline model live in test_memory_model.py."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from soulframe import hookimpl
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.memory.files import Discovery
from soulframe._engine.memory.provenance import strip as unmarked
from soulframe._engine.memory.querying import query_terms
from soulframe._engine.model import (
    ConfigError,
    PathEscapeError,
    Registration,
    Session,
    SoulframeError,
)
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.workspace import Workspace
from soulframe.testing import make_agent

# --------------------------------------------------------------------------- helpers


class HashingProvider:
    """A small real embedding provider: words hashed into ``dims`` buckets, L2-normalised.
    Used where a test needs two different models (a model change) without a download."""

    name = "hashing"

    def __init__(self, dims: int = 16) -> None:
        self.dimensions = dims
        self.model_id = f"hashing-{dims}"
        self.calls: list[int] = []

    def available(self) -> bool:
        return True

    def embed_documents(self, texts: list[str]) -> Any:
        import numpy as np

        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.md5(w[:5].encode()).hexdigest(), 16) % self.dimensions] += 1.0
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else out[i]
        return out

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


def provider_plugin(provider: Any) -> Any:
    class Plugin:
        __name__ = f"test_provider_{id(provider)}"

        @hookimpl
        def register_embedding_providers(self) -> list[Registration]:
            return [Registration(provider.name, lambda agent: provider, "test provider")]

    return Plugin()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# MEMORY.md\n\n- Lease renewed 2026-09-21: $2,240/month, 13 months.\n"
        "- Car: 2019 Subaru Crosstrek, grey.\n"
    )
    (root / "memory" / "2026-08-01.md").write_text(
        "# 2026-08-01\n\n- Fixed the flaky login test in the portal repo.\n"
        "- Dinner at Lupine & Salt on Saturday.\n"
    )
    (root / "memory" / "2026-08-02.md").write_text(
        "# 2026-08-02\n\n- Vet visit for Biscuit: weight-control food from now on.\n"
    )
    (root / "SOUL.md").write_text("# SOUL.md\nBe kind.\n")
    return root


@pytest.fixture
def agent(ws: Path, tmp_path: Path) -> Any:
    a = make_agent(ws, seed=False, state_dir=tmp_path / "state")
    yield a
    a.close()


def quiet(fn: Any, *a: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


# --------------------------------------------------------------------------- discovery


def test_discovery_finds_memory_files_and_skips_the_rest(ws: Path, tmp_path: Path) -> None:
    (ws / "memory" / "projects" / "deep").mkdir(parents=True)
    (ws / "memory" / "projects" / "deep" / "heron.md").write_text("# heron\n")
    for skipped in (".git", "node_modules", ".hidden"):
        (ws / "memory" / skipped).mkdir()
        (ws / "memory" / skipped / "x.md").write_text("no\n")
    (ws / "memory" / ".draft.md").write_text("no\n")
    (ws / "memory" / "notes.txt").write_text("not markdown\n")
    outside = tmp_path / "outside.md"
    outside.write_text("secret outside\n")
    (ws / "memory" / "escape.md").symlink_to(outside)
    (ws / "memory" / "soul.md").symlink_to(ws / "SOUL.md")  # inside, but not memory
    (ws / "memory" / "alias.md").symlink_to(ws / "memory" / "2026-08-01.md")  # fine
    found = {f.path: f for f in Discovery(Workspace(ws)).files()}
    assert set(found) == {
        "MEMORY.md", "memory/2026-08-01.md", "memory/2026-08-02.md",
        "memory/projects/deep/heron.md", "memory/alias.md",
    }
    assert found["MEMORY.md"].private and not found["memory/2026-08-01.md"].private
    assert found["memory/2026-08-01.md"].day == "2026-08-01"
    assert found["memory/projects/deep/heron.md"].day is None


def test_lowercase_memory_md_and_extra_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "memory.md").write_text("lower\n")
    (ws / "notes" / "a.md").write_text("a\n")
    (ws / "TODO.txt").write_text("t\n")
    d = Discovery(Workspace(ws), ["notes", "TODO.txt"])
    found = {f.path: f.private for f in d.files()}
    assert found == {"memory.md": True, "notes/a.md": True, "TODO.txt": True}
    with pytest.raises(ConfigError, match="memory.extra_paths"):
        Discovery(Workspace(ws), ["../elsewhere"])


# --------------------------------------------------------------------------- sync


def test_first_sync_indexes_then_nothing_changes(agent: Any) -> None:
    r1 = quiet(agent.memory.sync)
    assert sorted(r1.added) == ["MEMORY.md", "memory/2026-08-01.md", "memory/2026-08-02.md"]
    assert r1.chunks == 3 and r1.model is None
    r2 = quiet(agent.memory.sync)
    assert (r2.added, r2.changed, r2.removed, r2.unchanged) == ([], [], [], 3)


def test_a_touched_but_unchanged_file_is_not_reindexed(agent: Any, ws: Path) -> None:
    quiet(agent.memory.sync)
    p = ws / "memory" / "2026-08-01.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 5_000_000_000))
    r = quiet(agent.memory.sync)
    assert r.changed == [] and r.unchanged == 3
    assert agent.store.files()["memory/2026-08-01.md"].mtime_ns == p.stat().st_mtime_ns


def test_a_same_size_edit_in_the_same_clock_tick_is_not_missed(agent: Any, ws: Path) -> None:
    """A note rewritten right after a sync read it, with the same size, within one tick of
    a coarse filesystem clock: mtime and size say "unchanged", the text is not."""
    p = ws / "memory" / "2026-08-02.md"
    quiet(agent.memory.sync)
    tick = p.stat().st_mtime_ns
    p.write_text(p.read_text().replace("Biscuit", "Muffin "))  # same size
    os.utime(p, ns=(tick, tick))  # what a clock with a coarse tick would have left
    r = quiet(agent.memory.sync)
    assert r.changed == ["memory/2026-08-02.md"]
    assert [h.path for h in quiet(agent.memory.search, "Muffin vet visit")] == ["memory/2026-08-02.md"]


def test_changed_and_deleted_files(agent: Any, ws: Path) -> None:
    quiet(agent.memory.sync)
    (ws / "memory" / "2026-08-01.md").write_text("# 2026-08-01\n\n- Kayaking on the Willamette.\n")
    (ws / "memory" / "2026-08-02.md").unlink()
    r = quiet(agent.memory.sync)
    assert r.changed == ["memory/2026-08-01.md"] and r.removed == ["memory/2026-08-02.md"]
    hits = quiet(agent.memory.search, "kayaking", min_score=0)
    assert [h.path for h in hits] == ["memory/2026-08-01.md"]
    assert quiet(agent.memory.search, "flaky login test", min_score=0).__len__() == 0
    assert quiet(agent.memory.search, "Biscuit vet", min_score=0).__len__() == 0


def test_search_syncs_changed_files_first(agent: Any, ws: Path) -> None:
    quiet(agent.memory.sync)
    (ws / "memory" / "2026-08-03.md").write_text("# 2026-08-03\n\n- Bought a sea kayak.\n")
    hits = quiet(agent.memory.search, "sea kayak")
    assert hits and hits[0].path == "memory/2026-08-03.md"


def test_bad_files_are_skipped_or_repaired_with_a_warning_naming_them(agent: Any, ws: Path) -> None:
    (ws / "memory" / "latin1.md").write_bytes("caf\xe9 with Ren\xe9e\n".encode("latin-1"))
    (ws / "memory" / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    big = ws / "memory" / "huge.md"
    big.write_text("huge line\n" * 100)
    agent.config = agent.memory.config = agent.config.evolve(memory__max_file_bytes=500)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = agent.memory.sync()
    messages = [str(w.message) for w in caught]
    assert any("memory/latin1.md" in m and "UTF-8" in m for m in messages)
    assert any("memory/binary.md" in m and "binary" in m for m in messages)
    assert any("memory/huge.md" in m and "max_file_bytes" in m for m in messages)
    assert dict(r.skipped).keys() == {"memory/binary.md", "memory/huge.md"}
    assert "memory/latin1.md" in r.added
    hits = quiet(agent.memory.search, "Renée", min_score=0)
    assert [h.path for h in hits] == [] or hits[0].path == "memory/latin1.md"
    assert quiet(agent.memory.search, "caf", min_score=0) is not None
    # warned once, not on every sync
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        agent.memory.sync()
    assert not [w for w in again if "huge.md" in str(w.message)]
    # status names them as skipped, with the reason, not as "stale" forever
    st = agent.memory.status()
    assert {x.path: x.reason.split(" ")[0] for x in st.skipped_files} == {
        "memory/binary.md": "binary", "memory/huge.md": "larger"}
    assert not {"memory/binary.md", "memory/huge.md"} & set(st.stale_files)


def test_a_file_growing_too_big_leaves_the_index(agent: Any, ws: Path) -> None:
    quiet(agent.memory.sync)
    agent.config = agent.memory.config = agent.config.evolve(memory__max_file_bytes=60)
    (ws / "memory" / "2026-08-02.md").write_text("# 2026-08-02\n\n" + "- more about Biscuit\n" * 10)
    r = quiet(agent.memory.sync)
    assert "memory/2026-08-02.md" in r.removed
    assert "memory/2026-08-02.md" not in agent.store.files()


# --------------------------------------------------------------------------- keyword search


def test_query_terms_drop_stopwords_but_keep_content() -> None:
    assert query_terms("What did we decide about the lease?") == ["decide", "lease"]
    assert query_terms("who") == ["who"]
    assert query_terms("PR #1201 merged at 10:05") == ["pr", "1201", "merged", "10", "05"]


def test_a_natural_language_question_finds_the_memory(agent: Any) -> None:
    hits = quiet(agent.memory.search, "What did we decide about the lease?")
    assert hits and hits[0].path == "MEMORY.md"
    assert "Lease renewed" in hits[0].snippet
    assert hits[0].text_score is not None and hits[0].vector_score is None


def test_keyword_only_is_said_loudly_when_no_provider_is_available(ws: Path, tmp_path: Path) -> None:
    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", embedding__provider="auto",
                   embedding__auto_order=["not-installed"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = a.memory.search("lease")
    assert results and results.mode == "keyword-only"
    assert "keyword-only" in results.notice and "no embedding provider" in results.notice
    assert any("keyword-only" in str(w.message) for w in caught)
    assert results.to_dict()["mode"] == "keyword-only"
    status = a.memory.status()
    assert status.mode == "keyword-only" and "keyword-only" in str(status.notice)
    a.close()


def test_keyword_only_by_choice_is_said_in_results_and_status(agent: Any) -> None:
    results = agent.memory.search("lease")
    assert results.mode == "keyword-only" and "embedding.provider = none" in results.notice
    assert agent.memory.status().mode == "keyword-only"


def test_snippet_is_centred_on_the_match_not_the_first_line(agent: Any, ws: Path) -> None:
    lines = ["# 2026-08-09", ""] + [f"- unrelated note number {i} about nothing" for i in range(12)]
    lines.insert(10, "- The plumber fixed the dishwasher drain hose.")
    (ws / "memory" / "2026-08-09.md").write_text("\n".join(lines) + "\n")
    hit = quiet(agent.memory.search, "dishwasher hose")[0]
    assert "- The plumber fixed the dishwasher drain hose." in hit.snippet.splitlines()[:2]
    assert "# 2026-08-09" not in hit.snippet
    assert hit.citation == f"memory/2026-08-09.md#L{hit.start_line}-L{hit.end_line}"


def test_k_and_min_score(agent: Any, ws: Path) -> None:
    for i in range(10):
        words = "heron sighting" if i < 4 else "heron"  # 4 files hold both terms, 6 only one
        (ws / "memory" / f"2026-07-{i + 10}.md").write_text(f"# d\n\n- {words} number {i}\n")
    assert len(quiet(agent.memory.search, "heron sighting", 3)) == 3
    assert len(quiet(agent.memory.search, "heron sighting", 50, min_score=0)) == 10
    both = quiet(agent.memory.search, "heron sighting", 50, min_score=0.9)
    assert sorted(h.path for h in both) == [f"memory/2026-07-{i + 10}.md" for i in range(4)]
    with pytest.raises(SoulframeError, match="empty"):
        agent.memory.search("   ")


# --------------------------------------------------------------------------- visibility


@pytest.mark.parametrize("kind", ["group", "subagent"])
def test_group_and_subagent_sessions_never_get_private_memory(agent: Any, kind: str) -> None:
    session = Session(kind=kind)  # type: ignore[arg-type]
    hits = quiet(agent.memory.search, "lease Subaru car", 10, session, min_score=0)
    assert all(h.path != "MEMORY.md" for h in hits)
    main = quiet(agent.memory.search, "lease Subaru car", 10, Session.main(), min_score=0)
    assert "MEMORY.md" in [h.path for h in main]
    with pytest.raises(SoulframeError, match="private"):
        agent.memory.get("MEMORY.md", session=session)
    assert "Biscuit" in agent.memory.get("memory/2026-08-02.md", session=session).text


def test_the_memory_tools_take_the_session_from_the_context(agent: Any) -> None:
    from soulframe._engine.tools import ToolError, dispatch

    tools = {t.name for t in agent.tools(Session.group())}
    assert {"memory_search", "memory_get"} <= tools
    out = quiet(dispatch, agent, "memory_search", {"query": "lease Subaru dinner Biscuit", "min_score": 0},
                session=Session.group())
    assert out["results"] and all(r["path"] != "MEMORY.md" for r in out["results"])
    assert out["mode"] == "keyword-only" and "notice" in out
    with pytest.raises(ToolError, match="private"):
        dispatch(agent, "memory_get", {"path": "MEMORY.md"}, session=Session.group())
    mine = quiet(dispatch, agent, "memory_search", {"query": "lease"}, session=Session.main())
    assert mine["results"][0]["path"] == "MEMORY.md"
    assert mine["results"][0]["citation"].startswith("MEMORY.md#L")
    got = dispatch(agent, "memory_get", {"path": "MEMORY.md#L3-L3"}, session=Session.main())
    assert got["text"].startswith("- Lease renewed") and (got["from_line"], got["to_line"]) == (3, 3)
    with pytest.raises(ToolError):
        dispatch(agent, "memory_search", {"query": "x", "bogus": 1}, session=Session.main())


# --------------------------------------------------------------------------- get


def test_get_reads_a_line_range(agent: Any) -> None:
    ex = agent.memory.get("memory/2026-08-01.md", from_line=3, lines=2)
    assert ex.text.splitlines() == ["- Fixed the flaky login test in the portal repo.",
                                    "- Dinner at Lupine & Salt on Saturday."]
    assert (ex.start_line, ex.end_line, ex.total_lines) == (3, 4, 4)
    assert agent.memory.get("memory/2026-08-01.md#L4").text == "- Dinner at Lupine & Salt on Saturday."
    assert agent.memory.get("./memory/2026-08-01.md", from_line=4).text.startswith("- Dinner")
    assert agent.memory.get(".//memory/2026-08-01.md", from_line=4).text.startswith("- Dinner")
    assert agent.memory.get("././memory/2026-08-01.md", from_line=4).text.startswith("- Dinner")
    with pytest.raises(SoulframeError, match="past the end"):  # said, not an empty answer
        agent.memory.get("./memory/2026-08-01.md", from_line=99)


def test_get_never_prints_a_binary_file_or_control_characters(agent: Any, ws: Path) -> None:
    """What the index skips as binary is refused by name; a stray escape or NUL in a text
    file is left out, never sent to a terminal or a model."""
    import random

    (ws / "memory" / "2026-08-03.md").write_bytes(random.Random(3).randbytes(2000))
    with pytest.raises(SoulframeError, match=r"memory/2026-08-03.md: not shown: a binary file"):
        agent.memory.get("memory/2026-08-03.md")
    (ws / "memory" / "2026-08-04.md").write_bytes(b"# 2026-08-04\n- Paid \x1b[2Jthe\x00 plumber\n")
    assert agent.memory.get("memory/2026-08-04.md").text == "# 2026-08-04\n- Paid [2Jthe plumber"
    # a byte-order mark from a Windows editor is not shown as text either
    (ws / "memory" / "2026-08-05.md").write_bytes("\ufeff# 2026-08-05\n- Booked the ferry\n".encode())
    assert agent.memory.get("memory/2026-08-05.md").text == "# 2026-08-05\n- Booked the ferry"


@pytest.mark.parametrize("path,error", [
    ("SOUL.md", "not a memory file"),
    ("../outside.md", "not allowed"),
    ("/etc/passwd", "absolute"),
    ("memory/../SOUL.md", "not allowed"),
    ("memory/link.md", "outside the workspace"),
    ("memory/nope.md", "memory/nope.md: no such memory file"),  # a daily log not written yet
])
def test_get_refuses_anything_but_memory_files(agent: Any, ws: Path, tmp_path: Path, path: str,
                                               error: str) -> None:
    (tmp_path / "outside.md").write_text("secret\n")
    (ws / "memory" / "link.md").symlink_to(tmp_path / "outside.md")
    with pytest.raises((SoulframeError, PathEscapeError), match=error):
        agent.memory.get(path)


# --------------------------------------------------------------------------- daily memory


def test_append_daily_creates_the_log_with_a_heading(agent: Any, ws: Path) -> None:
    import datetime as dt

    when = dt.datetime(2026, 11, 21, 23, 30)
    p = agent.memory.append_daily("Prefers dark-mode screenshots", when=when)
    agent.memory.append_daily("Second  entry\nwith a newline", when=when)
    assert p == ws / "memory" / "2026-11-21.md"
    assert unmarked(p.read_text()) == "# 2026-11-21\n\n- Prefers dark-mode screenshots\n- Second entry with a newline\n"
    assert "- Prefers dark-mode screenshots <!-- src: remember via=memory-remember at=" in p.read_text()
    assert oct(p.stat().st_mode & 0o777) == oct(0o600)


def test_append_daily_uses_the_agent_time_zone(ws: Path, tmp_path: Path) -> None:
    import datetime as dt
    from zoneinfo import ZoneInfo

    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", timezone="Pacific/Kiritimati")  # UTC+14
    try:
        path = a.memory.append_daily("hello")
        assert path.name == f"{dt.datetime.now(ZoneInfo('Pacific/Kiritimati')).date()}.md"
    finally:
        a.close()


def test_remember_curated_goes_to_memory_md(agent: Any, ws: Path) -> None:
    p = agent.memory.remember("Prefers dark-mode screenshots", curated=True)
    assert p == ws / "MEMORY.md"
    last = unmarked(p.read_text()).splitlines()[-1]
    assert re.fullmatch(r"- Prefers dark-mode screenshots \(added \d{4}-\d{2}-\d{2}\)", last)
    with pytest.raises(SoulframeError, match="empty"):
        agent.memory.remember("  ")


def test_appending_to_a_file_without_a_final_newline(agent: Any, ws: Path) -> None:
    import datetime as dt

    p = ws / "memory" / "2026-01-05.md"
    p.write_text("# 2026-01-05\n\n- first")
    agent.memory.append_daily("second", when=dt.datetime(2026, 1, 5, 9))
    assert unmarked(p.read_text()).splitlines() == ["# 2026-01-05", "", "- first", "- second"]


def test_concurrent_appends_lose_nothing(agent: Any) -> None:
    import threading

    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(50):
                agent.memory.append_daily(f"thread {n} entry {i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    path = agent.memory.append_daily("last")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ") and lines.count(lines[0]) == 1
    assert sum(1 for ln in lines if ln.startswith("- thread")) == 200


# --------------------------------------------------------------------------- status, models


def test_status_reports_files_chunks_backend_and_stale_files(agent: Any, ws: Path) -> None:
    quiet(agent.memory.sync)
    (ws / "memory" / "2026-08-05.md").write_text("# new\n\n- not yet indexed\n")
    st = quiet(agent.memory.status, deep=True)
    assert (st.files, st.indexed_files, st.chunks) == (4, 3, 3)
    assert st.stale_files == ("memory/2026-08-05.md",)
    assert st.health == "ok" and st.problems == ()
    assert "numpy" in str(st.vector_backend) and "FTS5" in str(st.text_backend)
    assert st.provider is None and st.mode == "keyword-only"


def test_a_model_change_is_detected_and_everything_re_embedded(ws: Path, tmp_path: Path) -> None:
    small, large = HashingProvider(256), HashingProvider(512)
    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", plugins=[provider_plugin(small)],
                   embedding__provider=small.name)
    r1 = a.memory.sync()
    assert r1.model == "hashing:hashing-256:256" and r1.embedded > 0 and r1.model_changed is None
    assert a.memory.search("Subaru Crosstrek", min_score=0, channels="vector")
    a.close()
    b = make_agent(ws, seed=False, state_dir=tmp_path / "st", plugins=[provider_plugin(large)],
                   embedding__provider=large.name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r2 = b.memory.sync()
    assert r2.model_changed == ("hashing:hashing-256:256", "hashing:hashing-512:512")
    assert any("embedding model changed" in str(w.message) for w in caught)
    assert sorted(r2.changed) == ["MEMORY.md", "memory/2026-08-01.md", "memory/2026-08-02.md"]
    hits = b.memory.search("Subaru Crosstrek", min_score=0, channels="vector")
    assert hits and hits[0].path == "MEMORY.md"
    assert b.memory.status().index_dimensions == 512
    b.close()


def test_reindexing_never_re_embeds_unchanged_text(ws: Path, tmp_path: Path) -> None:
    prov = HashingProvider(16)
    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", plugins=[provider_plugin(prov)],
                   embedding__provider=prov.name)
    first = a.memory.sync()
    embedded = sum(prov.calls)
    assert first.embedded == embedded > 0
    (ws / "memory" / "2026-08-01.md").write_text(
        (ws / "memory" / "2026-08-01.md").read_text() + "\n- One new line.\n")
    second = a.memory.sync()
    assert second.changed == ["memory/2026-08-01.md"] and second.embedded <= 1
    third = a.memory.rebuild()
    assert third.embedded == 0 and third.cached > 0 and len(third.added) == 3
    a.close()


def test_an_embedding_failure_indexes_keyword_only_and_retries(ws: Path, tmp_path: Path) -> None:
    from soulframe._engine.embedding import EmbeddingError

    class Flaky(HashingProvider):
        fail = True

        def embed_documents(self, texts: list[str]) -> Any:
            if self.fail:
                raise EmbeddingError("endpoint unreachable (connection refused)")
            return super().embed_documents(texts)

    prov = Flaky(16)
    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", plugins=[provider_plugin(prov)],
                   embedding__provider=prov.name)
    r = quiet(a.memory.sync)
    assert any("embedding failed" in w for w in r.warnings) and len(r.added) == 3
    assert quiet(a.memory.search, "Subaru", min_score=0)  # keyword still works
    prov.fail = False
    r2 = a.memory.sync()
    assert len(r2.changed) == 3 and r2.embedded > 0
    a.close()


def test_the_memory_indexed_hook_sees_the_report(ws: Path, tmp_path: Path) -> None:
    seen: list[Any] = []

    class Observer:
        __name__ = "observer"

        @hookimpl
        def memory_indexed(self, agent: Any, report: Any) -> None:
            seen.append(report)

    cfg = load_config(search=False, workspace=ws, overrides={"state_dir": str(tmp_path / "s"),
                                                             "embedding.provider": "none"})
    a = Agent(cfg, pm=make_plugin_manager(plugins=[Observer()]))
    quiet(a.memory.sync)
    quiet(a.memory.sync)  # nothing changed: not reported again
    assert len(seen) == 1 and len(seen[0].added) == 3
    a.close()


def test_memory_disabled(ws: Path, tmp_path: Path) -> None:
    a = make_agent(ws, seed=False, state_dir=tmp_path / "st", memory__enabled=False)
    with pytest.raises(SoulframeError, match="memory.enabled"):
        a.memory.search("lease")
    a.close()


def test_search_results_json_shape(agent: Any) -> None:
    results = quiet(agent.memory.search, "lease")
    row = json.loads(json.dumps(results.to_dict()))["results"][0]
    assert {"path", "start_line", "end_line", "score", "snippet", "text_score", "vector_score",
            "citation"} <= set(row)


def test_watch_reindexes_after_a_change(agent: Any, ws: Path) -> None:
    import threading

    from soulframe._engine.memory.watch import watch

    quiet(agent.memory.sync)
    stop = threading.Event()
    reports: list[Any] = []

    def on_sync(report: Any) -> None:
        reports.append(report)
        if report.added:
            stop.set()

    t = threading.Thread(target=lambda: quiet(watch, agent.memory, debounce_s=0.2, on_sync=on_sync,
                                              stop=stop), daemon=True)
    t.start()
    import time

    time.sleep(0.5)  # let the observer start
    (ws / "memory" / "2026-08-07.md").write_text("# 2026-08-07\n\n- The otters were out.\n")
    t.join(timeout=20)
    stop.set()
    assert any("memory/2026-08-07.md" in r.added for r in reports)


def _cli(ws: Path, state: Path, *args: str) -> Any:

    cfg = state.parent / "cli.toml"
    cfg.write_text(f'state_dir = "{state}"\n\n[embedding]\nprovider = "none"\n')
    return run_cli("-w", str(ws), *args, env={"SOULFRAME_CONFIG": str(cfg)})


def test_cli_eval_reports_recall_per_channel(tmp_path: Path) -> None:
    data = Path(__file__).parents[2] / "data" / "memory_eval"
    r = _cli(data / "workspace", tmp_path / "state", "memory", "eval", str(data / "golden.jsonl"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["k"] == 6 and out["queries"] >= 100
    assert set(out["channels"]) == {"keyword", "hybrid", "keyword@0", "hybrid@0"}  # no model: no vector
    kw = out["channels"]["keyword@0"]
    assert 0.4 < kw["recall@k"] <= 1 and 0 < kw["mrr"] <= 1
    # what reading the hits costs: six chunks of at most 1,000 characters
    assert 0 < out["channels"]["keyword"]["context_chars"] <= 6 * 1000
    assert out["channels"]["keyword"]["unrelated_returned"] is None  # no unanswerable questions
    assert "keyword-only" in out["notice"]
    text = _cli(data / "workspace", tmp_path / "state", "memory", "eval", str(data / "golden.jsonl"))
    assert "R@1" in text.stdout and "keyword" in text.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    r = _cli(data / "workspace", tmp_path / "state", "memory", "eval", str(bad))
    assert r.returncode != 0 and "line 1" in r.stderr


def test_eval_reports_every_rate_per_split(agent: Any) -> None:
    """The half used to choose settings and the half held apart each get their own recall,
    false "no results" and unrelated rate, beside the overall figures (kept as they were)."""
    from soulframe._engine.memory.evaluation import evaluate

    quiet(agent.memory.sync)
    golden = [
        {"id": "a", "query": "lease renewed", "split": "tune",
         "relevant": [{"path": "MEMORY.md", "contains": "Lease renewed"}]},
        {"id": "b", "query": "zeppelin", "split": "tune", "relevant": []},
        {"id": "c", "query": "Biscuit vet", "split": "held",
         "relevant": [{"path": "memory/2026-08-02.md", "contains": "Biscuit"}]},
        {"id": "d", "query": "flaky login", "split": "held",
         "relevant": [{"path": "memory/2026-08-01.md", "contains": "flaky login"}]},
        {"id": "e", "query": "Crosstrek", "split": "held", "relevant": []},  # answered: a wrong "unrelated"
    ]
    r = quiet(evaluate, agent.memory, golden, k=3, channels=("keyword",))
    m = r["channels"]["keyword"]
    assert set(m["by_split"]) == {"tune", "held"}
    assert m["by_split"]["tune"] == {"recall@k": 1.0, "unrelated_returned": 0.0,
                                     "false_no_results": 0.0, "top_right": 1.0}
    assert m["by_split"]["held"]["recall@k"] == 1.0 and m["by_split"]["held"]["unrelated_returned"] == 1.0
    assert m["unrelated_returned"] == 0.5 and m["recall@k"] == 1.0  # the overall keys are unchanged
    assert m["recall@k_by_split"] == {"held": 1.0, "tune": 1.0}
    strict = quiet(evaluate, agent.memory, golden[:1], k=3, channels=("keyword",))
    assert strict["channels"]["keyword"]["by_split"]["tune"]["unrelated_returned"] is None
    assert "by_split" in r["channels"]["keyword@0"] and "false_no_results" not in r["channels"]["keyword@0"]


def test_cli_eval_prints_each_split(ws: Path, tmp_path: Path) -> None:
    golden = tmp_path / "split.jsonl"
    golden.write_text(
        '{"query": "lease renewed", "split": "tune", "relevant": [{"path": "MEMORY.md", "contains": "Lease"}]}\n'
        '{"query": "zeppelin", "split": "held", "relevant": []}\n')
    r = _cli(ws, tmp_path / "state", "memory", "eval", str(golden), "-k", "3")
    assert r.returncode == 0, r.stderr
    assert "hybrid by split: held R@3 -, no-res -, unrel 0.000; tune R@3 1.000, no-res 0.000, unrel -" in r.stdout, r.stdout


def test_cli_search_json_says_keyword_only(ws: Path, tmp_path: Path) -> None:
    r = _cli(ws, tmp_path / "state", "memory", "search", "lease", "--json")
    rows = json.loads(r.stdout)
    assert rows[0]["path"] == "MEMORY.md" and rows[0]["mode"] == "keyword-only"
    assert "keyword-only" in rows[0]["notice"]
    r = _cli(ws, tmp_path / "state", "memory", "search", "lease", "--session", "group", "--json")
    assert json.loads(r.stdout) == []
    st = json.loads(_cli(ws, tmp_path / "state", "memory", "status", "--json").stdout)
    assert st["mode"] == "keyword-only" and st["files"] == 3


# --------------------------------------------------------------------------- audit additions


def test_a_users_memory_is_found_again_after_a_rebuild(agent: Any) -> None:
    from soulframe._engine.memory.users import UserMemory

    UserMemory(agent, "alice").remember("Alice's cat is called Dinah")
    alice = Session.main(user_id="alice")
    assert any("Dinah" in h.snippet for h in quiet(agent.memory.search, "Dinah", session=alice))
    quiet(agent.memory.rebuild)  # clears every row, the user's included
    assert agent.store.files("alice") == {}
    hits = quiet(agent.memory.search, "Dinah", session=alice)
    assert any("Dinah" in h.snippet and h.scope == "user" for h in hits)
    # another user never sees it, and a search without a user does not either
    assert not any("Dinah" in h.snippet for h in quiet(agent.memory.search, "Dinah",
                                                         session=Session.main(user_id="bob")))
    assert not any("Dinah" in h.snippet for h in quiet(agent.memory.search, "Dinah"))


@pytest.mark.parametrize(("path", "from_line", "lines", "says"), [
    ("memory/2026-08-01.md", 99, None, "has 4 lines; line 99 is past the end"),
    ("memory/2026-08-01.md", 0, None, "numbered from 1"),
    ("memory/2026-08-01.md", 1, 0, "at least one line"),
    ("memory/2026-08-01.md#L3-L1", None, None, "ends before it starts"),
])
def test_get_says_what_is_wrong_with_a_line_range(agent: Any, path: str, from_line: Any,
                                                  lines: Any, says: str) -> None:
    with pytest.raises(SoulframeError, match=says):
        agent.memory.get(path, from_line, lines)


def test_search_asks_for_at_least_one_result(agent: Any) -> None:
    with pytest.raises(SoulframeError, match="at least one result"):
        quiet(agent.memory.search, "lease", 0)
    assert len(quiet(agent.memory.search, "lease", 100_000)) >= 1  # a huge k is fine


def test_citations_off_leaves_paths_but_no_line_citations(ws: Path, tmp_path: Path) -> None:
    from soulframe._engine.model import ToolContext

    a = make_agent(ws, seed=False, state_dir=tmp_path / "state", memory__citations="off")
    tool = next(t for t in a.tools() if t.name == "memory_search")
    out = quiet(tool.handler, ToolContext(agent=a, session=Session.main()), {"query": "lease"})
    assert out["results"] and all("citation" not in r and r["path"] for r in out["results"])
    a.close()
    on = make_agent(ws, seed=False, state_dir=tmp_path / "state2", memory__citations="on")
    out = quiet(tool.handler, ToolContext(agent=on, session=Session.main()), {"query": "lease"})
    assert out["results"][0]["citation"].startswith("MEMORY.md#L")
    on.close()
    cfg = tmp_path / "off.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state3"}"\n\n[embedding]\nprovider = "none"\n\n'
                   '[memory]\ncitations = "off"\n')
    r = run_cli("-w", str(ws), "memory", "search", "lease", env={"SOULFRAME_CONFIG": str(cfg)})
    assert "MEMORY.md" in r.stdout and "#L" not in r.stdout, r.stdout + r.stderr


def test_cli_rejects_bad_numbers_without_a_traceback(ws: Path, tmp_path: Path) -> None:
    for args, says in [
        (("memory", "search", "lease", "-k", "0"), "0 is not in the range x>=1"),
        (("memory", "get", "memory/2026-08-01.md", "--lines", "0"), "0 is not in the range x>=1"),
        (("memory", "get", "memory/2026-08-01.md", "--from", "40"), "has 4 lines; line 40 is past the end"),
        (("memory", "get", "SOUL.md"), "SOUL.md: not a memory file"),
        (("memory", "get", "../x.md"), "'..' is not allowed"),
        (("memory", "search", "  "), "the query is empty"),
        (("memory", "search", "*"), "'*' has no words to search for"),
        (("memory", "search", "?!"), "'?!' has no words to search for"),
        (("memory", "search", "dark mode " * 300), "the query is 2,999 characters; at most 2,000"),
    ]:
        r = _cli(ws, tmp_path / "state", *args)
        assert r.returncode != 0 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_cli_eval_warns_when_the_golden_file_is_about_another_workspace(ws: Path, tmp_path: Path) -> None:
    golden = Path(__file__).parents[2] / "data" / "memory_eval" / "golden.jsonl"
    r = _cli(ws, tmp_path / "state", "memory", "eval", str(golden), "-k", "3")
    assert r.returncode == 0, r.stderr
    assert "are not memory files of" in r.stderr and "is -w the workspace" in r.stderr
    # no R@3 twice; then characters returned, false "no results", unrelated questions answered
    assert r.stdout.splitlines()[1].split() == ["channel", "R@1", "R@3", "MRR", "chars", "no-res", "unrel"]


def test_cli_shows_a_progress_bar_on_a_terminal_only(ws: Path, tmp_path: Path) -> None:
    import pty
    import subprocess
    import sys

    for day in range(1, 29):
        (ws / "memory" / f"2026-09-{day:02}.md").write_text(f"# 2026-09-{day:02}\n\n- Note {day}.\n")
    cfg = tmp_path / "cli.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nprovider = "none"\n')
    env = {**os.environ, "SOULFRAME_CONFIG": str(cfg), "COLUMNS": "100"}
    primary, secondary = pty.openpty()
    try:
        p = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "index"],
                           env=env, stdout=subprocess.PIPE, stderr=secondary, timeout=120)
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
    assert p.returncode == 0
    terminal = seen.decode("utf-8", "replace")
    assert "indexing" in terminal and "100%" in terminal, terminal
    assert "31 files: 31 added" in p.stdout.decode()
    # stderr not a terminal (a pipe, a log file): no bar
    r = _cli(ws, tmp_path / "state", "memory", "index", "--force")
    assert "indexing" not in r.stderr and "%" not in r.stderr


def test_cli_watch_reindexes_a_changed_file_end_to_end(ws: Path, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    cfg = tmp_path / "cli.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nprovider = "none"\n')
    env = {**os.environ, "SOULFRAME_CONFIG": str(cfg), "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "watch",
                          "--debounce-ms", "300"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         # Ctrl-C as a terminal delivers it: a suite started in the background
                         # by a non-interactive shell ignores SIGINT, and a child inherits that
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        assert p.stderr is not None and p.stdout is not None
        line = p.stderr.readline()
        while "watching" not in line and time.monotonic() < deadline:
            line = p.stderr.readline()
        assert "debounce 300 ms" in line
        # an editor's save: a burst of writes through a temp file and a rename
        tmp = ws / "memory" / ".2026-08-03.md.swp"
        for i in range(3):
            tmp.write_text(f"# 2026-08-03\n\n- The heron nests by the weir ({i}).\n")
            os.replace(tmp, ws / "memory" / "2026-08-03.md")
            time.sleep(0.05)
        out = ""
        while "1 added" not in out and time.monotonic() < deadline:
            out += p.stdout.readline()
        assert "1 added" in out
        # the running watcher synced: a search in another process needs no re-index
        r = _cli(ws, tmp_path / "state", "memory", "search", "heron weir", "--json")
        assert json.loads(r.stdout)[0]["path"] == "memory/2026-08-03.md"
    finally:
        p.send_signal(signal.SIGINT)  # Ctrl-C: stops cleanly
        try:
            rc = p.wait(timeout=20)
        finally:
            if p.poll() is None:
                p.kill()
    assert rc == 0
    synced = [ln for ln in out.splitlines() if ln.startswith("[")]
    assert len(synced) == 1, out  # the burst of three saves was one sync


def test_cli_watch_outlives_a_full_disk_and_indexes_what_it_missed(ws: Path, tmp_path: Path) -> None:
    """A watch left running for weeks: a sync that fails (the disk filled up) is one JSON
    line, the watch goes on, and once there is room the next change brings in the note the
    failed sync could not (it used to end the watch, leaving every later note unindexed)."""
    import resource
    import signal
    import subprocess
    import sys
    import time

    cfg = tmp_path / "cli.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nprovider = "none"\n')
    _cli(ws, tmp_path / "state", "memory", "index")
    limit = 400_000  # the index is ~70 KB; the big note below needs megabytes

    def full_disk() -> None:  # a write past the limit fails with EFBIG, as on a full disk
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    env = {**os.environ, "SOULFRAME_CONFIG": str(cfg), "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "watch",
                          "--debounce-ms", "200", "--json"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=full_disk)
    assert p.stdout is not None and p.stderr is not None
    deadline = time.monotonic() + 60

    def next_line(key: str) -> dict[str, Any]:
        while time.monotonic() < deadline:
            line = p.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            got = json.loads(line)
            if key in got and (key != "added" or got["added"]):
                return got
        raise AssertionError(f"no {key!r} line; stderr: {p.stderr.read()}")  # type: ignore[union-attr]

    try:
        while "watching" not in p.stderr.readline() and time.monotonic() < deadline:
            pass
        big = "".join(f"- entry {i}: the ledger page {i * 7919 % 100003} was audited\n" for i in range(30_000))
        tmp = ws / "memory" / ".ledger.md.tmp"
        tmp.write_text("# Ledger\n\n- The quokka ledger is audited yearly.\n" + big)
        os.replace(tmp, ws / "memory" / "ledger.md")
        failed = next_line("error")
        assert "disk" in failed["error"]["message"] and failed["retry_s"] > 0, failed
        assert p.poll() is None  # still watching
        resource.prlimit(p.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        (ws / "memory" / "2026-08-04.md").write_text("# 2026-08-04\n\n- Space freed on the disk.\n")
        caught_up = next_line("added")
        assert "memory/ledger.md" in caught_up["added"] + caught_up["changed"], caught_up
        r = _cli(ws, tmp_path / "state", "memory", "search", "quokka ledger", "--json")
        assert json.loads(r.stdout)[0]["path"] == "memory/ledger.md"
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=20)
        finally:
            if p.poll() is None:
                p.kill()


def test_a_note_made_unreadable_leaves_the_index_and_is_named(ws: Path, tmp_path: Path) -> None:
    """``chmod 000`` leaves the mtime alone: the fast path kept the old text searchable, with
    no word said, and status reported the index healthy and nothing skipped."""
    import shutil
    import subprocess
    import sys

    state = tmp_path / "state"
    assert _cli(ws, state, "memory", "index").returncode == 0
    note = ws / "memory" / "2026-08-02.md"
    note.chmod(0)

    def cli(*args: str) -> Any:
        if os.geteuid() != 0:
            return _cli(ws, state, *args)
        # root reads a mode-000 file: a process without the capabilities that bypass
        # permissions (the one a user runs) is needed to see what a user sees
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root, and no setpriv to drop CAP_DAC_OVERRIDE")
        drop = "-dac_override,-dac_read_search"
        env = {**os.environ, "SOULFRAME_CONFIG": str(tmp_path / "cli.toml")}
        return subprocess.run([setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", sys.executable,
                               "-m", "soulframe", "-w", str(ws), *args], env=env, capture_output=True, text=True)

    try:
        r = cli("memory", "search", "Biscuit vet visit", "--json")
        assert r.returncode == 0, r.stderr
        assert "memory/2026-08-02.md" not in [h["path"] for h in json.loads(r.stdout)]
        assert "memory/2026-08-02.md: skipped: cannot be read" in r.stderr, r.stderr
        status = json.loads(cli("memory", "status", "--json").stdout)
        assert [s["path"] for s in status["skipped_files"]] == ["memory/2026-08-02.md"], status
        assert status["stale_files"] == []
    finally:
        note.chmod(0o600)
    r = _cli(ws, state, "memory", "search", "Biscuit vet visit", "--json")
    assert json.loads(r.stdout)[0]["path"] == "memory/2026-08-02.md"  # readable again: back


def test_cli_search_in_a_workspace_without_memory_says_how_to_start(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _cli(empty, tmp_path / "state", "memory", "search", "anything")
    assert r.returncode == 0 and "has no memory files yet" in r.stdout
    assert "soulframe memory remember" in r.stdout
    (empty / "MEMORY.md").write_text("# MEMORY.md\n\n- Tea, no sugar.\n")
    r = _cli(empty, tmp_path / "state", "memory", "search", "zebra")
    assert "no results (a lower --min-score" in r.stdout


def test_cli_index_names_each_skipped_file_once(ws: Path, tmp_path: Path) -> None:
    (ws / "memory" / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    r = _cli(ws, tmp_path / "state", "memory", "index")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("memory/binary.md: skipped: binary file") == 1, r.stderr
    assert "1 skipped" in r.stdout
    st = _cli(ws, tmp_path / "state", "memory", "status")
    assert "skipped: memory/binary.md: binary file" in st.stdout and "stale: memory/binary.md" not in st.stdout


def test_two_workspaces_of_the_default_agent_keep_separate_indexes(tmp_path, cli) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for ws, note in ((a, "The boiler code is 4471."), (b, "The gate code is 9182.")):
        cli("init", str(ws), check=True)
        cli("-w", str(ws), "memory", "remember", note, check=True)
    # searching one workspace never re-indexes (and so removes) the other's files
    out_a = cli("-w", str(a), "memory", "search", "boiler code", "--json", check=True).stdout
    out_b = cli("-w", str(b), "memory", "search", "gate code", "--json", check=True).stdout
    out_a2 = cli("-w", str(a), "memory", "search", "boiler code", "--json", check=True).stdout
    assert "4471" in out_a and "9182" in out_b and "4471" in out_a2
    assert "9182" not in out_a2
    status = json.loads(cli("-w", str(a), "memory", "status", "--json", check=True).stdout)
    assert "default-" in json.dumps(status)  # an index of its own, named for the workspace


def test_cli_remembers_and_searches_for_a_user(tmp_path, cli) -> None:
    ws = tmp_path / "ws"
    cli("init", str(ws), check=True)
    out = cli("-w", str(ws), "memory", "remember", "--user", "alice", "Alice's locker code is 5521.", check=True)
    assert out.stdout.startswith("remembered in alice's memory/")
    assert not any("5521" in p.read_text() for p in (ws / "memory").glob("*.md"))
    mine = cli("-w", str(ws), "memory", "search", "locker code", "--user", "alice", "--json", check=True)
    assert "5521" in mine.stdout
    theirs = cli("-w", str(ws), "memory", "search", "locker code", "--user", "bob", "--json", check=True)
    assert "5521" not in theirs.stdout


def test_status_deep_index_reindexes_first_and_probes_the_provider(cli, workspace: Path) -> None:
    import json

    (workspace / "memory").mkdir()
    (workspace / "soulframe.toml").write_text('embedding.provider = "none"\n')
    (workspace / "memory" / "2026-11-20.md").write_text("- Prefers dark-mode screenshots\n")
    cli("-w", str(workspace), "memory", "index", check=True)
    (workspace / "memory" / "2026-11-21.md").write_text("- Allergic to penicillin\n")
    stale = json.loads(cli("-w", str(workspace), "memory", "status", "--json", check=True).stdout)
    assert stale["stale_files"] == ["memory/2026-11-21.md"]
    out = json.loads(cli("-w", str(workspace), "memory", "status", "--deep", "--index", "--json",
                         check=True).stdout)
    assert out["reindexed"]["added"] == 1 and out["stale_files"] == []
    assert out["provider_probe"].startswith("none (")  # keyword-only here: said, not hidden


class AngleProvider(HashingProvider):
    """A real provider whose geometry a test can read: a text holding ``variant N`` lies at
    N degrees from the question's direction (any other text at 90), so the vector ranking
    of a hundred notes is known in advance."""

    name = "angles"

    def __init__(self) -> None:
        super().__init__(2)
        self.model_id = "angles-2"

    def embed_documents(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), 2), dtype=np.float32)
        for i, t in enumerate(texts):
            m = re.search(r"variant ([\d.]+)", t)
            a = np.radians(float(m.group(1)) if m else 90.0)
            out[i] = (np.cos(a), np.sin(a))
        return out

    def embed_query(self, text: str) -> Any:
        import numpy as np

        return np.array([1.0, 0.0], dtype=np.float32)


def test_a_keyword_hit_keeps_its_vector_score_outside_the_nearest_48(tmp_path: Path) -> None:
    """A note found by its words but only 60th by meaning is fused with its own similarity,
    not with none: the vector channel brings twice the keyword channel's candidates (48 at
    k = 6), so the hit shows (and ranks by) both scores."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    day = dt.date(2026, 1, 1)
    for i in range(100):
        # notes 0..99 at 0.5..50 degrees; the dentist note at 30.2: 61st by meaning
        text = f"Tidied the shelves, variant {i / 2 + 0.5:g}"
        if i == 60:
            text = "Dentist appointment moved to Tuesday, variant 30.2"
        (ws / "memory" / f"{day + dt.timedelta(days=i)}.md").write_text(f"# {day + dt.timedelta(days=i)}\n\n{text}\n")
    agent = make_agent(ws, seed=False, state_dir=tmp_path / "state", plugins=[provider_plugin(AngleProvider())],
                       embedding__provider=AngleProvider.name, memory__calibration="raw")
    try:
        hits = agent.memory.search("dentist appointment", k=6)
        top = hits[0]
        assert "Dentist" in top.snippet
        assert top.text_score is not None and top.vector_score is not None
        assert top.vector_score == pytest.approx(math.cos(math.radians(30.2)), abs=1e-4)
    finally:
        agent.close()


def test_remember_reads_the_note_from_stdin_with_a_dash(tmp_path: Path, cli) -> None:
    ws = tmp_path / "ws"
    cli("init", str(ws), "--no-download", check=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    cli("-w", str(ws), "memory", "remember", "-", input="The plumber comes on Monday.\n", check=True)
    logs = "".join(p.read_text() for p in (ws / "memory").glob("*.md"))
    assert "- The plumber comes on Monday." in logs and "- -" not in logs
    empty = cli("-w", str(ws), "memory", "remember", "-", input="\n")
    assert empty.returncode == 2 and "nothing to remember" in empty.stderr


def test_remember_from_stdin_refuses_an_archive_and_an_endless_pipe(tmp_path: Path, cli) -> None:
    """`cmd | soulframe memory remember -` read all of it and wrote it as one note: a zip
    piped by mistake went into the daily log byte for byte, and a pipe that never ends was
    read until memory ran out."""
    import subprocess
    import sys

    ws = tmp_path / "ws"
    cli("init", str(ws), "--no-download", check=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n[memory]\nmax_file_bytes = 4096\n')
    before = sorted(p.read_bytes() for p in (ws / "memory").glob("*.md"))
    command = [sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "remember", "-"]
    for data, said in ((b"PK\x03\x04\x14\x00\x08\x00" + bytes(range(256)) * 8, "not a note: a binary file"),
                       (b"a" * 5000, "over memory.max_file_bytes (4,096 bytes)")):
        out = subprocess.run(command, input=data, capture_output=True, timeout=60)
        assert out.returncode == 2 and said in out.stderr.decode() and b"Traceback" not in out.stderr
    assert sorted(p.read_bytes() for p in (ws / "memory").glob("*.md")) == before


def test_a_note_too_big_for_its_file_to_be_indexed_is_refused(tmp_path: Path, cli) -> None:
    """`memory remember - < meeting.log` appended a 40 MB line and said "remembered": the
    day's log was then over memory.max_file_bytes and skipped whole by the index, so every
    other note of the day vanished from search. Standard input was read without bound too
    (`< /dev/zero` took gigabytes)."""
    ws = tmp_path / "ws"
    cli("init", str(ws), "--no-download", check=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n[memory]\nmax_file_bytes = 4096\n')
    cli("-w", str(ws), "memory", "remember", "The plumber comes on Monday.", check=True)
    [log] = (ws / "memory").glob("*.md")
    before = log.read_text()
    big = cli("-w", str(ws), "memory", "remember", "word " * 900)
    assert big.returncode == 1 and f"would take memory/{log.name} past memory.max_file_bytes (4,096" in big.stderr
    curated = cli("-w", str(ws), "memory", "remember", "--curated", "word " * 900)
    assert curated.returncode == 1 and "would take MEMORY.md past memory.max_file_bytes" in curated.stderr
    piped = cli("-w", str(ws), "memory", "remember", "-", input="line of a long log\n" * 300)
    assert piped.returncode == 2 and "standard input: over memory.max_file_bytes (4,096 bytes)" in piped.stderr
    assert log.read_text() == before
    hits = cli("-w", str(ws), "memory", "search", "plumber", "--json", check=True)
    assert [h["path"] for h in json.loads(hits.stdout)] == [f"memory/{log.name}"]  # still found


def test_remember_turns_bytes_that_are_not_utf8_into_replacement_characters(tmp_path: Path, cli) -> None:
    """A shell passes undecodable bytes through as surrogates; they are written as U+FFFD,
    not a UnicodeEncodeError traceback."""
    import os as _os
    import subprocess
    import sys

    ws = tmp_path / "ws"
    cli("init", str(ws), "--no-download", check=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    arg = _os.fsdecode(b"bad \xff\xfe bytes")
    out = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "remember", arg],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    logs = "".join(p.read_text() for p in (ws / "memory").glob("*.md"))
    assert "- bad \ufffd\ufffd bytes" in logs


def test_a_users_log_of_the_same_day_does_not_hide_the_agents(agent: Any) -> None:
    """alice remembered something on 2026-08-01, the day of the agent's log: her search
    dropped the agent's log of that day as if hers were a copy of it (same path and line),
    and a note every session may see was not found."""
    import datetime as dt

    from soulframe._engine.memory.users import UserMemory

    UserMemory(agent, "alice").append_daily("Alice likes green tea with dinner", when=dt.datetime(2026, 8, 1, 9))
    alice = Session.main(user_id="alice")
    agents = quiet(agent.memory.search, "dinner at Lupine and Salt", min_score=0)
    assert agents and agents[0].path == "memory/2026-08-01.md"
    hers = quiet(agent.memory.search, "dinner at Lupine and Salt", min_score=0, session=alice)
    assert any(h.path == "memory/2026-08-01.md" and h.scope == "agent" and "Lupine" in h.snippet
               for h in hers), [(h.path, h.scope, h.snippet) for h in hers]
    tea = quiet(agent.memory.search, "green tea", min_score=0, session=alice)
    assert tea[0].scope == "user" and "green tea" in tea[0].snippet
