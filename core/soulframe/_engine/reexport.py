"""How the public kits re-export engine names without importing the engine up front.

``soulframe.kit``, ``soulframe.memorykit`` and ``soulframe.cli`` each hold a table of public
name -> engine module; a name's module is imported the first time the name is read (PEP 562
module ``__getattr__``), so ``from soulframe.kit import post_json`` costs the one helper it
needs and ``soulframe prompt`` never imports what it does not use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    module_name: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a kit module.

    ``homes`` maps each public name to ``module`` or ``module:attribute`` (when the public
    name differs from the engine's). A name read once is kept in the kit's namespace, so
    later reads are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module, _, attr = home.partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        vars(sys.modules[module_name])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module_name])) | set(public))

    return __getattr__, __dir__
