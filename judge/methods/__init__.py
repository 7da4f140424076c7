"""The assignment and bidding methods: pure modules, looked up by name."""

from __future__ import annotations

from types import ModuleType

from judge.methods import blind_auction, blind_random, preference, random_assign

METHODS: dict[str, ModuleType] = {blind_auction.NAME: blind_auction, preference.NAME: preference,
                                  random_assign.NAME: random_assign, blind_random.NAME: blind_random}
ALIASES = {"blind": blind_auction.NAME, "auction": blind_auction.NAME, "ba": blind_auction.NAME,
           "pref": preference.NAME, "preferences": preference.NAME, "njudge": preference.NAME}


class UnknownMethod(ValueError):
    pass


def get_method(name: str) -> ModuleType:
    key = ALIASES.get(name.casefold(), name.casefold())
    if key not in METHODS:
        raise UnknownMethod(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}")
    return METHODS[key]
