"""Run several NumPy forward passes side by side, with BLAS limited to one thread each.

Why: NumPy's element-wise ufuncs (GELU, softmax, LayerNorm: about a third of a MiniLM
forward pass) run on one core, while OpenBLAS spreads each matmul over all cores and then
busy-waits. Two mini-batches in two Python threads (ufuncs and BLAS release the GIL), each
with a single-threaded BLAS, keep both cores busy all the time: measured ~35 % more texts/s
on 2 cores, with bit-identical results.

Setting the thread count is process-wide, so :func:`single_threaded_blas` restores it when
the last concurrent user leaves. It only knows the OpenBLAS that NumPy's own wheels bundle
(``scipy_openblas``); anywhere else (Accelerate on macOS, MKL, a system BLAS) it reports
``False`` and the caller runs its batches one after another instead.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)

_lock = threading.Lock()
_users = 0
_saved = 0
_looked_up = False
#: (get_num_threads, set_num_threads) of NumPy's OpenBLAS, or None
_api: tuple[Any, Any] | None = None


def _find_api() -> tuple[Any, Any] | None:
    import numpy

    root = Path(numpy.__file__).resolve().parent
    candidates = [
        *sorted((root.parent / "numpy.libs").glob("*openblas*")),  # Linux and Windows wheels
        *sorted((root / ".dylibs").glob("*openblas*")),  # macOS x86_64 wheels
    ]
    for lib_path in candidates:
        if lib_path.suffix not in {".so", ".dylib", ".dll"} and ".so." not in lib_path.name:
            continue
        try:
            lib = ctypes.WinDLL(str(lib_path)) if sys.platform == "win32" else ctypes.CDLL(str(lib_path))  # type: ignore[attr-defined]
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            get = getattr(lib, get_name, None)
            set_ = getattr(lib, set_name, None)
            if get is not None and set_ is not None:
                get.restype = ctypes.c_int
                set_.argtypes = [ctypes.c_int]
                set_.restype = None
                return get, set_
    return None


@contextmanager
def single_threaded_blas() -> Iterator[bool]:
    """Limit NumPy's BLAS to one thread inside the block; yields whether it could."""
    global _api, _looked_up, _users, _saved
    with _lock:
        if not _looked_up:
            _looked_up = True
            try:
                _api = _find_api()
            except Exception:  # any surprise here only costs speed, never correctness
                _api = None
        api = _api
        if api is not None:
            if _users == 0:
                _saved = int(api[0]())
                api[1](1)
            _users += 1
    try:
        yield api is not None
    finally:
        if api is not None:
            with _lock:
                _users -= 1
                if _users == 0:
                    api[1](_saved)
