"""Exact preference assignment: best total, then lowest spread, then a uniform draw.

The input is a table of integer weights w[player][power] >= 0 (doubled
preference values, so that everything is exact). An *assignment* gives every
player a different power when there are no more players than powers, and every
power a different player otherwise; a player who gets nothing scores 0. It is
described only by its real (player, power) pairs: two results that differ only
in which powers stay free, or which players go without, are the same.

Rule
----
1. Maximise the total weight of the assignment.
2. Among those, minimise the sum of the squares of the players' weights (the
   total being fixed, this is the lowest standard deviation).
3. Optionally (a `bonus` table of 0s and 1s, the same shape): among those,
   maximise the number of bonus cells taken (the preference method marks each
   player's uncontested first choice).
4. Among ALL assignments optimal for 1, 2 (and 3) ("co-optimal"), take one
   uniformly at random, using the judge's recorded SHA-256 stream (judge.rng).

How it is computed (anybody can redo it by hand or with other software)
------------------------------------------------------------------------
* The table is padded to a square of size n = max(players, powers) with
  weight-0 dummy players or powers. With maxw = max(1, largest weight) and
  K = n * maxw**2 + 1, the cost of a cell is C = K * (maxw - w) + w**2; a
  dummy cell costs K * maxw. Minimising the total cost is exactly rule 1 then
  rule 2: totals differ by at least K, every sum of squares is below K.
  With a bonus table every cost C becomes (n + 1) * C + (1 - bonus) (a dummy
  cell: + 1): the n cells add at most n < n + 1, so rule 3 only ever decides
  between assignments equal under rules 1 and 2.
* One optimal assignment and optimal dual potentials (u for players, v for
  powers, c - u - v >= 0 everywhere and 0 on the assignment) are found in
  exact integers (the costs are checked to stay below 2**53): by the
  compiled kernel (judge/methods/preference/solver/solver_kernel.py: the
  shortest augmenting path method of scipy's linear_sum_assignment, whose
  potentials are its duals), or without it by scipy's linear_sum_assignment
  (or a Hungarian method in Python for small tables) followed by potentials
  rebuilt with Bellman-Ford over the players' moves to one another's
  powers. The
  *tight* cells (reduced cost 0) are found. The co-optimal assignments are
  exactly the perfect matchings of the tight cells (complementary
  slackness: every optimal assignment is tight under every optimal
  potential, and every perfect matching of tight cells costs the optimum).
  Which optimal assignment and which potentials were found does not
  matter: everything below depends only on the set of co-optimal
  assignments.
* The tight cells that can change split into independent *blocks* (the
  strongly connected parts of the Dulmage-Mendelsohn decomposition); every
  other player keeps the one power open to him. A tight move inside a
  block lies on a cycle of tight moves, so in some co-optimal assignment;
  a tight cell in no co-optimal assignment (which potentials may add)
  joins no two blocks: the blocks and the cells inside them are the same
  whichever potentials were used. Blocks with a single
  distinct outcome (e.g. only players who get nothing anyway) are dropped;
  the others are numbered 0, 1, ... by their lowest player number.
* In each remaining block the co-optimal assignments are counted exactly (big
  integers) and listed in a *canonical order*; ONE draw r, uniform in
  [0, count), picks the r-th (r = 0 is the first). Blocks are drawn in block
  order.

Canonical order inside a block
------------------------------
Only the block's real players and powers are listed; padding never counts
(which dummy takes what is not part of an assignment).
* order "players": the block's assignments are sorted lexicographically by
  the power given to the block's first player (lowest player number), then
  the power given to its second player, and so on; "nothing" (more players
  than powers) sorts after every power.
* order "powers": the same with the roles exchanged: sorted by the player
  given to the block's first power, then its second power, ...; "nobody"
  (more powers than players) sorts after every player.
* Which order a block uses follows a size rule: group the block's powers into
  *types* (powers open to exactly the same players of the block; dummy powers
  form a type of their own) and likewise its players; B_players = product of
  (type size + 1) over the power types, B_powers = the same over the player
  types. Order "players" is used when B_players <= B_powers, else "powers";
  if counting in that order needs more than `count_limit` states, the other
  order is tried. The order used is recorded with the draw (context
  "order") and in the Block. The count is the same either way.
* Counting: players (say) are taken in order; the state is how many powers of
  each type are already taken; the number of ways to finish from a state is
  summed over the types open to the next player, times the number of free
  powers of that type (times 1 for the dummy type). Unranking walks the same
  numbers: the next player gets the first power, in increasing power number,
  whose number of completions exceeds what is left of r, r being reduced by
  the completions of the powers passed over. (A block of at most 5 lines
  with at most 64 assignments is listed instead, in that same order: the
  same count and numbering.)

The draw
--------
r = below_big(count): k = max(1, ceil(bitlen(count - 1) / 64)) consecutive
64-bit words of the stream are joined big-endian into one integer w of 64k
bits; if w >= 2**(64k) - (2**(64k) mod count) the k words are rejected and k
new ones taken; else r = w mod count. For k = 1 this is exactly the stream's
below(count). The draw is recorded (judge.rng.Draw, options empty because
there are too many) with what="co-optimal" (or the caller's `what`),
index = chosen = r, counter = position of the first word of the accepted
group, rejected = number of rejected groups, and context {"block": k,
"count": count, "rows": [players], "cols": [powers], "order": ...}.

Blocks too big to count
-----------------------
If counting passes `count_limit` states in both orders, the same lines are
tried in a frontier order (_frontier_order; order "players-frontier" or
"powers-frontier", the lines recorded in the draw's context "lines"). A try
gives up as soon as passing `count_limit` is certain, not when it is
passed: before a line, when a floor on the states to come (_StatesFloor)
already passes it, and within a line, as the new layer's pieces are merged
(_next_codes). The verdict is always that of counting every state, so every
block is counted, in the same order and numbering, as when each try ran to
its limit; failing tries take milliseconds and a few MB. If that fails
too, the block is drawn by the exact sampler
(judge/methods/preference/solver/sampler.py), keyed by two words of the
stream: the draw is exactly uniform all the same, but its count is only
estimated, with bounds (Block.exact False, low <= count <= high, order
"sampled"). Past
`work_limit` operations the solver raises TooHard rather than run for
minutes. docs/preference.md ("Blocks too big to count") has the proof.

Pure: no I/O, no clock, no global randomness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judge.methods.preference.solver.costs import _as_matrix, _check_sign, _costs, _decode, _kernel_status
from judge.methods.preference.solver.counting import _block_pairs, _Counted, _counted_blocks, _dummies, _unrank_block
from judge.methods.preference.solver.linear_assignment import _kernel, _lsa
from judge.methods.preference.solver.tight_graph import _analyse, _Analysis
from judge.rng import Draw, DrawStream


DEFAULT_COUNT_LIMIT = 200_000
# Operations (judge/methods/preference/solver/sampler.py counts them) allowed
# to the exact draws of the blocks too big to count, all blocks of a solve
# together.
# A count, not a clock, so a replay refuses exactly alike. Measured on this
# project's 2-core machine kind: 4-9 ns an operation, so a refusal comes after
# 5-10 s at most (issue 12's bound at 100 powers: 10 s); the slowest inputs
# found at 50 powers need 1.4e8 on average, and a draw's work is random (the
# number of trials is geometric): twice 6e8 makes a refusal there about
# e**-7 unlikely rather than a few in a hundred.
DEFAULT_WORK_LIMIT = 1_200_000_000


__all__ = [
    "DEFAULT_COUNT_LIMIT",
    "DEFAULT_WORK_LIMIT",
    "Block",
    "TooHard",
    "Solution",
    "optimum",
    "solve",
]


@dataclass(frozen=True)
class Block:
    rows: tuple[int, ...]  # players of this independent block (indices into the input)
    cols: tuple[int, ...]  # powers of this block
    count: int  # number of co-optimal assignments inside the block (an estimate if not exact)
    index: int | None  # the drawn index in [0, count) (None when sampled, or no draw was made)
    exact: bool  # False when the block was too big to count: drawn by the sampler, count estimated
    order: str = "players"  # canonical order used: "players", "powers", or "sampled"
    low: int = 0  # bounds on the count (both equal to count when exact)
    high: int = 0

    def __post_init__(self) -> None:
        if self.exact:
            object.__setattr__(self, "low", self.count)
            object.__setattr__(self, "high", self.count)

    @classmethod
    def _counted(cls, rows: tuple[int, ...], cols: tuple[int, ...], count: int, index: int | None,
                 order: str) -> Block:
        """Block(rows, cols, count, index, True, order): the same block,
        its fields set in one step where the frozen dataclass's __init__
        sets them one by one (a third of the time; solve builds one per
        block of every round)."""
        block = object.__new__(cls)
        block.__dict__.update(rows=rows, cols=cols, count=count, index=index, exact=True, order=order, low=count,
                              high=count)
        return block


@dataclass(frozen=True)
class Solution:
    assignment: tuple[int | None, ...]  # for each player: the power index, or None
    total: int  # sum of assigned weights
    sum_squares: int  # sum of squares of assigned weights
    tied: int  # number of co-optimal assignments (product of block counts; an estimate if not exact)
    exact: bool  # all blocks counted exactly (the draw is exactly uniform either way)
    blocks: tuple[Block, ...]  # only blocks with count > 1, in canonical order
    bonus: int = 0  # bonus cells taken (rule 3; 0 without a bonus table)

    @classmethod
    def _of(cls, assignment: tuple[int | None, ...], total: int, sum_squares: int, tied: int, exact: bool,
            blocks: tuple[Block, ...], bonus: int) -> Solution:
        """Solution(...) with its fields set in one step (see Block._counted)."""
        solution = object.__new__(cls)
        solution.__dict__.update(assignment=assignment, total=total, sum_squares=sum_squares, tied=tied, exact=exact,
                                 blocks=blocks, bonus=bonus)
        return solution

    @property
    def tied_low(self) -> int:
        """A lower bound on the number of co-optimal assignments."""
        return math.prod(b.low for b in self.blocks)

    @property
    def tied_high(self) -> int:
        """An upper bound on the number of co-optimal assignments."""
        return math.prod(b.high for b in self.blocks)


class TooHard(ValueError):
    """A block too big to count whose exact draw passed its work limit: the
    solver says so rather than run for minutes or draw a biased result."""

    def __init__(self, players: int, powers: int, reason: str = "work") -> None:
        self.players, self.powers, self.reason = players, powers, reason  # reason: "work" or "precision"
        super().__init__(
            f"{players} players tie among {powers} powers in ways too many to count, and drawing one "
            f"exactly passed the solver's {reason} limit; the master can send SET PRFRAND (powers "
            "drawn at random) or split the game")


# --------------------------------------------------------------------------
# Multi-word uniform draw
# --------------------------------------------------------------------------


def _below_big(stream: DrawStream, n: int) -> tuple[int, int, int]:
    """Kept for the tests' name: the stream's below() takes any n (several
    words per try when n > 2**64; see judge/rng.py)."""
    return stream.below(n)


def optimum(weights: Any, keep_rows: np.ndarray | None = None, keep_cols: np.ndarray | None = None) -> tuple[int, int]:
    """(maximum total, minimum sum of squares among maximum-total
    assignments) of the table, or of its rows and columns marked in the
    boolean arrays `keep_rows` and `keep_cols` ((0, 0) when none is left)."""
    w = _as_matrix(weights, checked=False)
    # (the compiled kernel takes exactly these types: no other signature is compiled)
    keep_rows = np.ones(w.shape[0], np.bool_) if keep_rows is None else np.ascontiguousarray(keep_rows, np.bool_)
    keep_cols = np.ones(w.shape[1], np.bool_) if keep_cols is None else np.ascontiguousarray(keep_cols, np.bool_)
    kernel = _kernel(max(w.shape))
    if kernel is None or not keep_rows.any() or not keep_cols.any():
        w = w[keep_rows][:, keep_cols]
        if w.size == 0:
            return 0, 0
        _check_sign(w)
        c, n, K, maxw, M = _costs(w)
        rows, cols = _lsa(c)
        total, squares, _ = _decode(int(c[rows, cols].sum()), n, K, maxw, M)
        # every cell, dummies included, costs K * (maxw - w) + w**2
        return total, squares
    status, total, squares = kernel.optimum(w, keep_rows, keep_cols)
    _kernel_status(status)
    return int(total), int(squares)


def _base_assignment(an: _Analysis) -> list[int | None]:
    q = an.q
    if q >= len(an.sigma):
        return an.sigma[: an.p]  # (no dummy power: every column is one)
    return [c if c < q else None for c in an.sigma[: an.p]]


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def solve(
    weights: Any,
    stream: DrawStream | None = None,
    *,
    what: str = "co-optimal",
    count_limit: int = DEFAULT_COUNT_LIMIT,
    bonus: Any = None,
    work_limit: int = DEFAULT_WORK_LIMIT,
    analysed: _Analysis | None = None,
) -> Solution:
    """The assignment of the rule in the module docstring.

    With `stream`, one draw per block with more than one co-optimal outcome
    (recorded on stream.draws); without, the canonical first assignment of
    every counted block (r = 0), with no draw, and the sampler's draw with
    key (0, 0) in a block too big to count. `bonus`: rule 3's table
    (optional). Raises TooHard when a block is too big to count and its
    exact draw passes `work_limit` (all blocks together). `analysed`: the
    analysis of `weights` with `bonus` (tight_graph's), when the caller
    has it already (the preference method's round makes it in the same
    compiled call as its other steps: tight_graph._kernel_analysis).
    """
    an = analysed if analysed is not None else _analyse(weights, bonus)
    assignment = _base_assignment(an)
    blocks: list[Block] = []
    tied = 1
    exact = True
    work = [work_limit]
    for k, cb in enumerate(_counted_blocks(an, count_limit)):
        index: int | None = None
        if not cb.exact:
            exact = False
            block, pairs = _sampled_block(cb, k, an.p, an.q, stream, what, work)
            blocks.append(block)
            tied *= block.count
        else:
            r = 0
            if stream is not None:
                r, counter, rejected = _below_big(stream, cb.count)
                index = r
                stream.draws.append(
                    Draw(
                        what,
                        [],
                        r,
                        r,
                        counter,
                        rejected,
                        {
                            "block": k,
                            "count": cb.count,
                            "rows": list(cb.real_rows),
                            "cols": list(cb.real_cols),
                            "order": cb.order,
                            **({"lines": [(cb.raw.rows if cb.order.startswith("players") else cb.raw.cols)[x]
                                          for x in cb.lines]} if cb.lines else {}),
                        },
                    )
                )
            pairs = _unrank_block(cb, r, an.p, an.q)
            tied *= cb.count
            blocks.append(Block._counted(tuple(cb.real_rows), tuple(cb.real_cols), cb.count, index, cb.order))
        for r_, c_ in pairs.items():
            assignment[r_] = c_
    return Solution._of(tuple(assignment), an.total, an.sum_squares, tied, exact, tuple(blocks), an.bonus)


def _sampled_block(cb: _Counted, k: int, p: int, q: int, stream: DrawStream | None,
                   what: str, work: list[int]) -> tuple[Block, dict[int, int | None]]:
    """Draw a block too big to count with the exact sampler
    (judge/methods/preference/solver/sampler.py), keyed by two words of the
    stream; `work` holds the work left to all blocks (and is reduced)."""
    from judge.methods.preference.solver import sampler

    raw = cb.raw
    counter = stream.counter if stream is not None else 0
    key = (stream.below(1 << 64)[0], stream.below(1 << 64)[0]) if stream is not None else (0, 0)
    try:
        drawn = sampler.sample(raw.allowed, key, work[0])
    except sampler.TooHard as err:
        raise TooHard(len(cb.real_rows), len(cb.real_cols), err.reason) from None
    work[0] -= drawn.work
    same = math.factorial(_dummies(raw, p, q))  # matchings per assignment
    high = max(cb.count, int(drawn.bound) // same)
    count = min(high, max(cb.count, round(drawn.estimate / same)))
    if stream is not None:
        stream.draws.append(Draw(what, [], drawn.trials - 1, None, counter, 0, {
            "block": k, "count": count, "estimated": True, "low": cb.count, "high": high,
            "rows": list(cb.real_rows), "cols": list(cb.real_cols), "order": "sampled",
            "key": [f"{key[0]:016x}", f"{key[1]:016x}"], "trials": drawn.trials, "words": drawn.words,
            "frontier": drawn.frontier,
        }))
    block = Block(tuple(cb.real_rows), tuple(cb.real_cols), count, None, False, "sampled", cb.count, high)
    return block, _block_pairs(cb, list(drawn.match[: len(cb.real_rows)]), p, q)


def _all_block_assignments(weights: Any, count_limit: int = DEFAULT_COUNT_LIMIT,
                           bonus: Any = None) -> list[list[dict[int, int | None]]]:
    """For tests: per counted block, the unranked assignment of every r in
    [0, count), in rank order (only sensible for small counts)."""
    an = _analyse(weights, bonus)
    out = []
    for cb in _counted_blocks(an, count_limit):
        out.append([_unrank_block(cb, r, an.p, an.q) for r in range(cb.count)])
    return out
