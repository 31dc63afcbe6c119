"""The vectors of the index, held in memory as one float32 matrix and scanned with numpy.

Measured on this project's machines (DEPENDENCIES.md): ``X @ q`` + ``argpartition`` over
100k x 384 float32 takes 7-16 ms, sqlite-vec's ``vec0`` 55-90 ms. So vectors are *stored*
in SQLite but *scanned* here. The matrix is loaded once and refreshed incrementally when the
index changes: vector rows are immutable (a changed file gets new rows), so a refresh keeps
the rows whose ids still exist for the same chunk text and fetches only the others. The text
(its hash) matters because SQLite reuses the highest rowid once it is deleted: another
process appending to today's log replaces its last chunk by one with the same id.

This module imports numpy at the top; it is only imported when a vector search runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

_ROWS_SQL = """
    SELECT v.id, v.chunk_id, f.private, f.scope, v.embedding, c.hash
    FROM vectors v JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.id = c.file_id
"""


class VectorMatrix:
    """Every stored vector, with the chunk, visibility and scope of each row."""

    def __init__(self) -> None:
        self.generation: str | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.chunk_ids = np.zeros(0, dtype=np.int64)
        self.private = np.zeros(0, dtype=bool)
        self.scopes: list[str] = []
        #: the hash of each row's chunk text: a reused id with other text is a new row
        self.hashes: list[str] = []
        self.matrix: F32 = np.zeros((0, 0), dtype=np.float32)
        self.dims: int | None = None
        #: ids of rows of another size (an old model's, mid re-embedding)
        self.skipped: set[int] = set()
        self.scope_values: frozenset[str] = frozenset()
        #: :meth:`_chunk_starts`, and the ``chunk_ids`` array it was computed for
        self._starts: npt.NDArray[np.intp] | None = None
        self._starts_of: Any = None
        #: :meth:`_chunk_rows`: the chunk ids in sorted order (and the permutation, when
        #: the rows are not), for the ``chunk_ids`` array they were computed for
        self._sorted_ids: npt.NDArray[np.int64] = self.chunk_ids
        self._order: npt.NDArray[np.intp] | None = None
        self._order_of: Any = None

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def refresh(self, conn: Any, generation: str | None, dims: int | None) -> None:
        """Bring the matrix up to date with the database (cheap when nothing changed).

        Only rows of ``dims`` dimensions (the current model's) are loaded: while a model
        change is being re-embedded the table briefly holds both sizes.
        """
        if dims is None:
            self.__init__()  # type: ignore[misc]
            self.generation = generation
            return
        if generation is not None and generation == self.generation and dims == self.dims:
            return
        if dims != self.dims:
            self.__init__()  # type: ignore[misc]
            self.dims = dims
            self.matrix = np.zeros((0, dims), dtype=np.float32)
        if not len(self) and not self.skipped:
            # a first load — every new process, each `soulframe memory search`: one scan
            # of the rows, not their ids and hashes first and then the rows (that took
            # twice as long, growing with the index)
            self._append(conn.execute(_ROWS_SQL + " ORDER BY v.id").fetchall(), dims)
            self.scope_values = frozenset(self.scopes)
            self.generation = generation
            return
        rows = conn.execute(
            "SELECT v.id, c.hash FROM vectors v JOIN chunks c ON c.id = v.chunk_id ORDER BY v.id"
        ).fetchall()
        current = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        text_of = dict(rows)
        keep = np.fromiter((text_of.get(i) == h for i, h in zip(self.ids.tolist(), self.hashes, strict=True)),
                           dtype=bool, count=len(self.hashes))
        if not keep.all():
            self.ids = self.ids[keep]
            self.chunk_ids = self.chunk_ids[keep]
            self.private = self.private[keep]
            self.scopes = [s for s, k in zip(self.scopes, keep.tolist(), strict=True) if k]
            self.hashes = [h for h, k in zip(self.hashes, keep.tolist(), strict=True) if k]
            self.matrix = self.matrix[keep]
        self.skipped &= set(current.tolist()) if self.skipped else set()
        new_ids = np.setdiff1d(current, self.ids, assume_unique=True)
        if self.skipped:
            new_ids = new_ids[~np.isin(new_ids, np.fromiter(self.skipped, dtype=np.int64))]
        if new_ids.size:
            self._append(self._fetch(conn, new_ids), dims)
        self.scope_values = frozenset(self.scopes)
        self.generation = generation

    def _append(self, rows: Sequence[tuple[Any, ...]], dims: int) -> None:
        """Add fetched rows (:data:`_ROWS_SQL`); a row of another size is skipped."""
        width = dims * 4
        good = [r for r in rows if len(r[4]) == width]
        self.skipped.update(r[0] for r in rows if len(r[4]) != width)
        if not good:
            return
        # no astype: the concatenate below copies into native float32 anyway
        mat = np.frombuffer(b"".join(r[4] for r in good), dtype="<f4").reshape(len(good), dims)
        self.ids = np.concatenate([self.ids, np.array([r[0] for r in good], dtype=np.int64)])
        self.chunk_ids = np.concatenate(
            [self.chunk_ids, np.array([r[1] for r in good], dtype=np.int64)]
        )
        self.private = np.concatenate(
            [self.private, np.array([bool(r[2]) for r in good], dtype=bool)]
        )
        self.scopes.extend(str(r[3]) for r in good)
        self.hashes.extend(str(r[5]) for r in good)
        self.matrix = np.concatenate([self.matrix, mat])
        # rows of one chunk must stay together (reduceat in search): ids are
        # assigned in one transaction per file, so id order keeps them contiguous
        order = np.argsort(self.ids, kind="stable")
        if not (order == np.arange(order.size)).all():
            self.ids = self.ids[order]
            self.chunk_ids = self.chunk_ids[order]
            self.private = self.private[order]
            self.scopes = [self.scopes[i] for i in order.tolist()]
            self.hashes = [self.hashes[i] for i in order.tolist()]
            self.matrix = self.matrix[order]

    @staticmethod
    def _fetch(conn: Any, ids: npt.NDArray[np.int64]) -> list[tuple[Any, ...]]:
        if ids.size > 5000:  # a large share of the table: one scan beats many IN lists
            wanted = set(ids.tolist())
            return [r for r in conn.execute(_ROWS_SQL + " ORDER BY v.id") if r[0] in wanted]
        out: list[tuple[Any, ...]] = []
        id_list = ids.tolist()
        for start in range(0, len(id_list), 900):
            part = id_list[start : start + 900]
            marks = ",".join("?" * len(part))
            out.extend(conn.execute(_ROWS_SQL + f" WHERE v.id IN ({marks}) ORDER BY v.id", part))
        return out

    def search(
        self, query: F32, limit: int, *, include_private: bool, scopes: Sequence[str]
    ) -> list[tuple[int, float]]:
        """``(chunk_id, cosine)`` of the ``limit`` most similar chunks, best first. A chunk
        embedded as several windows scores its best window."""
        n = len(self)
        if n == 0 or limit <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.matrix.shape[1]:
            raise ValueError(
                f"query vector has {q.shape[0]} dimensions, the index {self.matrix.shape[1]}"
                " (the embedding model changed: run `soulframe memory index`)"
            )
        scores = self.matrix @ q
        mask = None
        if not include_private:
            mask = ~self.private
        if any(s not in scopes for s in self.scope_values):
            allowed = set(scopes)
            smask = np.fromiter((s in allowed for s in self.scopes), dtype=bool, count=n)
            mask = smask if mask is None else (mask & smask)
        if mask is not None:
            scores = np.where(mask, scores, np.float32(-np.inf))
        chunk_ids = self.chunk_ids
        starts = self._chunk_starts()
        if starts is not None:
            scores = np.maximum.reduceat(scores, starts)
            chunk_ids = chunk_ids[starts]
        top = top_k(scores, limit)
        return [
            (int(chunk_ids[i]), float(scores[i])) for i in top.tolist() if np.isfinite(scores[i])
        ]

    def _chunk_starts(self) -> npt.NDArray[np.intp] | None:
        """The first row of each chunk, when some chunk has several rows (else ``None``);
        computed once per refresh, not per search."""
        if self._starts_of is not self.chunk_ids:
            c = self.chunk_ids
            multi = c.shape[0] > 1 and bool((c[1:] == c[:-1]).any())
            self._starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if multi else None
            self._starts_of = c
        return self._starts

    def mean_vectors(self, chunk_ids: Sequence[int]) -> dict[int, F32]:
        """One unit vector per chunk (the normalised mean of its windows). A search asks
        for its ~100 vector candidates' (memory.chunk_context), so the rows of each chunk
        are found by binary search over the sorted chunk ids, not by a scan of all rows."""
        out: dict[int, F32] = {}
        if not len(self) or not chunk_ids:
            return out
        first, stop = self._chunk_rows(np.unique(np.asarray(list(chunk_ids), dtype=np.int64)))
        found = stop > first
        if not found.any():
            return out
        first, stop = first[found], stop[found]
        lengths = stop - first
        offsets = np.r_[0, np.cumsum(lengths)[:-1]]
        total = int(lengths.sum())
        rows = np.repeat(first - offsets, lengths) + np.arange(total)
        # the sums as one product with a 0/1 matrix (chunk x row): a BLAS call, where
        # ``np.add.reduceat`` along the rows of a 2-D array took ~0.3 ms for 100 chunks
        owner = np.zeros((lengths.shape[0], total), dtype=np.float32)
        owner[np.repeat(np.arange(lengths.shape[0]), lengths), np.arange(total)] = 1.0
        sums = owner @ self.matrix[rows]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        sums = sums / np.where(norms > 0, norms, np.float32(1))
        for cid, vec in zip(self.chunk_ids[first].tolist(), sums.astype(np.float32), strict=True):
            out[int(cid)] = vec
        return out

    def _chunk_rows(self, wanted: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """The first row and the row after the last of each ``wanted`` chunk (equal when it
        has none). Rows are ordered by vector id, which follows chunk id except where
        SQLite reused an id: then the rows are sorted by chunk id once per refresh."""
        if self._order_of is not self.chunk_ids:
            c = self.chunk_ids
            ordered = c.shape[0] < 2 or bool((c[1:] >= c[:-1]).all())
            self._order = None if ordered else np.argsort(c, kind="stable")
            self._sorted_ids = c if ordered else c[self._order]
            self._order_of = c
        lo = np.searchsorted(self._sorted_ids, wanted, side="left")
        hi = np.searchsorted(self._sorted_ids, wanted, side="right")
        if self._order is None:
            return lo, hi
        # unsorted rows: a chunk's rows are still contiguous (refresh keeps them together),
        # so its first row in sorted order names where they start
        first = np.where(hi > lo, self._order[np.minimum(lo, len(self._order) - 1)], 0)
        return first, first + (hi - lo)


#: rows per block in :func:`top_k`'s first pass
BLOCK = 64


def top_k(scores: F32, k: int) -> npt.NDArray[np.intp]:
    """The indices of the ``k`` largest ``scores``, best first (ties by index).

    The same rows as an ``argpartition`` of all of them (which costs ~1 ms at 100k rows,
    more than everything else a search does with the scores), found in two passes: the
    k-th largest of the blocks' maxima is a floor no row of the top k lies below (k blocks
    hold a row at least that high), so only the rows at or above it are ranked."""
    n = int(scores.shape[0])
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    candidates = np.arange(n)
    if n > 8 * BLOCK * k:
        whole = n - n % BLOCK  # the last, partial block is one more maximum
        maxima = scores[:whole].reshape(-1, BLOCK).max(axis=1)
        if whole < n:
            maxima = np.append(maxima, scores[whole:].max())
        floor = np.partition(maxima, maxima.shape[0] - k)[maxima.shape[0] - k]
        candidates = np.flatnonzero(scores >= floor)
    if candidates.shape[0] > k:  # many rows at the floor (a filter's -inf): partition them
        candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
    # lexsort: the last key is the primary one (score, descending), then the row
    return candidates[np.lexsort((candidates, -scores[candidates]))]
