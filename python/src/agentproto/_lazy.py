"""Names a package exports but imports only when first read (PEP 562), so that importing
the package stays cheap: the codec does not pay for asyncio or the roles."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any], sources: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: a name of `sources` is imported from the module
    it maps to on first use and kept in `namespace` (the package's globals) after that."""

    def __getattr__(name: str) -> object:
        module = sources.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
