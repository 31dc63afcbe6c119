"""The SQLite store runs the memory-store contract (soulframe.testing.StoreContract), with
both of its vector scans: numpy (the default) and sqlite-vec's vec0 KNN."""

from __future__ import annotations

from pathlib import Path

import pytest
from soulframe.testing import StoreContract


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path):
        from soulframe_sqlite.store import SqliteStore

        return lambda key="a": SqliteStore(tmp_path / f"{key}.sqlite")


class TestSqliteStoreWithSqliteVecScan(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path):
        from soulframe_sqlite.store import SqliteStore

        def make(key: str = "a") -> SqliteStore:
            store = SqliteStore(tmp_path / f"{key}.sqlite", vector_scan="sqlite-vec")
            if not store.vec_loaded:
                store.close()
                pytest.skip(f"sqlite-vec does not load here: {store.vec_info}")
            return store

        return make
