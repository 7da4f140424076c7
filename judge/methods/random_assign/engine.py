"""The `random` method: every player gets a uniformly random power.

Players in canonical (case-insensitive name) order each draw one power from
those left, in power-list order: a uniformly random assignment, every draw
recorded, so anyone can replay it from the seed. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from judge.rng import DrawStream
from judge.variants import PowerList

NAME = "random"


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Params:
    def as_dict(self) -> dict[str, Any]:
        return {}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    if raw:
        raise ParamError(f"the random method takes no params, not {', '.join(sorted(raw))}")
    return Params()


def check_params(U: int, params: Params) -> list[str]:
    return []


def player_order(players: Sequence[str]) -> list[str]:
    return sorted(players, key=lambda s: (s.casefold(), s))


def resolve(powers: PowerList, players: Sequence[str], stream: DrawStream) -> dict[str, str]:
    if len(players) > len(powers):
        raise ParamError(f"{len(players)} players for {len(powers)} powers")
    left = list(powers.names)
    out = {}
    for player in player_order(players):
        power = stream.choice(list(left), what="random-power", player=player)
        out[player] = power
        left.remove(power)
    return out
