"""A large export is read one conversation at a time: memory stays bounded as the export
grows (tracemalloc's peak, as a ratio between two sizes), and nothing of the abandoned
branches lands. The time targets (1,000 conversations in <= 60 s; one 12 MB conversation read in a few
times what ``json.loads`` takes) are benchmarks: tests/benchmarks/bench_transfer.py."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from fakes.chatgpt_export import write_export
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe_transfer.importer import run_import
from soulframe_transfer.streaming import iter_array


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_an_export_keeps_memory_bounded(tmp_path: Path) -> None:
    small = write_export(tmp_path / "small" / "conversations.json", 600)
    large = write_export(tmp_path / "large" / "conversations.json", 2400)
    assert large.stat().st_size > 3 * small.stat().st_size > 3_000_000

    def read(path: Path) -> None:
        n = 0
        for _line, conv in iter_array(path):
            n += len(conv["mapping"])
        assert n

    p_small, p_large = peak_bytes(lambda: read(small)), peak_bytes(lambda: read(large))
    # four times the conversations, about the same memory (a whole-file json.load would be 4x)
    assert p_large < 1.5 * p_small, (p_small, p_large)
    assert p_large < large.stat().st_size / 4


def test_a_generated_export_imports_without_its_abandoned_edits(tmp_path: Path) -> None:
    export = write_export(tmp_path / "export" / "conversations.json", 120)
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = load_config(search=False, workspace=ws,
                      overrides={"embedding.provider": "none", "state_dir": str(tmp_path / "state")})
    with Agent(cfg) as agent:
        report = run_import(agent, "chatgpt", export)
        assert (report.imported, report.messages, report.unreadable) == (120, 960, [])
        assert not any(b"abandoned-" in p.read_bytes() for p in (ws / "memory").glob("*.md"))
        again = run_import(agent, "chatgpt", export)
        assert (again.imported, again.duplicates) == (0, 120)
