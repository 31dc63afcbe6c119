"""Traversal and symlink shapes against every surface that reads memory or skills: the Python
API, the CLI (in process, and once as a subprocess for its stderr), `soulframe doctor`, and
`soulframe serve` driven by the MCP SDK's own client. Privacy follows the file reached, not
the path used; a loop, a dangling link or a name that is not UTF-8 is one warning, never a
traceback, and the rest of the workspace is still indexed."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from adversarial.shapes import (
    BAD_NAME_NOTE,
    BESIDE_LOOPS,
    HOSTILE_GETS,
    MEMORY_SECRET,
    NEVER,
    PRIVATE,
    PUBLIC_NOTE,
    SESSION_KINDS,
    SKILL_SECRET,
    build,
)
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session, SoulframeError
from soulframe._engine.tools import ToolError, dispatch


#: every secret that must not reach a session of this kind through memory
def forbidden(kind: str) -> tuple[str, ...]:
    # a main session may read MEMORY.md itself, never USER.md or SOUL.md as memory
    return (*NEVER, *PRIVATE[1:]) if kind == "main" else (*NEVER, *PRIVATE)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("escapes"))


@pytest.fixture(scope="module")
def env(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state")}


@pytest.fixture(scope="module")
def agent(ws: Path, env: dict[str, str]) -> Iterator[Agent]:
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        a = Agent.open(ws)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = a.memory.sync()
        a.first_sync = (report, [str(w.message) for w in caught])  # type: ignore[attr-defined]
        yield a
        a.close()


def test_the_index_skips_every_hostile_shape_with_one_line_each(agent: Agent, adversary: Any) -> None:
    with adversary.attempt("memory index over links, loops, dangling links, a bad name") as a:
        report, lines = agent.first_sync  # type: ignore[attr-defined]
        indexed = {f.path for f in agent.memory.files()}
        a.refused(True)
        assert {"MEMORY.md", "memory/2026-01-02.md", "memory/notes.md", "memory/alias.md"} <= indexed
        a.leaked(any(p.startswith(("memory/all/", "memory/outdir/")) or p in
                     ("memory/mem.md", "memory/soul.md", "memory/escape.md") for p in indexed))
        # one warning line per skipped shape, naming it
        for name in ("memory/all", "memory/mem.md", "memory/soul.md", "memory/escape.md", "memory/hard.md",
                     "memory/outdir", "memory/self.md", "memory/a.md", "memory/b.md",
                     "memory/dangling.md", "memory/bad-\\xff\\xfe.md"):
            mine = [w for w in lines if w.startswith(f"{name}: skipped: ")]
            assert len(mine) == 1, (name, lines)
        assert all("\n" not in w for w in lines)
        assert any("symlink loop" in w for w in lines if w.startswith("memory/self.md"))
        assert any("not valid UTF-8" in w for w in lines if w.startswith("memory/bad-"))
        assert any("workspace root" in w and "rm memory/all" in w for w in lines if w.startswith("memory/all"))
        assert report.files == len(indexed)


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_python_api_search_never_reaches_private_or_outside_files(agent: Agent, adversary: Any, kind: str) -> None:
    for secret in (*PRIVATE, *NEVER, PUBLIC_NOTE, BESIDE_LOOPS, BAD_NAME_NOTE):
        with adversary.attempt(f"Python memory.search({secret!r}) in a {kind} session") as a:
            hits = agent.memory.search(secret, session=Session(kind=kind), min_score=0.0)  # type: ignore[arg-type]
            text = " ".join(h.snippet + h.path for h in hits)
            a.refused(not hits)
            a.leaked(any(s in text for s in forbidden(kind)))
            if secret in (PUBLIC_NOTE, BESIDE_LOOPS):  # the rest of memory/ is still found
                assert secret in text
            if secret == MEMORY_SECRET and kind == "main":
                assert [h.path for h in hits] == ["MEMORY.md"]  # once, under its own name


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_python_api_get_refuses_every_hostile_path(agent: Agent, adversary: Any, kind: str) -> None:
    for path in HOSTILE_GETS:
        with adversary.attempt(f"Python memory.get({path!r}) in a {kind} session") as a:
            try:
                got = agent.memory.get(path, session=Session(kind=kind))  # type: ignore[arg-type]
            except SoulframeError as exc:
                a.refused()
                assert "Traceback" not in str(exc)
                continue
            a.leaked(any(s in got.text for s in (*PRIVATE, *NEVER)))


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_tool_calls_refuse_every_hostile_path(agent: Agent, adversary: Any, kind: str) -> None:
    offered = {t.name for t in agent.tools(Session(kind=kind))}  # type: ignore[arg-type]
    for path in HOSTILE_GETS:
        with adversary.attempt(f"tool memory_get {path!r} in a {kind} session") as a:
            try:
                out = dispatch(agent, "memory_get", {"path": path}, session=Session(kind=kind))  # type: ignore[arg-type]
            except (ToolError, SoulframeError):
                a.refused()
                continue
            a.leaked(any(s in json.dumps(out) for s in (*PRIVATE, *NEVER)))
    if "memory_search" in offered:
        with adversary.attempt(f"tool memory_search for every secret in a {kind} session") as a:
            out = dispatch(agent, "memory_search", {"query": " ".join((*PRIVATE, *NEVER))},
                           session=Session(kind=kind))  # type: ignore[arg-type]
            a.leaked(any(s in json.dumps(out) for s in forbidden(kind)))


@functools.cache
def _the_cli() -> Any:
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    return build_cli(make_plugin_manager())


def _cli(ws: Path, env: dict[str, str], *args: str) -> Any:
    """The real command line, in process (a subprocess per call would cost a second each)."""
    return CliRunner().invoke(_the_cli(), ["-w", str(ws), *args], env=env, catch_exceptions=True)


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_cli_search_never_prints_private_or_outside_text(ws: Path, env: dict[str, str], adversary: Any,
                                                        kind: str) -> None:
    query = " ".join((*PRIVATE, *NEVER, PUBLIC_NOTE))
    with adversary.attempt(f"CLI memory search --session {kind}") as a:
        res = _cli(ws, env, "memory", "search", query, "--session", kind, "--min-score", "0", "--json")
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        assert res.exit_code == 0, res.output
        a.leaked(any(s in res.output for s in forbidden(kind)))
        assert PUBLIC_NOTE in res.output


def test_cli_get_and_tools_call_refuse_every_hostile_path(ws: Path, env: dict[str, str], adversary: Any) -> None:
    for path in HOSTILE_GETS:
        for args in (("memory", "get", path), ("tools", "call", "memory_get", json.dumps({"path": path}))):
            with adversary.attempt(f"CLI {' '.join(args[:2])} {path}") as a:
                res = _cli(ws, env, *args)
                if res.exception is not None and not isinstance(res.exception, SystemExit):
                    raise res.exception
                a.refused(res.exit_code != 0)
                assert res.exit_code != 0, (args, res.output)
                a.leaked(any(s in res.output for s in (*PRIVATE, *NEVER)))


def test_cli_status_and_index_name_the_skipped_files(ws: Path, env: dict[str, str], adversary: Any) -> None:
    with adversary.attempt("CLI memory status --json over hostile shapes") as a:
        res = _cli(ws, env, "memory", "status", "--json")
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        assert res.exit_code == 0, res.output
        skipped = {s["path"] for s in json.loads(res.stdout)["skipped_files"]}
        a.refused(bool(skipped))
        assert {"memory/all", "memory/self.md", "memory/a.md", "memory/bad-\\xff\\xfe.md"} <= skipped


def test_cli_in_a_subprocess_warns_in_one_line_and_never_tracebacks(ws: Path, env: dict[str, str],
                                                                    adversary: Any) -> None:
    full = {**os.environ, **env}
    with adversary.attempt("subprocess memory index --force over hostile shapes") as a:
        res = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "index", "--force"],
                             capture_output=True, text=True, env=full, timeout=120)
        adversary.traceback("memory index", res.stderr)
        assert res.returncode == 0, res.stderr
        a.refused("memory/self.md: skipped: a symlink loop" in res.stderr)
        assert "memory/self.md: skipped: a symlink loop" in res.stderr
        assert "memory/bad-\\xff\\xfe.md: skipped: the file name is not valid UTF-8" in res.stderr
        a.leaked(any(s in res.stdout + res.stderr for s in (*PRIVATE, *NEVER)))


def test_doctor_names_each_link_and_says_how_to_fix_it(ws: Path, env: dict[str, str], adversary: Any) -> None:
    with adversary.attempt("doctor over hostile shapes") as a:
        res = _cli(ws, env, "doctor", "--json")
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        findings = json.loads(res.stdout)["findings"]
        text = json.dumps(findings)
        assert "the check failed" not in text, text
        links = {f["path"]: f["message"] for f in findings if f["check"] == "memory-files"}
        a.refused(bool(links))
        assert "workspace root" in links["memory/all"] and "rm memory/all" in links["memory/all"]
        assert "symlink loop" in links["memory/self.md"]
        assert "private memory" in links["memory/mem.md"]
        # the skills root that leads out of the workspace is named too
        assert any(f["check"] == "skills" and "skills.extra_dirs" in f["message"] for f in findings)
        a.leaked(any(s in res.stdout for s in (*PRIVATE, *NEVER)))


# --------------------------------------------------------------------------- skills root


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_a_skills_root_linked_out_of_the_workspace_reaches_no_surface(agent: Agent, adversary: Any,
                                                                      kind: str) -> None:
    session = Session(kind=kind)  # type: ignore[arg-type]
    with adversary.attempt(f"linked skills/ root in a {kind} prompt") as a:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = agent.system_prompt(session).text
        a.leaked("exfil" in text or SKILL_SECRET in text)
    with adversary.attempt(f"skill_read exfil in a {kind} session") as a:
        try:
            out = dispatch(agent, "skill_read", {"name": "exfil"}, session=session)
        except (ToolError, SoulframeError):
            a.refused()
        else:
            a.leaked(SKILL_SECRET in json.dumps(out))
    with adversary.attempt(f"skill_search for the linked skill in a {kind} session") as a:
        out = dispatch(agent, "skill_search", {"query": "release checklist deploy exfil"}, session=session)
        a.leaked(any(h["name"] == "exfil" or SKILL_SECRET in json.dumps(h) for h in out["results"]))


def test_skills_show_and_list_refuse_the_linked_root(ws: Path, env: dict[str, str], adversary: Any) -> None:
    with adversary.attempt("CLI skills show exfil (linked root)") as a:
        res = _cli(ws, env, "skills", "show", "exfil")
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        a.refused(res.exit_code != 0)
        a.leaked(SKILL_SECRET in res.output)
    with adversary.attempt("CLI skills list names the linked root") as a:
        with warnings.catch_warnings(record=True) as caught:  # in a terminal: on stderr
            warnings.simplefilter("always")
            res = _cli(ws, env, "skills", "list")
        said = " ".join(str(w.message) for w in caught)
        assert f"{ws / 'skills'}" in said and "skills.extra_dirs" in said, said
        a.refused()
        a.leaked("exfil" in res.stdout)


# --------------------------------------------------------------------------- MCP


def test_mcp_tools_resources_and_prompts_over_hostile_shapes(ws: Path, env: dict[str, str],
                                                             adversary: Any) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "soulframe", "-w", str(ws), "serve"],
                                   env={**os.environ, **env})

    def text_of(result: Any) -> str:
        return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for path in HOSTILE_GETS:
                with adversary.attempt(f"MCP memory_get {path}") as a:
                    got = await client.call_tool("memory_get", {"path": path})
                    a.refused(got.is_error)
                    assert got.is_error, (path, text_of(got))
                    a.leaked(any(s in text_of(got) for s in (*PRIVATE, *NEVER)))
            with adversary.attempt("MCP memory_search for every secret (main)") as a:
                found = await client.call_tool("memory_search", {"query": " ".join((*PRIVATE, *NEVER))})
                assert not found.is_error, text_of(found)
                a.leaked(any(s in text_of(found) for s in forbidden("main")))
            for name in ("exfil",):
                with adversary.attempt("MCP skill_read of a skill behind a linked skills/ root") as a:
                    got = await client.call_tool("skill_read", {"name": name})
                    a.refused(got.is_error)
                    a.leaked(SKILL_SECRET in text_of(got))
            for kind in SESSION_KINDS:
                with adversary.attempt(f"MCP system_prompt session={kind} over hostile shapes") as a:
                    prompt = await client.get_prompt("system_prompt", {"session": kind})
                    text = prompt.messages[0].content.text
                    a.leaked(SKILL_SECRET in text or "exfil" in text or any(s in text for s in NEVER))
            # a server started without --user serves no user's files: a prompt may not pick one
            with adversary.attempt("MCP main server: get_prompt user=alice") as a:
                with pytest.raises(Exception, match="--user"):
                    await client.get_prompt("system_prompt", {"user": "alice"})
                a.refused()
            described = json.dumps([p.model_dump() for p in (await client.list_prompts()).prompts])
            assert "narrower" in described
            for uri in ("soulframe://workspace/memory/all/MEMORY.md", "soulframe://workspace/../outside/leak.md",
                        "soulframe://workspace/memory/self.md", "soulframe://workspace/skills/exfil/SKILL.md"):
                with adversary.attempt(f"MCP read_resource {uri}") as a:
                    try:
                        res = await client.read_resource(uri)
                    except Exception as exc:  # the SDK raises the server's error
                        a.refused("not a served resource" in str(exc))
                        continue
                    a.leaked(any(s in res.contents[0].text for s in (*PRIVATE, *NEVER)))

    anyio.run(main)


# --------------------------------------------------------------------------- one shape at a time
# Each shape alone, so one cannot hide another (a loop used to fail everything before a
# directory link could leak).


def _lone(tmp_path: Path, shape: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "MEMORY.md").write_text(f"# Memory\n- {MEMORY_SECRET}\n")
    (ws / "USER.md").write_text(f"# USER.md\n{PRIVATE[1]}\n")
    (ws / "memory" / "2026-01-02.md").write_text(f"- {PUBLIC_NOTE}\n")
    if shape == "dir-link-to-root":
        os.symlink("..", ws / "memory" / "all")
    elif shape == "loop":
        os.symlink("self.md", ws / "memory" / "self.md")
    elif shape == "bad-name":
        with open(os.fsencode(str(ws / "memory")) + b"/\xff.md", "wb") as fh:
            fh.write(f"- {BAD_NAME_NOTE}\n".encode())
    elif shape == "skills-root-link":
        outside = tmp_path / "elsewhere" / "exfil"
        outside.mkdir(parents=True)
        (outside / "SKILL.md").write_text(f"---\nname: exfil\ndescription: Deploy checklist\n---\n{SKILL_SECRET}\n")
        os.symlink(outside.parent, ws / "skills")
    return ws


@pytest.mark.parametrize("kind", ["group", "subagent", "cron", "heartbeat"])
def test_a_directory_link_to_the_root_makes_nothing_public(tmp_path: Path, adversary: Any, kind: str) -> None:
    ws = _lone(tmp_path, "dir-link-to-root")
    with Agent.open(ws) as agent:
        with adversary.attempt(f"memory/all -> .. then search in a {kind} session") as a:
            hits = agent.memory.search(f"{MEMORY_SECRET} {PRIVATE[1]} {PUBLIC_NOTE}",
                                       session=Session(kind=kind), min_score=0.0)  # type: ignore[arg-type]
            a.leaked(any(s in h.snippet for h in hits for s in PRIVATE))
            assert [h.path for h in hits] == ["memory/2026-01-02.md"]
        for path in ("memory/all/MEMORY.md", "memory/all/USER.md"):
            with adversary.attempt(f"memory/all -> .. then get {path} in a {kind} session") as a:
                with pytest.raises(SoulframeError, match="not a memory file"):
                    agent.memory.get(path, session=Session(kind=kind))  # type: ignore[arg-type]
                a.refused()


@pytest.mark.parametrize("shape", ["loop", "bad-name"])
def test_a_loop_or_a_bad_name_is_one_warning_and_the_rest_is_indexed(tmp_path: Path, adversary: Any,
                                                                       shape: str) -> None:
    ws = _lone(tmp_path, shape)
    with Agent.open(ws) as agent:
        with adversary.attempt(f"{shape} in memory/: index, search, status, get") as a:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                report = agent.memory.sync()
                hits = agent.memory.search(PUBLIC_NOTE)
                status = agent.memory.status()
            said = [str(w.message) for w in caught]
            assert len([w for w in said if "skipped" in w]) == 1, said
            a.refused()
            assert report.added == ["MEMORY.md", "memory/2026-01-02.md"] and [h.path for h in hits] == ["memory/2026-01-02.md"]
            assert len(status.skipped_files) == 1
            if shape == "loop":
                with pytest.raises(SoulframeError, match="symlink loop"):
                    agent.memory.get("memory/self.md")
                with pytest.raises(ToolError, match="symlink loop"):
                    dispatch(agent, "memory_get", {"path": "memory/self.md"}, session=Session.main())


def test_a_skills_root_linked_out_is_refused_with_a_warning(tmp_path: Path, adversary: Any) -> None:
    ws = _lone(tmp_path, "skills-root-link")
    with Agent.open(ws) as agent:
        with adversary.attempt("skills -> outside: prompt, skill_read") as a:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                text = agent.system_prompt().text
            assert any(str(ws / "skills") in str(w.message) for w in caught)
            a.leaked("exfil" in text)
            with pytest.raises((ToolError, SoulframeError)):
                dispatch(agent, "skill_read", {"name": "exfil"}, session=Session.main())
            a.refused()


def test_root_files_that_loop_or_leave_the_workspace(tmp_path: Path, adversary: Any) -> None:
    """The roots: context files and memory/ itself as loops or links out of the workspace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "USER.md").write_text(f"# USER\n{PRIVATE[1]}\n")
    (outside / "2026-01-01.md").write_text(f"- {NEVER[0]}\n")
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "AGENTS.md").write_text("# AGENTS.md\nBe helpful.\n")
    os.symlink("SOUL.md", ws / "SOUL.md")
    os.symlink("MEMORY.md", ws / "MEMORY.md")
    os.symlink(outside / "USER.md", ws / "USER.md")
    os.symlink(outside, ws / "memory")
    with Agent.open(ws) as agent:
        for kind in SESSION_KINDS:
            with adversary.attempt(f"prompt over looping and escaping root files ({kind})") as a:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    text = agent.system_prompt(Session(kind=kind)).text  # type: ignore[arg-type]
                a.leaked(PRIVATE[1] in text or NEVER[0] in text)
                assert "Be helpful." in text
                if kind == "main":
                    said = " ".join(str(w.message) for w in caught)
                    assert "SOUL.md" in said and "symlink loop" in said
        with adversary.attempt("search and get over looping and escaping roots") as a:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                hits = agent.memory.search(f"{PRIVATE[1]} {NEVER[0]}", min_score=0.0)
            a.leaked(bool(hits))
            for path in ("MEMORY.md", "memory/2026-01-01.md", "USER.md"):
                with pytest.raises(SoulframeError):
                    agent.memory.get(path)
                a.refused()
    with adversary.attempt("doctor over looping roots") as a:
        res = _cli(ws, {}, "doctor", "--json")
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        findings = json.loads(res.stdout)["findings"]
        assert not [f for f in findings if "the check failed" in f["message"]], findings
        assert any("SOUL.md is a symlink loop" in f["message"] for f in findings)
        a.refused()


