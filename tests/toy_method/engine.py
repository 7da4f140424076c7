"""The countdown's pure engine: its settings (none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

NAME = "countdown"


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Params:
    def as_dict(self) -> dict[str, Any]:
        return {}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    return Params()


def check_params(U: int, params: Params) -> list[str]:
    return []
