"""Memory search on real conversations: REALTALK (Lee et al., REALTALK, 2025,
arXiv:2502.13270), read from the shared data folder beside the repository — never copied
into it. Run with ``tox -e bench`` (or ``pytest tests/benchmarks/bench_conversations.py -o
python_files=bench_*.py -s``).

Every conversation is indexed at default settings with the offline model, and every
question asked as ``memory search`` asks it (:mod:`soulframe._engine.memory.conversation_eval`),
on the tune half (the conversations settings were chosen on) and the held half (never
looked at while choosing). The issue's thresholds, at k = 6:

* held half: hybrid recall@6 >= the keyword channel's + 0.05, within 8,000 characters;
* held half: multi-hop recall@6 >= 0.55;
* both halves: the default never below its best single channel.

A threshold the default does not reach yet is printed as such, not failed (PENDING says
why); every other one is asserted. Skipped, with the reason, when the data is absent.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = [Path(os.environ["SOULFRAME_REALTALK"])] if os.environ.get("SOULFRAME_REALTALK") else []
CANDIDATES += [REPO.parent / "shared" / "data" / "realtalk", Path("/work/shared/data/realtalk")]
HALVES = {"tune": ["Chat_1", "Chat_3", "Chat_5", "Chat_7", "Chat_9"],
          "held": ["Chat_2", "Chat_4", "Chat_6", "Chat_8", "Chat_10"]}
K = 6
BUDGET = 8_000
#: thresholds not reached yet at default settings, with why (measured in docs/memory.md).
#: None since memory.query_focus; with memory.vector_share: held 0.782 vs keyword 0.713
#: within 7,518 chars, multi-hop 0.619 (before query_focus 0.749 and 0.5495, both short)
PENDING: dict[str, str] = {}


def _data() -> Path | None:
    return next((p for p in CANDIDATES if (p / "Chat_1_Emi_Elise.json").is_file()), None)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = _data()
    if data is None:
        pytest.skip(f"REALTALK data not found (looked in {', '.join(map(str, CANDIDATES))}; "
                    "set SOULFRAME_REALTALK)")
    from soulframe._engine.config import load_config
    from soulframe._engine.memory import conversations as cm
    from soulframe._engine.memory.conversation_eval import evaluate_conversations, table
    from soulframe_embeddings.local import LocalProvider

    provider = LocalProvider()
    if not provider.available():
        pytest.skip(f"the offline model is not installed: {provider.unavailable_reason()}")
    work = tmp_path_factory.mktemp("realtalk")
    config = load_config(search=False, workspace=work / "unused",
                         overrides={"embedding.provider": "local"})
    convs = cm.load(data)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for half, names in HALVES.items():
            out[half] = evaluate_conversations(config, cm.select(convs, names), work, k=K, embedder=provider)
            print(f"\nREALTALK {half} half, default settings\n{table(out[half])}")
    return out


def _recall(r: dict[str, Any], channel: str, category: str | None = None) -> float:
    m = r["channels"][channel]
    row = m["overall"] if category is None else m["by_category"][category]
    return float(row["recall@k"])


def test_thresholds(results: dict[str, Any]) -> None:
    held, tune = results["held"], results["tune"]
    chars = held["channels"]["hybrid"]["overall"]["context_chars"]
    # name: (measured, bar, whether it holds)
    checks = {
        "held hybrid recall@6 >= keyword + 0.05": (
            _recall(held, "hybrid"), _recall(held, "keyword") + 0.05, None),
        f"held context at k = 6 <= {BUDGET:,} chars": (chars, BUDGET, chars <= BUDGET),
        "held multi-hop recall@6 >= 0.55": (_recall(held, "hybrid", "multi-hop"), 0.55, None),
    }
    for half, r in results.items():
        best = max(_recall(r, "keyword"), _recall(r, "vector"))
        checks[f"{half}: default >= its best single channel"] = (_recall(r, "hybrid"), best, None)
    failed = []
    print()
    for name, (got, need, holds) in checks.items():
        ok = got >= need - 1e-9 if holds is None else holds
        state = "holds" if ok else ("NOT YET" if name in PENDING else "FAILS")
        # four decimals: a recall a hair below its bar must not print as equal to it
        shown = f"{got:,.0f} vs {need:,.0f}" if need > 1 else f"{got:.4f} vs {need:.4f}"
        print(f"{state:8} {name}: {shown}" + (f" ({PENDING[name]})" if name in PENDING else ""))
        if ok and name in PENDING:
            print(f"         now holds: take {name!r} out of PENDING")
        if not ok and name not in PENDING:
            failed.append(name)
    assert not failed, failed
    assert tune["channels"]["hybrid"]["overall"]["context_chars"] <= BUDGET
