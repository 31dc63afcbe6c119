"""numpy <-> pgvector ``vector`` adapters for psycopg, in pgvector's binary format.

pgvector-python's adapters wrap every array in a ``Vector`` object and format text with a
Python loop per float; these go straight between float32 arrays and the wire format
(int16 dimensions, int16 unused, then big-endian float32s), which matters when a sync
writes thousands of vectors. Use ``%b`` placeholders to send vectors in binary, and a
``binary=True`` cursor to read them.

numpy is imported on the first vector sent or read, not when a connection is set up, so
reading context files from the store costs no numpy import.
"""

from __future__ import annotations

import struct
from typing import Any

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

_HEADER = struct.Struct(">HH")


def to_binary(vec: Any) -> bytes:
    import numpy as np

    arr = np.asarray(vec, dtype=">f4").reshape(-1)
    return _HEADER.pack(arr.shape[0], 0) + arr.tobytes()


def from_binary(data: Any) -> Any:
    import numpy as np

    buf = bytes(data)
    (dims, _) = _HEADER.unpack_from(buf)
    return np.frombuffer(buf, dtype=">f4", count=dims, offset=4).astype(np.float32)


def to_text(vec: Any) -> str:
    import numpy as np

    arr = np.asarray(vec, dtype=np.float32).reshape(-1)
    return "[" + ",".join(repr(float(x)) for x in arr.tolist()) + "]"


def from_text(data: Any) -> Any:
    import numpy as np

    text = bytes(data).decode("ascii").strip()[1:-1]
    if not text:
        return np.zeros(0, dtype=np.float32)
    return np.array(text.split(","), dtype=np.float32)


def register(conn: Any) -> None:
    """Teach ``conn`` to send numpy arrays as ``vector`` and read ``vector`` as arrays."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        import psycopg

        raise psycopg.ProgrammingError("the pgvector type 'vector' is not in this database")
    info.register(conn)  # so COPY ... set_types(["vector"]) knows the name
    oid = info.oid

    class _Text(Dumper):
        format = Format.TEXT

        def dump(self, obj: Any) -> bytes:
            return to_text(obj).encode("ascii")

    class _Binary(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            return to_binary(obj)

    class _TextLoader(Loader):
        format = Format.TEXT

        def load(self, data: Any) -> Any:
            return from_text(data)

    class _BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> Any:
            return from_binary(data)

    _Text.oid = oid
    _Binary.oid = oid
    adapters = conn.adapters
    adapters.register_dumper("numpy.ndarray", _Text)
    adapters.register_dumper("numpy.ndarray", _Binary)
    adapters.register_loader(oid, _TextLoader)
    adapters.register_loader(oid, _BinaryLoader)
