"""Payola's bribe resolution (issue 14): which order each unit obeys in one
movement phase, and who pays what. Pure: no I/O, no clock; chance only from
the DrawStream it is given. The rules and every choice made where they are
silent: docs/payola.md.

The seam with the game by mail (payola-game) is /work/notes/payola_api.md:
check_sheet and choose_orders with the dataclasses below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class Rejected:
    """A refused line of a sheet: the rest of the sheet stands."""

    power: str
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class SheetCheck:
    lines: tuple[Any, ...]  # the accepted offers (judge.methods.payola.sheet.Offer), in sheet order
    rejected: tuple[Rejected, ...]
    savings: int  # the "25 $" lines' total


def check_sheet(*, variant: str, units: Mapping[str, str], power: str, text: str) -> SheetCheck:
    """Parse and check one power's sheet against the map and the units on it
    (unit -> owner)."""
    raise NotImplementedError


@dataclass(frozen=True)
class BribeResult:
    orders: dict[str, str]  # unit -> the order it obeys
    spent: dict[str, int]  # power -> AgP debited
    balances: dict[str, int]  # power -> balance after the debit
    reductions: dict[str, int]  # power -> how many times its offers were cut
    accepted: dict[str, list[dict]]  # power -> the bribes it paid: {"unit", "order", "amount"}
    rejected: list[Rejected]
    draws: list  # every draw taken from the stream, in order (for the record)
    random_order: dict[str, list[str]]  # the "?" expansions used, per power
    chart: dict = field(default_factory=dict)  # per unit: order -> total, per power (the GM's chart)


def choose_orders(*, variant: str, units: Mapping[str, str], balances: Mapping[str, int],
                  acceptance: Mapping[str, str], sheets: Mapping[str, str], stream: Any,
                  random_order: Mapping[str, Sequence[str]] | None = None) -> BribeResult:
    """Pure: which order each unit obeys this movement phase, and who pays
    what. `stream` is a judge.rng.DrawStream."""
    raise NotImplementedError
