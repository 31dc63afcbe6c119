"""How long `soulframe import chatgpt` takes on a 1,000-conversation export (8 messages
each, an abandoned edit in each), against a baseline measured in the same run: loading the
whole file with ``json.load`` and writing one plain file per conversation, which is the
least any importer does. The import also checks every message (write-time safety, the
tombstones), writes each file atomically (fsync) and indexes them all (keyword-only here).

Run with ``tox -e bench -- tests/benchmarks/bench_transfer.py -s``. Target: the import in
60 s or less on this 2-core machine (issue 24), printed with its ratio to the baseline.

And one long-running conversation of 12 MB (one element of the export's array): streaming it
costs at most 6x what ``json.loads`` of the whole file does, not a parse per 256 KiB block of
it (which was 24x at this size, and grows with it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fakes.chatgpt_export import write_export
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe_transfer.importer import run_import
from soulframe_transfer.streaming import iter_array

N = 1000


def baseline(export: Path, out: Path) -> float:
    t0 = time.perf_counter()
    out.mkdir()
    for conv in json.loads(export.read_text(encoding="utf-8")):
        lines = [str(n["message"]["content"]["parts"][0]) for n in conv["mapping"].values() if n["message"]]
        (out / f"{conv['conversation_id']}.md").write_text("\n".join(lines))
    return time.perf_counter() - t0


def test_import_1000_conversations(tmp_path: Path) -> None:
    export = write_export(tmp_path / "export" / "conversations.json", N)
    base = baseline(export, tmp_path / "plain")
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = load_config(search=False, workspace=ws,
                      overrides={"embedding.provider": "none", "state_dir": str(tmp_path / "state")})
    with Agent(cfg) as agent:
        t0 = time.perf_counter()
        report = run_import(agent, "chatgpt", export)
        took = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = run_import(agent, "chatgpt", export)
        second = time.perf_counter() - t1
    assert report.imported == N and again.duplicates == N
    print(f"\nimport chatgpt, {N} conversations ({export.stat().st_size / 1e6:.1f} MB): {took:.1f} s "
          f"(indexed), again (all duplicates) {second:.1f} s; baseline json.load + plain writes "
          f"{base:.2f} s; ratio {took / base:.1f}")
    assert took <= 60, f"{took:.1f} s > 60 s"


def test_one_large_conversation_is_read_in_time_linear_in_its_size(tmp_path: Path, bench: Any) -> None:
    export = write_export(tmp_path / "one" / "conversations.json", 1, turns=12_000)
    assert export.stat().st_size > 10_000_000

    def best_of_three(fn: Any) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    streamed = best_of_three(lambda: [len(conv["mapping"]) for _line, conv in iter_array(export)])
    loaded = best_of_three(lambda: json.loads(export.read_text(encoding="utf-8")))
    bench.speed("reading one 12 MB conversation", streamed, loaded, target=6,
                baseline_name="json.loads of the file")
