"""The filesystem context source with bad input: every case ends in a clear warning naming
the file and a usable result — never a traceback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from soulframe import Agent, Session
from soulframe._engine.prompt.context import ContextWarning, collect_context


def collect(ws: Path, **overrides: object):  # type: ignore[no-untyped-def]
    return collect_context(Agent.open(ws, **overrides), Session.main())


def test_invalid_utf8_is_decoded_with_replacement_and_a_warning(workspace: Path) -> None:
    (workspace / "SOUL.md").write_bytes(b"# Soul\nline two\ncaf\xe9 \xff\xfe ok\n")
    with pytest.warns(ContextWarning, match=r"SOUL.md: not valid UTF-8 .*line 3"):
        result = collect(workspace)
    soul = result.file("SOUL.md")
    assert soul is not None
    assert soul.content.startswith("# Soul\nline two\ncaf\ufffd")
    assert "ok" in soul.content
    assert any("SOUL.md" in w and "UTF-8" in w for w in result.warnings)


def test_a_symlink_leaving_the_workspace_is_skipped_with_a_warning(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("/etc/shadow-like secret")
    (workspace / "USER.md").symlink_to(secret)
    (workspace / "AGENTS.md").write_text("rules")
    with pytest.warns(ContextWarning, match=r"USER.md: skipped .*outside the workspace"):
        result = collect(workspace)
    assert result.names == ["AGENTS.md"]
    assert all("secret" not in f.content for f in result.files)


def test_a_symlinked_memory_directory_leaving_the_workspace_is_skipped(workspace: Path, tmp_path: Path) -> None:
    import datetime as dt

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    today = dt.date(2026, 6, 10)
    (outside / f"{today}.md").write_text("a secret daily log")
    (workspace / "memory").symlink_to(outside, target_is_directory=True)
    (workspace / "AGENTS.md").write_text("rules")
    noon = dt.datetime(2026, 6, 10, 12, 0)
    with pytest.warns(ContextWarning) as caught:
        result = collect_context(Agent.open(workspace), Session.main(now=noon))
    assert any(f"memory/{today}.md: skipped" in str(w.message) and "outside the workspace" in str(w.message)
               for w in caught)
    assert all("secret" not in f.content for f in result.files)


def test_a_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    (workspace / "notes").mkdir()
    (workspace / "notes" / "soul.md").write_text("soul via link")
    (workspace / "SOUL.md").symlink_to(workspace / "notes" / "soul.md")
    assert collect(workspace).file("SOUL.md").content == "soul via link"  # type: ignore[union-attr]


def test_a_dangling_symlink_is_a_warning(workspace: Path) -> None:
    (workspace / "TOOLS.md").symlink_to(workspace / "nowhere.md")
    with pytest.warns(ContextWarning, match="TOOLS.md: skipped"):
        assert collect(workspace).names == []


def test_a_directory_named_like_a_file_is_skipped(workspace: Path) -> None:
    (workspace / "SOUL.md").mkdir()
    with pytest.warns(ContextWarning, match="SOUL.md: skipped — not a regular file"):
        assert collect(workspace).names == []


def test_a_fifo_is_never_opened(workspace: Path) -> None:
    os.mkfifo(workspace / "AGENTS.md")  # opening it for reading would block forever
    with pytest.warns(ContextWarning, match="AGENTS.md: skipped — not a regular file"):
        assert collect(workspace).names == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a mode-000 file")
def test_an_unreadable_file_is_a_warning(workspace: Path) -> None:
    p = workspace / "USER.md"
    p.write_text("x")
    p.chmod(0)
    with pytest.warns(ContextWarning, match="USER.md: skipped — cannot read"):
        assert collect(workspace).names == []


def test_a_5_mb_soul_md_is_read_capped_and_truncated(workspace: Path) -> None:
    head = "# Soul\nI am the beginning.\n"
    tail = "\nI am the very end.\n"
    body = ("lorem ipsum dolor sit amet é 🙂 " * 200_000)[: 5_000_000]
    (workspace / "SOUL.md").write_text(head + body + tail)
    size = (workspace / "SOUL.md").stat().st_size
    assert size > 5_000_000
    t0 = time.perf_counter()
    with pytest.warns(ContextWarning, match=r"SOUL.md: 5\.\d MB .* only its first"):
        result = collect(workspace)
    elapsed = time.perf_counter() - t0
    soul = result.file("SOUL.md")
    assert soul is not None
    assert soul.content.startswith(head)
    assert soul.content.endswith(tail)
    assert "[...truncated, read SOUL.md for full content...]" in soul.content
    assert len(soul.content) <= 20_000
    (notice,) = result.notices
    assert notice.name == "SOUL.md" and notice.original_chars >= size // 2  # the real size, not the part read
    assert elapsed < 30  # generous; the point is that it finishes (speed is in benchmarks)


def test_files_are_cached_until_they_change(workspace: Path) -> None:
    soul = workspace / "SOUL.md"
    soul.write_text("first")
    agent = Agent.open(workspace)
    assert collect_context(agent, Session.main()).file("SOUL.md").content == "first"  # type: ignore[union-attr]
    soul.write_text("second, longer")  # size changes
    assert collect_context(agent, Session.main()).file("SOUL.md").content == "second, longer"  # type: ignore[union-attr]
    soul.write_text("third, longer!")  # same size: the mtime tells
    st = soul.stat()
    os.utime(soul, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert collect_context(agent, Session.main()).file("SOUL.md").content == "third, longer!"  # type: ignore[union-attr]


def test_warnings_repeat_on_every_build_even_when_cached(workspace: Path) -> None:
    (workspace / "SOUL.md").write_bytes(b"bad \xff byte")
    agent = Agent.open(workspace)
    for _ in range(2):
        with pytest.warns(ContextWarning, match="not valid UTF-8"):
            collect_context(agent, Session.main())


def test_subagent_sessions_do_not_even_read_memory(workspace: Path) -> None:
    from soulframe_workspace.source import WorkspaceSource

    agent = Agent.open(workspace)
    source = WorkspaceSource(agent)
    assert "MEMORY.md" not in source.names(agent, Session.subagent())
    assert "MEMORY.md" in source.names(agent, Session.main())


def test_control_characters_are_left_out_and_a_binary_file_is_skipped(workspace: Path) -> None:
    """An escape sequence or a NUL in USER.md never reaches the prompt (each named in a
    warning); random bytes under USER.md's name are no context file at all."""
    import random

    (workspace / "USER.md").write_bytes(b"# USER\nName: Al\x1b[31mred\x00 Smith\n")
    with pytest.warns(ContextWarning, match=r"USER.md: 2 control character"):
        user = collect(workspace).file("USER.md")
    assert user is not None and user.content == "# USER\nName: Al[31mred Smith\n"
    (workspace / "USER.md").write_bytes(random.Random(7).randbytes(3000))
    with pytest.warns(ContextWarning, match=r"USER.md: skipped — a binary file"):
        result = collect(workspace)
    assert result.file("USER.md") is None
