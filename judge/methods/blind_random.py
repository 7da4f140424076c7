"""The `blind-random` method: powers assigned at random and kept secret from
the other players, by Murky's blinding protocol (docs/blinding.md).

The protocol's pure steps are judge.methods.blinding; this module holds the
method's settings. The game runs by mail only (judge/blindmail.py): there is
nothing to resolve offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

NAME = "blind-random"


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Params:
    third_party: str | None = None  # the address of the third party: a person, or another judge

    def as_dict(self) -> dict[str, Any]:
        return {"third_party": self.third_party}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    raw = dict(raw or {})
    unknown = set(raw) - {"third_party"}
    if unknown:
        raise ParamError(f"unknown params: {', '.join(sorted(unknown))}")
    return Params(raw.get("third_party"))


def check_params(U: int, params: Params) -> list[str]:
    if not params.third_party:
        raise ParamError("the blinding protocol needs a third party: SET THIRDPARTY address")
    return []
