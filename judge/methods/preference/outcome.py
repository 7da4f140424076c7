"""What a preference resolution gives (judge.methods.preference.engine):
each round's record (who got what and how: random powers, uncontested
first choices, the optimum; its total, spread, ties and blocks, and the
seed's literal step compared), the outcome of all rounds, and the figures
they carry, worked out from doubled values (exact integers).

Pure: no I/O, no clock, no global randomness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import mul
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Round:
    number: int
    random: dict[str, str] = field(default_factory=dict)
    shortcut: dict[str, str] = field(default_factory=dict)
    optimized: dict[str, str] = field(default_factory=dict)
    total: float = 0.0
    stddev: float = 0.0
    tied: int = 1
    exact: bool = True  # tied was counted; else it is an estimate within tied_bounds
    blocks: list[dict[str, Any]] = field(default_factory=list)
    shortcut_check: dict[str, Any] | None = None
    tied_bounds: tuple[int, int] = (1, 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.number, "random": self.random, "shortcut": self.shortcut,
            "optimized": self.optimized, "total": self.total, "stddev": self.stddev,
            "tied": self.tied, "exact": self.exact,
            **({} if self.exact else {"tied_low": self.tied_bounds[0], "tied_high": self.tied_bounds[1]}),
            "blocks": self.blocks, "shortcut_check": self.shortcut_check,
        }


@dataclass
class Outcome:
    assignment: dict[str, list[str]]  # player -> powers (one unless duplex)
    values: dict[str, float]  # player -> sum of the values of their powers
    total: float
    stddev: float
    tied: int
    exact: bool
    tied_bounds: tuple[int, int]  # the count's bounds (both tied when exact)
    unassigned: list[str]
    rounds: list[Round]
    draws: list[dict[str, Any]]


def _sums(doubled: Sequence[int]) -> tuple[int, int]:
    """(sum, sum of squares) of doubled values."""
    return sum(doubled), sum(map(mul, doubled, doubled))


def _comparison(with_: tuple[int, int], without: tuple[int, int], n: int) -> dict[str, Any]:
    """The shortcut_check of a round: (total, std-dev) with the seed's
    literal step and without it, from doubled (sum, sum of squares)."""
    return {"with": _figures(*with_, n), "without": _figures(*without, n), "differs": with_ != without}


def _figures(total2: int, squares2: int, n: int) -> dict[str, float]:
    """Total and standard deviation of n players from doubled sums."""
    return {"total": total2 / 2, "stddev": _spread(total2, squares2, n)}


def _spread(total2: int, squares2: int, n: int) -> float:
    """The standard deviation of n values from their doubled sum and sum of
    squares: the float that sum(x) / n and sum(x * x) / n of the values
    give, as the values are halves of integers far below 2**53 (their sums
    are exact)."""
    mean = total2 / 2 / n
    return math.sqrt(max(0.0, squares2 / 4 / n - mean * mean))


def compare_without_shortcut(weights: np.ndarray, doubled: Sequence[int]) -> dict[str, Any]:
    """Under SET PREFERENCE SHORTCUT: the round's (total, std-dev) with the
    literal step, and the optimum of the same players and powers without it.
    Both over the players who got a power this round (the same number either way)."""
    from judge.methods.preference.solver import assignment

    return _comparison(_sums(doubled), assignment.optimum(weights), len(doubled))


def compare_equal(doubled: Sequence[int]) -> dict[str, Any]:
    """The comparison's keys when the literal step gives the round's own result."""
    sums = _sums(doubled)
    return _comparison(sums, sums, len(doubled))


def compare_with_shortcut(weights: np.ndarray, rows: Sequence[int], cols: Sequence[int],
                          doubled: Sequence[int], rest_optimum: tuple[int, int] | None = None,
                          sums: tuple[int, int] | None = None,
                          first_sums: tuple[int, int] | None = None) -> dict[str, Any]:
    """By default: what the seed's literal step would give (its uncontested
    first choices `rows` x `cols` first, the optimum of the rest), against the
    round's exact optimum. The same keys as compare_without_shortcut.
    `rest_optimum`: that optimum of the rest (assignment.optimum's), when
    the round's compiled call has made it already; `sums`: _sums(doubled);
    `first_sums`: the sums of the first choices' weights (the same call's)."""
    if rest_optimum is None:
        import numpy as np

        from judge.methods.preference.solver import assignment

        rows, cols = list(rows), list(cols)
        keep_rows = np.ones(weights.shape[0], dtype=bool)
        keep_rows[rows] = False
        keep_cols = np.ones(weights.shape[1], dtype=bool)
        keep_cols[cols] = False
        rest_optimum = assignment.optimum(weights, keep_rows, keep_cols)
    t2, s2 = rest_optimum
    total, squares = first_sums or _sums(list(map(weights.item, rows, cols)))
    return _comparison((total + t2, squares + s2), sums or _sums(doubled), len(doubled))
