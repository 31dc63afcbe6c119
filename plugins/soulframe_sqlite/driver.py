"""Which SQLite driver to use, and loading sqlite-vec where it can be loaded.

``sqlean`` (sqlean-py) is preferred: it bundles a recent SQLite with FTS5 and can load
extensions. The standard library's ``sqlite3`` is the fallback; on many builds (this
project's CI machine, some macOS and pyenv Pythons) it cannot load extensions, so sqlite-vec
is then unavailable. Vector search does not depend on it (vectors are scanned with numpy).
"""

from __future__ import annotations

import types
from typing import Any


def sqlite_module() -> tuple[types.ModuleType, str]:
    """The DB-API module and a label for ``memory status``."""
    try:
        import sqlean

        if not hasattr(sqlean, "connect"):  # the empty 0.1 placeholder wheel
            raise ImportError("sqlean placeholder")
        return sqlean, "sqlean"
    except ImportError:
        import sqlite3

        return sqlite3, "sqlite3"


def load_sqlite_vec(conn: Any) -> tuple[bool, str]:
    """Try to load sqlite-vec into ``conn``. Returns (loaded, version or the reason not)."""
    if not hasattr(conn, "enable_load_extension"):
        return False, "this Python's sqlite3 cannot load extensions (install sqlean-py)"
    try:
        import sqlite_vec  # 80-140 ms (imports numpy.typing): only here, on open

        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        version = conn.execute("SELECT vec_version()").fetchone()[0]
        return True, str(version)
    except ImportError:
        return False, "sqlite-vec is not installed (pip install 'soulframe[sqlite-vec]')"
    except Exception as exc:  # a broken or incompatible binary: say it, scan with numpy
        return False, f"sqlite-vec failed to load: {type(exc).__name__}: {exc}"
