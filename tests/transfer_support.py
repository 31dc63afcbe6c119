"""What the import tests share: a keyword-only workspace made by `soulframe init`, and the
command line run in this process (``run_cli``), checked for success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli


def keyword_workspace(tmp_path: Path, settings: str = "") -> Path:
    """``soulframe init`` in ``tmp_path/ws``, its state beside it, no embedding model;
    ``settings`` are more top-level config lines (``timezone = "UTC"``)."""
    root = tmp_path / "ws"
    run_cli("init", str(root), check=True)
    (root / "soulframe.toml").write_text(
        f'state_dir = "{tmp_path / "state"}"\n{settings}[embedding]\nprovider = "none"\n')
    return root


def sf(ws: Path, *args: str) -> str:
    """``soulframe -w WS ARGS``: its output, after checking it succeeded without a traceback."""
    out = run_cli("-w", str(ws), *args)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "Traceback" not in out.stderr
    return out.stdout


def imported(ws: Path, source: str, path: Path, *extra: str) -> dict[str, Any]:
    """The ``--json`` report of ``soulframe import SOURCE PATH``."""
    result: dict[str, Any] = json.loads(sf(ws, "import", source, str(path), "--json", *extra))
    return result