# --------------------------------------------------------------------------- fuzz: file names

_NAME_BYTES = st.binary(min_size=1, max_size=24).filter(
    lambda b: b"/" not in b and b"\x00" not in b and b not in (b".", b".."))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME_BYTES, min_size=1, max_size=4, unique=True))
def test_fuzzed_memory_file_names_never_traceback(tmp_path_factory: pytest.TempPathFactory,
                                                  adversary: Any, names: list[bytes]) -> None:
    """Any bytes as memory file names (not UTF-8, control characters, spaces, dots): index and
    search skip or index each, never raise, and the ordinary note is always found."""
    ws = tmp_path_factory.mktemp("fuzz") / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "memory" / "2026-01-02.md").write_text(f"- {PUBLIC_NOTE}\n")
    mem = os.fsencode(str(ws / "memory"))
    for raw in names:
        with open(mem + b"/" + raw + b".md", "wb") as fh:
            fh.write(f"- {BAD_NAME_NOTE}\n".encode())
    with adversary.attempt(f"memory files named {names!r}") as a, Agent.open(ws) as agent:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agent.memory.sync()
            hits = agent.memory.search(f"{PUBLIC_NOTE} {BAD_NAME_NOTE}", min_score=0.0, k=10)
        paths = [h.path for h in hits]
        assert "memory/2026-01-02.md" in paths
        for h in hits:
            h.path.encode("utf-8")  # every path shown is printable
        said = [str(w.message) for w in caught if "skipped" in str(w.message)]
        a.refused(bool(said))
        # every file is either indexed or named in one warning line
        assert len(paths) - 1 + len(said) >= len([n for n in names if not n.startswith(b".")])


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_todays_log_as_a_link_to_a_private_file_reaches_no_prompt(tmp_path: Path, adversary: Any,
                                                                  how: str) -> None:
    """Daily logs reach group and heartbeat prompts: today's log that is a link to USER.md or
    MEMORY.md must not carry them there under a public name."""
    from soulframe._engine.prompt.context import daily_log_names

    ws = _lone(tmp_path, "none")
    with Agent.open(ws) as agent:
        yesterday, today = daily_log_names(agent, Session.group())
        for name, target in ((today, "USER.md"), (yesterday, "MEMORY.md")):
            if how == "symlink":
                os.symlink(f"../{target}", ws / name)
            else:
                os.link(ws / target, ws / name)
        for kind in ("group", "heartbeat"):
            with adversary.attempt(f"today's log as a {how} to USER.md/MEMORY.md in a {kind} prompt") as a:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    text = agent.system_prompt(Session(kind=kind)).text  # type: ignore[arg-type]
                a.leaked(any(s in text for s in PRIVATE[:2]))
                a.refused(any(today in str(w.message) for w in caught))
