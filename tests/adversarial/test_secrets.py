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
    from soulframe.config import load_config
    from soulframe.model import ConfigError

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
