"""The assignment and bidding methods: pure modules, looked up by name."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType


class _Modules(Mapping[str, ModuleType]):
    """Method name -> its module, imported when first looked up: the Blind
    Auction's path (and a mail that needs no method) must not pay for the
    preference method's numpy and solver."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths

    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(self._paths[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


# The names are each module's NAME (tests/test_startup.py checks they agree).
METHODS: Mapping[str, ModuleType] = _Modules({
    "blind-auction": "judge.methods.blind_auction", "preference": "judge.methods.preference",
    "random": "judge.methods.random_assign", "blind-random": "judge.methods.blind_random"})
ALIASES = {"blind": "blind-auction", "auction": "blind-auction", "ba": "blind-auction",
           "pref": "preference", "preferences": "preference", "njudge": "preference"}


class UnknownMethod(ValueError):
    pass


def get_method(name: str) -> ModuleType:
    key = ALIASES.get(name.casefold(), name.casefold())
    if key not in METHODS:
        raise UnknownMethod(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}")
    return METHODS[key]
