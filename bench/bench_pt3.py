"""Timing of the Payola Tic-Tac-Toe solver: the whole tree from the empty board.

Run:  .venv/bin/python bench/bench_pt3.py [--reps N]

Two pairs, each timed in the same process, samples interleaved (slow phases of
the machine hit both alike), medians compared:

- memoised: PT3's b (judge/methods/pt3/solver.py: exact fractions, one memo
  entry per class of the 8 symmetries, a fresh Solver each time) against a
  plain minimax of ordinary tic-tac-toe over the same tree (the same positions,
  children, canonical memo and terminal rule, win = +1 / loss = -1, the owner
  of the mark choosing: X maximises, O minimises). The ratio is the price of
  the bidding analysis (fractions, min and max of the children, the formula)
  over the ordinary game's max or min of small integers.
- unmemoised: the same two recursions with no memo at all, every node of the
  full game tree visited (the seed's tree: play stops at X's line or a full
  board; O's line ends nothing).

"Nodes" is the number of distinct positions solved (symmetry classes) for the
memoised pair and the number of nodes of the tree for the unmemoised one.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.methods.pt3 import solver as S  # noqa: E402


class Minimax(S.Solver):
    """Ordinary tic-tac-toe's minimax over PT3's tree, memoised by S.Solver's
    own memo (the same lookup on both sides of the comparison): only the
    value of a position differs."""

    value = S.Solver.b  # the memoised value, here the minimax's

    def _compute(self, board: str) -> int:
        if S.x_has_line(board):
            return 1
        if "." not in board:
            return -1
        vs = [self.value(child) for _, child in S.children(board)]
        return max(vs) if S.to_place(board) == "X" else min(vs)


def pt3_plain(board: str, count: list[int]) -> S.B:
    """b with no memo: the whole tree."""
    count[0] += 1
    if S.x_has_line(board):
        return S.Fraction(0)
    if "." not in board:
        return S.INF
    bs = [pt3_plain(child, count) for _, child in S.children(board)]
    return S.combine(min(bs), max(bs))


def ttt_plain(board: str, count: list[int]) -> int:
    count[0] += 1
    if S.x_has_line(board):
        return 1
    if "." not in board:
        return -1
    vs = [ttt_plain(child, count) for _, child in S.children(board)]
    return max(vs) if S.to_place(board) == "X" else min(vs)


def timed(fn) -> tuple[int, object]:
    t0 = perf_counter_ns()
    out = fn()
    return perf_counter_ns() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="samples of the memoised pair (the unmemoised: 1/3 of it, at least 1)")
    args = ap.parse_args()

    memo_pt3, memo_ttt = [], []
    for _ in range(args.reps):
        solver, mm = S.Solver(), Minimax()
        t, b = timed(lambda: solver.b(S.EMPTY_BOARD))
        memo_pt3.append(t)
        t, v = timed(lambda: mm.value(S.EMPTY_BOARD))
        memo_ttt.append(t)
    assert solver.nodes == len(mm.memo)
    print(f"empty board: b = {b} = {float(b):.6f}; ordinary minimax value {v:+d} "
          f"({'X' if v > 0 else 'O'} wins tic-tac-toe on this tree when the owner places)")
    a, c = statistics.median(memo_pt3), statistics.median(memo_ttt)
    print(f"memoised (8 symmetries), {solver.nodes} distinct positions, median of {args.reps}:")
    print(f"  PT3 b (fractions)      {a / 1e6:9.2f} ms")
    print(f"  tic-tac-toe minimax    {c / 1e6:9.2f} ms")
    print(f"  ratio PT3 / minimax    {a / c:9.2f}")

    plain_pt3, plain_ttt = [], []
    reps = max(1, args.reps // 3)
    for _ in range(reps):
        n1, n2 = [0], [0]
        t, b2 = timed(lambda: pt3_plain(S.EMPTY_BOARD, n1))
        plain_pt3.append(t)
        t, _ = timed(lambda: ttt_plain(S.EMPTY_BOARD, n2))
        plain_ttt.append(t)
    assert b2 == b and n1 == n2
    a, c = statistics.median(plain_pt3), statistics.median(plain_ttt)
    print(f"no memo, the whole tree, {n1[0]} nodes, median of {reps}:")
    print(f"  PT3 b (fractions)      {a / 1e6:9.2f} ms")
    print(f"  tic-tac-toe minimax    {c / 1e6:9.2f} ms")
    print(f"  ratio PT3 / minimax    {a / c:9.2f}")


if __name__ == "__main__":
    main()
