"""Every method the judge knows: one line each, name -> its package.

The only place the shell finds a method. A package is imported when its
method is first looked up (a Blind Auction's mail must not load the
preference solver); each package's `METHOD` follows judge.methods.interface.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType

from judge.methods.interface import Method

PACKAGES = {
    "blind-auction": "judge.methods.blind_auction",
    "preference": "judge.methods.preference",
    "random": "judge.methods.random_assign",
    "blind-random": "judge.methods.blind_random",
    "lui": "judge.methods.lui",
    "pt3": "judge.methods.pt3",
    "payola": "judge.methods.payola",
}

# A method with a table of its own in the configuration (judge/tables.py):
# name -> the module that declares and reads it. judge.config reads these at
# every start, so each module is light (no engine, no store).
TABLES = {
    "blind-random": "judge.methods.blind_random.settings",
}


# A method with compiled code kept in the data directory's cache: name -> the
# module that keeps it (`used(data_dir, daemon=)` for a command's time,
# `use(data_dir, daemon=)`, `building_in_background()` around the daemon's
# loop, `compile_now()` for `judge compile`). Every `judge` command reads
# these at its start, so each module is light.
CACHES = {
    "preference": "judge.methods.preference.compiled_cache",
}


class _Methods(Mapping[str, Method]):
    """Method name -> its Method, the package imported when first looked up."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths
        # Each Method once imported: a mail's commands look their game's
        # method up dozens of times (import_module each time was a sixth of
        # a backlog's command time).
        self._loaded: dict[str, Method] = {}

    def __getitem__(self, name: str) -> Method:
        path = self._paths[name]  # by module: a test may point a name to another package
        method = self._loaded.get(path)
        if method is None:
            method = self._loaded[path] = importlib.import_module(path).METHOD
        return method

    def __contains__(self, name: object) -> bool:
        return name in self._paths  # without importing the package

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


# The names are each package's METHOD.NAME (tests/test_startup.py checks they agree).
METHODS: Mapping[str, Method] = _Methods(PACKAGES)


class UnknownMethod(ValueError):
    pass


class _Aliases(Mapping[str, str]):
    """Alias -> method name, from each package's ALIASES (read when first used)."""

    def _table(self) -> dict[str, str]:
        return {alias: name for name in METHODS for alias in METHODS[name].ALIASES}

    def __getitem__(self, alias: str) -> str:
        return self._table()[alias]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


ALIASES: Mapping[str, str] = _Aliases()


def get_method(name: str) -> Method:
    key = name.casefold()
    if key not in METHODS:
        key = ALIASES.get(key, key)
    if key not in METHODS:
        raise UnknownMethod(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}")
    return METHODS[key]


def method_of(game) -> Method:  # noqa: ANN001 (a store Game: not imported here)
    """The Method of a stored game."""
    return get_method(game.method)


# What the shell takes from every method at once (each from the method's
# declarations: judge.methods.interface).

def cli_commands() -> dict[str, str]:
    """Every method's `judge` subcommands (its CLI): name -> "module:attribute"."""
    return {name: target for m in METHODS for name, target in METHODS[m].CLI.items()}


def caches() -> list[ModuleType]:
    """The CACHES modules of the methods with compiled code of their own."""
    return [importlib.import_module(path) for path in CACHES.values()]


def protocols() -> list[ModuleType]:
    """The THIRD_PARTIES modules of the methods that run one with other judges."""
    return [p.load() for m in METHODS if (p := METHODS[m].THIRD_PARTIES) is not None]


def load_models() -> None:
    """Every method's own tables (MODELS), on the store's metadata: for
    what needs the whole schema (the migrations' environment)."""
    for m in METHODS:
        if METHODS[m].MODELS:
            importlib.import_module(METHODS[m].MODELS)
