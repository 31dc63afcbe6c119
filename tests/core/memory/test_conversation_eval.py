"""`soulframe memory eval --conversations`: LoCoMo and REALTALK files become daily logs,
every question is asked as `memory search` asks it, and the report counts what it could not
resolve. The data is a small conversation of each format written for these tests
(tests/data/conversation_formats)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from soulframe._engine.memory import conversations as cm
from soulframe._engine.model import SoulframeError

DATA = Path(__file__).parents[2] / "data" / "conversation_formats"


def _cli(tmp_path: Path, *args: str, provider: str = "none") -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "cli.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nprovider = "{provider}"\n')
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return run_cli("-w", str(ws), "memory", "eval", *args, env={"SOULFRAME_CONFIG": str(cfg)})


def test_both_formats_load_with_their_sessions_dates_and_categories() -> None:
    convs = {c.name: c for c in cm.load(DATA)}
    assert set(convs) == {"ada-ben", "Chat_1_Cleo_Dev"}
    locomo, realtalk = convs["ada-ben"], convs["Chat_1_Cleo_Dev"]
    assert [s.day.isoformat() for s in locomo.sessions] == ["2024-05-02", "2024-05-16", "2024-06-11"]
    assert {q.category for q in locomo.questions} >= {"single-hop", "temporal", "multi-hop", "adversarial"}
    # a session that runs past midnight is filed under the day it started
    assert [s.day.isoformat() for s in realtalk.sessions] == ["2024-02-03", "2024-02-05"]
    assert realtalk.speakers == ("Cleo", "Dev")


def test_a_conversation_becomes_daily_logs_one_turn_per_line(tmp_path: Path) -> None:
    conv = cm.select(cm.load(DATA), ["Chat_1"])[0]
    where = cm.write_workspace(conv, tmp_path)
    log = (tmp_path / "memory" / "2024-02-05.md").read_text().splitlines()
    assert log[0] == "# 2024-02-05"
    assert log[where["D2:2"].line - 1] == "Cleo: they bit my glove today haha"
    # the annotators' event notes are not conversation text
    assert "annotator" not in "".join(p.read_text() for p in (tmp_path / "memory").iterdir())


def test_evidence_ids_are_parsed_strictly() -> None:
    assert cm.turn_ids(["D1:3", "D2:4; D3:1", " D10:2:"]) == (["D1:3", "D2:4", "D3:1", "D10:2"], 0)
    assert cm.turn_ids(["D1;", "S3:2"]) == ([], 2)


def test_a_filter_naming_no_conversation_lists_the_names() -> None:
    with pytest.raises(SoulframeError, match="Chat_1_Cleo_Dev"):
        cm.select(cm.load(DATA), ["Chat_2"])
    # Chat_1 picks Chat_1_…, never Chat_10_…
    assert [c.name for c in cm.select(cm.load(DATA), ["Chat_1"])] == ["Chat_1_Cleo_Dev"]


def test_eval_reports_recall_per_category_and_what_it_could_not_resolve(tmp_path: Path) -> None:
    r = _cli(tmp_path, "--conversations", str(DATA), "--conversation", "ada-ben", "--channel", "keyword",
             "--json")
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    assert [c["name"] for c in out["conversations"]] == ["ada-ben"]
    # "D9:99" names no turn and "D1;" is malformed: both counted, the question with no
    # resolvable evidence left out of the averages
    assert out["unresolved_evidence"] == 2
    assert (out["questions"], out["skipped_questions"], out["scored"]) == (6, 1, 5)
    kw = out["channels"]["keyword"]
    assert set(kw["by_category"]) == {"single-hop", "temporal", "multi-hop", "open-domain"}
    assert kw["overall"]["questions"] == 5
    # every log is one small chunk here, so each question's evidence sits in a returned log
    # exactly when that log was among the hits: the ferry question finds its turn
    assert kw["by_category"]["temporal"]["recall@k"] == 1.0
    assert 0 < kw["overall"]["context_chars"] < 2_000
    assert kw["latency_ms"]["p95"] >= kw["latency_ms"]["p50"] > 0
    assert out["index_seconds"] > 0


def test_eval_prints_a_table(tmp_path: Path) -> None:
    r = _cli(tmp_path, "--conversations", str(DATA / "locomo_mini.json"), "--channel", "keyword")
    assert r.returncode == 0, r.stderr
    assert "R@6" in r.stdout and "all@6" in r.stdout and "multi-hop" in r.stdout
    assert "2 evidence id(s) unresolved" in r.stdout


def test_a_zipped_or_non_utf8_file_is_one_clear_error(tmp_path: Path) -> None:
    """LoCoMo is published as locomo10.zip: passed as downloaded it was a UnicodeDecodeError
    traceback, not a line saying to unzip it."""
    import zipfile

    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(DATA / "locomo_mini.json", "locomo10.json")
    r = _cli(tmp_path, "--conversations", str(archive))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{archive}: a zip archive, not JSON: unzip it" in r.stderr
    latin = tmp_path / "latin1.json"
    latin.write_bytes('[{"sample_id": "caf\u00e9"}]'.encode("latin-1"))
    r = _cli(tmp_path, "--conversations", str(latin))
    assert r.returncode == 1 and f"{latin}: not valid UTF-8" in r.stderr and "Traceback" not in r.stderr


def test_eval_needs_golden_or_conversations(tmp_path: Path) -> None:
    r = _cli(tmp_path)
    assert r.returncode != 0 and "--conversations" in r.stderr


@pytest.mark.model
def test_a_kept_index_embeds_nothing_twice(tmp_path: Path) -> None:
    """--index-dir keeps each conversation's index, so comparing settings re-embeds nothing."""
    keep = tmp_path / "keep"
    first = _cli(tmp_path, "--conversations", str(DATA), "--index-dir", str(keep), "--json", provider="local")
    second = _cli(tmp_path, "--conversations", str(DATA), "--index-dir", str(keep), "--json", provider="local")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert sum(c["embedded"] for c in a["conversations"]) > 0
    assert sum(c["embedded"] for c in b["conversations"]) == 0
    assert a["channels"]["hybrid"]["overall"] == b["channels"]["hybrid"]["overall"]
