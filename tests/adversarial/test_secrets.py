"""Secrets never reach a user's screen or the index: keys in URLs (``user:KEY@host``,
``?key=KEY``), API keys in config, credentials an API echoes in an error body. Every secret
format (OpenAI/Anthropic ``sk-``, AWS ``AKIA``, GitHub ``ghp_``, Slack ``xoxb-``, JWTs, PEM
private keys, passwords in URLs) is checked against every surface that shows config or talks
to an embedding API: ``memory index --json``, ``memory search``, ``memory status``,
``models list``, ``skills search``, ``config show`` (text and JSON), config errors, the files
of the index. The embedding API is a real HTTP server on 127.0.0.1 (tests/fakes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes.embeddings_server import FakeEmbeddingsServer

#: one of each credential format, as they look for real (none is a live key)
SECRETS = {
    "openai": "sk-proj-Zq81vXa0KfLw3nQe7TtY2mBs",
    "anthropic": "sk-ant-api03-Hh28dKsl02JdmQpa91Xx",
    "aws": "AKIAIOSFODNN7EXAMPLQ",
    "github": "ghp_R2d2C3p0BB8Lukeskywalker12345",
    "slack": "xoxb-2048-4096-Ab9Cd8Ef7Gh6",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZTQyIn0.Xk2v9Q4pLw8mZr1sTy6Ua",
    "url-password": "hunter2-Pa55w0rd-9917",
}
def planted(kind: str) -> str:
    """How a secret of ``kind`` appears in text: as itself, or inside a URL."""
    if kind == "pem":
        return PEM
    if kind == "url-password":
        return f"postgresql://soul:{SECRETS[kind]}@db.example:5432/soul"
    return SECRETS[kind]


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----"


def leaked(text: str, secrets: list[str]) -> list[str]:
    """The secrets (or their distinctive middle, which a partial echo would still carry)
    that appear in ``text``."""
    return [s for s in secrets if s in text or s[6:-4] in text]


def index_files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and p.suffix in (".sqlite", ".json", ".jsonl", ".log", "")]


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2026-03-01.md").write_text("# 2026-03-01\n- ordered oat milk for the office\n")
    skill = workspace / "skills" / "oat-milk"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: oat-milk\ndescription: order oat milk for the office\n---\nBody\n")
    return workspace


def test_a_key_in_embedding_base_url_is_masked_everywhere(cli, ws: Path, adversary, _isolated_home: Path) -> None:
    key = SECRETS["url-password"]
    with FakeEmbeddingsServer(dims=8) as srv:
        host = srv.url.removeprefix("http://")
        (ws / "soulframe.toml").write_text(
            "[embedding]\nprovider = \"openai-compatible\"\nmodel = \"nomic\"\nmax_retries = 0\n"
            f"base_url = \"http://alice:{key}@{host}/v1?key={key}&api_key={key}&token={key}\"\n"
        )
        os.chmod(ws / "soulframe.toml", 0o600)
        surfaces = [
            ("memory", "index", "--json"), ("memory", "search", "oat milk"),
            ("memory", "search", "oat milk", "--json"), ("memory", "status"),
            ("memory", "status", "--json"), ("models", "list"), ("skills", "search", "oat"),
            ("config", "show"), ("config", "show", "--json"), ("doctor",),
        ]
        for args in surfaces:
            with adversary.attempt(f"base_url key via {' '.join(args)}") as a:
                out = cli("-w", str(ws), *args)
                adversary.traceback(" ".join(args), out.stderr)
                a.leaked(bool(leaked(out.stdout + out.stderr, [key])))
        # the key still works: the request went out, with the key sent as HTTP auth
        assert srv.requests, "the embedding server was never called"
        assert srv.requests[0].headers.get("authorization", "").startswith("Basic ")
        # the server now fails, echoing what it got in its error body
        srv.fail_next(401, times=20, body={"error": {"message": f"bad credentials {key} for alice"}})
        (ws / "memory" / "2026-03-02.md").write_text("- new note about rye bread\n")
        for args in [("memory", "index", "--json"), ("memory", "search", "rye bread"), ("skills", "search", "rye")]:
            with adversary.attempt(f"echoed key via {' '.join(args)}") as a:
                out = cli("-w", str(ws), *args)
                adversary.traceback(" ".join(args), out.stderr)
                a.leaked(bool(leaked(out.stdout + out.stderr, [key])))
    with adversary.attempt("base_url key stored in the index") as a:
        for path in index_files(_isolated_home):
            a.leaked(key.encode() in path.read_bytes())


def test_error_bodies_never_carry_a_credential(cli, ws: Path, adversary) -> None:
    # every format in one body: one run checks them all
    body = " | ".join(planted(kind) for kind in [*SECRETS, "pem"])
    with FakeEmbeddingsServer(dims=8) as srv:
        (ws / "soulframe.toml").write_text(
            "[embedding]\nprovider = \"openai-compatible\"\nmodel = \"nomic\"\nmax_retries = 0\n"
            f"base_url = \"{srv.openai_base_url}\"\n"
        )
        srv.fail_next(500, times=10, body={"error": {"message": f"upstream said: {body} (retry)"}})
        for args in (("memory", "index", "--json"), ("memory", "search", "oat milk")):
            with adversary.attempt(f"credentials in an error body via {' '.join(args)}") as a:
                out = cli("-w", str(ws), *args)
                adversary.traceback(" ".join(args), out.stderr)
                assert "HTTP 500" in out.stdout + out.stderr, out.stdout + out.stderr
                assert "upstream said" in out.stdout + out.stderr  # the rest of the detail stays
                for kind, secret in [*SECRETS.items(), ("pem", "MIIEowIBAAKCAQEAu1SU1Lf")]:
                    with adversary.attempt(f"{kind} in an error body via {' '.join(args)}") as b:
                        b.leaked(secret in out.stdout + out.stderr)
                a.leaked(False)


@pytest.mark.parametrize("kind", [*SECRETS, "pem"])
def test_config_errors_never_echo_a_secret(workspace: Path, adversary, kind: str) -> None:
    from soulframe._engine.config import load_config
    from soulframe._engine.model import ConfigError

    secret = planted(kind)
    needle = "MIIEowIBAAKCAQEAu1SU1Lf" if kind == "pem" else SECRETS[kind]
    cases = {
        # a secret put under a key of the wrong type
        "embedding.max_retries": f"[embedding]\nmax_retries = {json.dumps(secret)}\n",
        # a secret key given a value of the wrong type: its value is never shown either
        "model.api_key": "[model]\napi_key = [" + json.dumps(secret) + "]\n",
        # a bad choice
        "sandbox.access": f"[sandbox]\naccess = {json.dumps(secret)}\n",
    }
    cfg = workspace / "soulframe.toml"
    for key, text in cases.items():
        cfg.write_text("# settings\n" + text)
        with adversary.attempt(f"config error for {key} = {kind}") as a:
            with pytest.raises(ConfigError) as info:
                load_config(cfg, workspace=workspace)
            a.refused()
            message = str(info.value)
            # names the file, the line, the key and the type expected
            assert message.startswith(f"{cfg} line 3: {key}") and "expected" in message, message
            a.leaked(needle in message or needle[3:12] in message)


def test_a_config_error_on_the_command_line_is_one_line_without_the_secret(
    cli, workspace: Path, adversary
) -> None:
    cfg = workspace / "soulframe.toml"
    cfg.write_text(f"# settings\n[embedding]\nmax_retries = \"{SECRETS['openai']}\"\n")
    with adversary.attempt("config error on the command line") as a:
        out = cli("-w", str(workspace), "config", "show")
        adversary.traceback("config show", out.stderr)
        assert out.returncode == 2
        a.refused()
        assert out.stderr.strip().splitlines() == [
            f"Error: {cfg} line 3: embedding.max_retries = (a string, hidden: it looks like a secret) "
            "— expected int"]
        a.leaked(SECRETS["openai"][3:12] in out.stderr)


def test_config_show_masks_every_secret(cli, workspace: Path, adversary) -> None:
    s = SECRETS
    (workspace / "soulframe.toml").write_text(
        f"[embedding]\napi_key = \"{s['openai']}\"\nbase_url = \"https://u:{s['url-password']}@emb.example/v1?sig={s['jwt']}\"\n"
        f"[model]\napi_key = \"{s['anthropic']}\"\nbase_url = \"https://llm.example/v1?api_key={s['aws']}\"\n"
        f"[store]\ndsn = \"postgresql://soul:{s['url-password']}@db.example/soul\"\n"
        f"[prompt]\nextra = \"deploy with {s['github']}\"\n"
        f"[plugins.config.notify]\ntoken = \"{s['slack']}\"\nprivate_key = {json.dumps(PEM)}\nchannel = \"#ops\"\n"
    )
    os.chmod(workspace / "soulframe.toml", 0o600)
    secrets = [*s.values(), "MIIEowIBAAKCAQEAu1SU1Lf"]
    for args in [("config", "show"), ("config", "show", "--json")]:
        with adversary.attempt(f"secrets via {' '.join(args)}") as a:
            out = cli("-w", str(workspace), *args)
            adversary.traceback(" ".join(args), out.stderr)
            assert out.returncode == 0, out.stderr
            a.leaked(bool(leaked(out.stdout + out.stderr, secrets)))
            # what is not secret is still shown, so the output stays useful
            assert "emb.example" in out.stdout and "db.example" in out.stdout
            assert "#ops" in out.stdout or "--json" not in args


def test_doctor_flags_a_config_file_with_a_key_that_others_can_read(cli, workspace: Path, adversary) -> None:
    cli("init", str(workspace), check=True)
    cfg = workspace / "soulframe.toml"
    cfg.write_text(f"[model]\napi_key = \"{SECRETS['openai']}\"\n")
    cfg.chmod(0o644)
    with adversary.attempt("a readable config file holding a key") as a:
        out = cli("-w", str(workspace), "doctor")
        adversary.traceback("doctor", out.stderr)
        assert out.returncode == 1
        assert f"chmod 600 {cfg}" in out.stdout, out.stdout
        assert "model.api_key" in out.stdout
        a.refused()
        a.leaked(SECRETS["openai"] in out.stdout + out.stderr)
    cfg.chmod(0o600)
    out = cli("-w", str(workspace), "doctor", "--json")
    assert not [f for f in json.loads(out.stdout)["findings"] if str(cfg) == f.get("path")]
    # a readable file holding no secret is not a problem
    cfg.write_text("[memory]\nmax_results = 4\n")
    cfg.chmod(0o644)
    out = cli("-w", str(workspace), "doctor", "--json")
    assert not [f for f in json.loads(out.stdout)["findings"] if str(cfg) == f.get("path")]


def test_chat_model_error_bodies_never_carry_a_credential(workspace: Path, cli, adversary) -> None:
    from fakes.llm_server import FakeLLMServer, fail

    cli("init", str(workspace), check=True)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT\n- check the backup job\n")
    body = " ".join(planted(kind) for kind in [*SECRETS, "pem"])
    with FakeLLMServer([fail(400, f"rejected: {body}")] * 3) as srv:
        host = srv.url.removeprefix("http://")
        key = SECRETS["openai"]
        cfg = workspace / "soulframe.toml"
        cfg.write_text(f"[model]\nprovider = \"openai-compatible\"\nname = \"m\"\nmax_retries = 0\n"
                       f"base_url = \"http://bob:{SECRETS['url-password']}@{host}/v1\"\napi_key = \"{key}\"\n")
        cfg.chmod(0o600)
        with adversary.attempt("credentials echoed by a chat API via heartbeat") as a:
            out = cli("-w", str(workspace), "heartbeat")
            adversary.traceback("heartbeat", out.stderr)
            assert out.returncode != 0 and "HTTP 400" in out.stdout + out.stderr, out.stderr
            shown = out.stdout + out.stderr + "".join(
                p.read_text() for p in (workspace / "memory").glob("*.md"))
            a.leaked(bool(leaked(shown, [*SECRETS.values(), "MIIEowIBAAKCAQEAu1SU1Lf"])))


def test_every_query_value_and_userinfo_of_an_endpoint_is_masked(cli, ws: Path, adversary, _isolated_home: Path) -> None:
    # credentials under plain names (?code=, ?k=) and a name no list knows (?x-sess=)
    values = ["Pa55-alice-7731", "authcode-90210-zz", "kvalue-4455-qq", "custom-77-sess-xy"]
    with FakeEmbeddingsServer(dims=8) as srv:
        host = srv.url.removeprefix("http://")
        base = f"http://alice:{values[0]}@{host}/v1?code={values[1]}&k={values[2]}&x-sess={values[3]}"
        (ws / "soulframe.toml").write_text(
            "[embedding]\nprovider = \"openai-compatible\"\nmodel = \"nomic\"\nmax_retries = 0\n"
            f"base_url = \"{base}\"\n"
            "[model]\nprovider = \"openai-compatible\"\nname = \"m\"\nmax_retries = 0\n"
            f"base_url = \"{base}\"\n")
        os.chmod(ws / "soulframe.toml", 0o600)
        surfaces = [("memory", "index", "--json"), ("memory", "search", "oat milk"),
                    ("-vv", "memory", "search", "oat milk"), ("memory", "status", "--json"),
                    ("models", "list"), ("models", "list", "--json"), ("config", "show"),
                    ("config", "show", "--json"), ("config", "get", "embedding.base_url"),
                    ("config", "get", "model.base_url", "--json"), ("doctor",)]
        for args in surfaces:
            with adversary.attempt(f"endpoint query values via {' '.join(args)}") as a:
                out = cli("-w", str(ws), *args)
                adversary.traceback(" ".join(args), out.stderr)
                a.leaked(bool(leaked(out.stdout + out.stderr, values)))
        assert srv.requests  # the endpoint still works, with its query
        assert srv.requests[0].path.endswith(f"x-sess={values[3]}")
        # a failing endpoint: the warning names the URL, without the values
        srv.fail_next(503, times=20)
        (ws / "memory" / "2026-03-03.md").write_text("- a note about spelt flour\n")
        for args in (("memory", "index", "--json"), ("-vv", "memory", "search", "spelt")):
            with adversary.attempt(f"endpoint query values in a warning via {' '.join(args)}") as a:
                out = cli("-w", str(ws), *args)
                adversary.traceback(" ".join(args), out.stderr)
                assert "503" in out.stdout + out.stderr
                a.leaked(bool(leaked(out.stdout + out.stderr, values)))


def test_backup_never_commits_a_config_or_a_file_holding_a_credential(
        cli, workspace: Path, adversary, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    for key, value in {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
                       "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
                       "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}.items():
        monkeypatch.setenv(key, value)

    cli("init", str(workspace), "--no-download", check=True)
    cfg = workspace / "soulframe.toml"
    for shape in ("http://alice:Pa55-w0rd-11@llm.example/v1", "https://llm.example/v1?code=authcode-90210",
                  "https://llm.example/v1?k=kvalue-4455-qq"):
        cfg.write_text(f'[model]\nprovider = "openai-compatible"\nname = "m"\nbase_url = "{shape}"\n')
        cfg.chmod(0o600)
        subprocess.run(["rm", "-rf", str(workspace / ".git"), str(workspace / ".gitignore")], check=True)
        with adversary.attempt(f"backup init with base_url {shape.split('//')[1][:18]}") as a:
            out = cli("-w", str(workspace), "backup", "init")
            adversary.traceback("backup init", out.stderr)
            assert out.returncode == 0, out.stderr
            committed = subprocess.run(["git", "-C", str(workspace), "log", "-p", "--all"],
                                       capture_output=True, text=True).stdout
            a.refused("soulframe.toml" in (workspace / ".gitignore").read_text())
            a.leaked(shape in committed or "soulframe.toml" in subprocess.run(
                ["git", "-C", str(workspace), "ls-files"], capture_output=True, text=True).stdout)
    # a key pasted into a memory file by hand: the commit is refused, naming file and line
    for kind in ("openai", "github", "jwt", "pem"):
        (workspace / "memory").mkdir(exist_ok=True)
        note = workspace / "memory" / "2026-03-09.md"
        note.write_text(f"# 2026-03-09\n\n- lunch\n- the key: {planted(kind)}\n")
        with adversary.attempt(f"backup of a memory file holding a {kind} secret") as a:
            out = cli("-w", str(workspace), "backup", "commit")
            adversary.traceback("backup commit", out.stderr)
            assert out.returncode != 0 and "memory/2026-03-09.md line 4" in out.stderr, out.stderr
            a.refused()
            shown = subprocess.run(["git", "-C", str(workspace), "log", "-p", "--all"],
                                   capture_output=True, text=True).stdout + out.stdout + out.stderr
            a.leaked(bool(leaked(shown, [SECRETS.get(kind, "MIIEowIBAAKCAQEAu1SU1Lf")])))
        note.unlink()


def test_secrets_written_by_hand_are_named_by_doctor_and_masked_for_the_model(
        cli, workspace: Path, adversary, tmp_path: Path) -> None:
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config
    from soulframe._engine.model import Session
    from soulframe._engine.tools import dispatch

    cli("init", str(workspace), "--no-download", check=True)
    kinds = [*SECRETS, "pem"]
    (workspace / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(
        f"- {kind}: {planted(kind)} (from the onboarding doc)\n" for kind in kinds))
    (workspace / "TOOLS.md").write_text("# TOOLS\n\nDeploy with token ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp.\n")
    needles = [*SECRETS.values(), "MIIEowIBAAKCAQEAu1SU1Lf", "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp"]
    with adversary.attempt("doctor on secrets written into memory by hand") as a:
        out = cli("-w", str(workspace), "doctor")
        adversary.traceback("doctor", out.stderr)
        assert out.returncode == 1
        for n, kind in enumerate(kinds):
            assert f"MEMORY.md line {3 + n}: a secret" in out.stdout, (kind, out.stdout)
        assert "TOOLS.md line 3: a secret (github-token)" in out.stdout
        a.refused()
        a.leaked(bool(leaked(out.stdout + out.stderr, needles)))
    agent = Agent(load_config(search=False, workspace=workspace, overrides={
        "embedding.provider": "none", "state_dir": str(tmp_path / "state")}))
    seen = {
        "main prompt": agent.system_prompt(Session.main()).text,
        "group prompt": agent.system_prompt(Session.group(channel="team")).text,
        "memory_get": str(dispatch(agent, "memory_get", {"path": "MEMORY.md", "lines": 50}, session=Session.main())),
        "memory_search": str(dispatch(agent, "memory_search", {"query": "onboarding doc", "min_score": 0,
                                                               "max_results": 20}, session=Session.main())),
    }
    assert "from the onboarding doc" in seen["memory_get"] and "onboarding" in seen["memory_search"]
    for where, text in seen.items():
        with adversary.attempt(f"a hand-written secret via {where}") as a:
            a.leaked(bool(leaked(text, needles)))
    with adversary.attempt("a hand-written secret stored in the index") as a:
        for path in index_files(tmp_path / "state"):
            data = path.read_bytes()
            a.leaked(any(n.encode() in data for n in needles))
    # the user may opt out: then the model gets the file as written
    agent = Agent(load_config(search=False, workspace=workspace, overrides={
        "embedding.provider": "none", "state_dir": str(tmp_path / "state"), "memory.mask_secrets": False}))
    got = str(dispatch(agent, "memory_get", {"path": "MEMORY.md", "lines": 50}, session=Session.main()))
    assert SECRETS["openai"] in got and SECRETS["openai"] in agent.system_prompt(Session.main()).text
