"""Property-based fuzz: hostile config values and memory files.

* every numeric key, given a huge, zero, negative, non-finite or wrongly typed value, either
  loads (and then works: a prompt builds, memory indexes and searches) or is refused with one
  clear error naming the file, the line and the key — never a traceback;
* memory files with any name and any content (control characters, invalid UTF-8, NUL bytes,
  huge lines) never make indexing or search raise.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from soulframe._engine.agent import Agent
from soulframe._engine.config import key_catalogue, load_config
from soulframe._engine.model import ConfigError, Session, SoulframeError

#: the core's numeric keys and every default plugin's
NUMERIC = sorted(
    k for k, spec in key_catalogue().items()
    if (int in spec.types or float in spec.types) and bool not in spec.types
)

VALUES = st.one_of(
    st.sampled_from([0, -1, 1, 2**63, 99999999999999999999, -(2**70), 10**400]),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["sk-proj-Zq81vXa0KfLw3nQe7TtY", "12", "", "ten", "1e9"]),
    st.booleans(),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (int, list)):
        return json.dumps(value)
    return json.dumps(value)  # a TOML basic string takes JSON's escapes


def exercise(workspace: Path, cfg: Path, key: str) -> None:
    config = load_config(cfg, workspace=workspace)
    agent = Agent(config)
    agent.system_prompt(Session.main())
    if key.startswith("memory."):
        agent.memory.sync()
        agent.memory.search("oat milk")
    if key.startswith("skills."):
        agent.skills.search("oat")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(NUMERIC), value=VALUES)
def test_numeric_keys_load_and_work_or_are_refused_clearly(adversary, key: str, value: object) -> None:
    root = Path(tempfile.mkdtemp(prefix="sf-fuzz-"))
    try:
        workspace = root / "ws"
        (workspace / "memory").mkdir(parents=True)
        (workspace / "memory" / "2026-01-02.md").write_text("# Jan 2\n- ordered oat milk\n")
        table, _, leaf = key.rpartition(".")
        cfg = workspace / "soulframe.toml"
        cfg.write_text(f"# fuzzed\n\n[{table}]\n{leaf} = {toml_value(value)}\n" if table
                       else f"# fuzzed\n\n{leaf} = {toml_value(value)}\n")
        with adversary.attempt(f"{key} = {value!r}") as a:
            try:
                exercise(workspace, cfg, key)
            except ConfigError as exc:
                a.refused()
                message = str(exc)
                assert "\n" not in message.strip(), message
                assert str(cfg) in message and "line 4" in message and key in message, message
                a.leaked("Zq81vXa0KfLw3nQe7TtY" in message)
            except Exception as exc:
                # the value loaded but failed later, deep inside: validation let it through
                raise AssertionError(f"{key} = {value!r} loaded, then: {type(exc).__name__}: {exc}") from exc
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_reported_values_are_one_clear_line_on_the_command_line(workspace: Path, cli, adversary) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2026-01-02.md").write_text("- oat milk\n")
    # each value with the command that used to fail deep inside on it
    cases = [("memory.chunk_max_chars", "[memory]\nchunk_max_chars = 0\n", ["memory", "index"]),
             ("memory.max_results", "[memory]\nmax_results = 99999999999999999999\n", ["memory", "search", "oat"]),
             ("embedding.timeout_s", "[embedding]\ntimeout_s = inf\n", ["prompt"])]
    for key, text, args in cases:
        (workspace / "soulframe.toml").write_text(text)
        with adversary.attempt(f"{key} via {' '.join(args)}") as a:
            out = cli("-w", str(workspace), *args)
            adversary.traceback(" ".join(args), out.stderr)
            assert out.returncode == 2, (out.returncode, out.stderr)
            a.refused()
            assert re.search(rf"soulframe\.toml line 2: {re.escape(key)} = .* — expected", out.stderr), out.stderr
            assert len(out.stderr.strip().splitlines()) == 1, out.stderr


NAMES = st.text(
    alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
    min_size=1, max_size=40,
).filter(lambda n: n not in (".", ".."))
CONTENTS = st.one_of(
    st.text(max_size=3000),
    st.binary(max_size=2000),
    st.builds(lambda w, n: (w + " ") * n, st.text(min_size=1, max_size=12), st.integers(1, 3000)),
)


@pytest.mark.filterwarnings("ignore::UserWarning")  # bad encodings are reported as warnings
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(files=st.lists(st.tuples(NAMES, st.booleans(), CONTENTS), min_size=1, max_size=4))
def test_memory_files_of_any_name_and_content_never_break_indexing(adversary, files) -> None:
    root = Path(tempfile.mkdtemp(prefix="sf-fuzz-"))
    try:
        workspace = root / "ws"
        memory = workspace / "memory"
        memory.mkdir(parents=True)
        (memory / "2026-01-02.md").write_text("- ordered oat milk\n")
        for name, markdown, content in files:
            path = memory / (name + ".md" if markdown else name)
            try:
                if isinstance(content, bytes):
                    path.write_bytes(content)
                else:
                    path.write_text(content, encoding="utf-8", errors="surrogatepass")
            except OSError:  # a name this file system refuses (too long...): not our input
                continue
        agent = Agent(load_config(workspace=workspace, search=False,
                                  overrides={"embedding.provider": "none"}))
        with adversary.attempt(f"memory files {[n for n, _, _ in files]!r}"):
            agent.memory.sync()
            hits = agent.memory.search("oat milk")
            assert any(h.path == "memory/2026-01-02.md" for h in hits), "the rest was not indexed"
            try:
                agent.memory.search(files[0][0][:20].strip() or "x")  # a blank query is refused, by design
            except SoulframeError as exc:  # so is one without a word (":"), saying so
                assert "has no words to search for" in str(exc), exc
    finally:
        shutil.rmtree(root, ignore_errors=True)
