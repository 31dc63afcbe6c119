"""A real keyring backend for the tests: logins read from a JSON file, every lookup logged.

Selected the way a user selects a backend, through keyring's own environment variable:
``PYTHON_KEYRING_BACKEND=fakes.keyring_backend.FileKeyring`` (``tests/`` on ``PYTHONPATH``
in a subprocess), or ``keyring.set_keyring(FileKeyring())`` in the test process.
``SOULFRAME_TEST_KEYRING`` names the file: ``{"service": ["user", "password"]}``; each
lookup appends ``service<TAB>user`` (``-`` for no user) to that path plus ``.asked``, so a
test sees what pip, soulframe or the ``keyring`` command asked for, in order.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.credentials import SimpleCredential


def _store() -> Path:
    return Path(os.environ["SOULFRAME_TEST_KEYRING"])


def asked(store: Path) -> list[tuple[str, str | None]]:
    """Every (service, user) looked up in ``store``, in order."""
    log = store.with_name(store.name + ".asked")
    if not log.exists():
        return []
    rows = [line.split("\t") for line in log.read_text().splitlines()]
    return [(service, None if user == "-" else user) for service, user in rows]


class FileKeyring(KeyringBackend):
    #: never chosen by keyring's own detection: only when named
    priority = -1

    def _logins(self) -> dict[str, list[str]]:
        return json.loads(_store().read_text()) if _store().exists() else {}

    def get_credential(self, service: str, username: str | None) -> SimpleCredential | None:
        store = _store()
        with store.with_name(store.name + ".asked").open("a") as log:
            log.write(f"{service}\t{username if username is not None else '-'}\n")
        found = self._logins().get(service)
        if found is None or (username is not None and username != found[0]):
            return None
        return SimpleCredential(found[0], found[1])

    def get_password(self, service: str, username: str) -> str | None:
        cred = self.get_credential(service, username)
        return cred.password if cred is not None else None

    def set_password(self, service: str, username: str, password: str) -> None:
        logins = self._logins()
        logins[service] = [username, password]
        _store().write_text(json.dumps(logins))

    def delete_password(self, service: str, username: str) -> None:
        logins = self._logins()
        logins.pop(service, None)
        _store().write_text(json.dumps(logins))
