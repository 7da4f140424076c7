"""Spending early vs late in the solved Payola Tic-Tac-Toe: the seed's 2-1 rule.

Run:  .venv/bin/python bench/pt3_rule_of_thumb.py [--png docs/pt3_rule_of_thumb.png]

The plot needs matplotlib, an optional extra of the project (not a runtime
dependency):  .venv/bin/pip install -e '.[analysis]'  (or: pip install
'matplotlib>=3.7'). Without it the script prints its tables and says so.

The question (../shared/seeds/payola-bidding.html): Mayer expects "a split of
at least 2-1 between Fall and Spring spending" to be a good rule of thumb. PT3
has no years, so we define: season k places the k-th mark (X's marks in odd
seasons, O's in even ones); seasons 1, 3, 5, 7, 9 are Springs and 2, 4, 6, 8
Falls (years are pairs of seasons; the fifth year has only its Spring).

Method (docs/pt3.md, "Spending early vs late: the 2-1 rule"):

- Balances A_O = 1 and A_X = r * b0 * A_O, b0 the empty board's b, for r on a
  log grid from 1/4 to 4 (r > 1: X wins, r <= 1: O wins).
- Each season the winning side W bids the season's "price" p: the bid that
  leaves W the most slack whichever way the bid goes. W's slack at a position
  is its margin A_X / (b A_O) (X) or b A_O / A_X (O), above 1 (at least 1 for
  O) while W wins. If W's bid stands, W pays p and takes its square (the child
  of b_1 for X, b_N for O); if the loser L takes the bid (O matching it, or X
  bidding a hair above), L pays p and takes its square. p equalises W's margin
  in the two outcomes: X's margins A_X / (b_N (A_O - p)) and (A_X - p) /
  (b_1 A_O), or O's b_1 A_O / (A_X - p) and b_N (A_O - p) / A_X, are equal at
  the same p, the smaller root of

      p^2 - (A_X + A_O) p + A_X A_O (1 - b_1 / b_N) = 0

  (p = min(A_X, A_O) when b_1 = 0 or b_N = inf; p = 0 when b_1 = b_N: the
  choice of square changes nothing then). p lies inside the solver's winning
  range (checked at every season).
- The loser, facing p, chooses the outcome with the smaller margin for W; at
  p both are equal, so every line of play where the loser picks either one
  (with probability 1/2 when both are open to it) is followed, exactly: the
  numbers are expectations over these lines.
- Spending is what is paid (only the bid's winner pays). We report, per r,
  the expected spending of the winning side, of the losing side and of both,
  in Springs and in Falls, and the ratio Fall / Spring; and, the mapping
  aside, late / early: seasons 5..9 against 1..4.

A second policy, "thrifty", checks how much the answer owes to the choice of
p: W bids the least it may (the low end of its range, a hair above when the
end is open) and the loser still picks the outcome worse for W (no ties here).

The exact analysis (b, the ranges) is fractions; p has a square root, taken in
floating point and turned back into a fraction (limit_denominator(10**12)).
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction as F
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.methods.pt3 import solver as S  # noqa: E402

INF = S.INF
SPRINGS = (1, 3, 5, 7, 9)
FALLS = (2, 4, 6, 8)


def margin(winner: str, b, ax: F, ao: F) -> float:
    """The winning side's slack at a position (math.inf when it has won)."""
    if winner == "X":
        if b == 0 or ao == 0:
            return math.inf
        return 0.0 if b is INF else float(ax / (b * ao))
    if b is INF or ax == 0:
        return math.inf
    return float(b * ao / ax)


def price(b1, bN, ax: F, ao: F) -> F:
    """The bid that equalises the winner's margin in the two outcomes."""
    if b1 == bN:
        return F(0)
    if b1 == 0 or bN is INF:
        return min(ax, ao)
    s, q = ax + ao, ax * ao * (1 - b1 / bN)
    root = F(math.sqrt(float(s * s - 4 * q))).limit_denominator(10**12)
    return (s - root) / 2


def thrifty(r: S.BidRange) -> F:
    return r.lo + (r.hi - r.lo) / 10**6 if r.lo_open else r.lo


def walk(board: str, ax: F, ao: F, weight: F, winner: str, policy: str, spend: dict) -> None:
    """Add the expected payments of every line from here to spend[(side, season)]."""
    advice = S.advise(board, ax, ao)
    if advice.to_place is None:
        return
    assert advice.winner == winner, (board, ax, ao)  # the win is kept
    season = 10 - board.count(".")
    kids = dict(S.children(board))
    rng = advice.bid_range
    if policy == "price":
        p = price(advice.b1, advice.bN, ax, ao)
        if advice.b1 != advice.bN:
            p = min(max(p, rng.lo), rng.hi)
            if p not in rng:  # a root on an open end (rounding): a hair inside
                p = p + (rng.hi - rng.lo) / 10**9 if p == rng.lo else p - (rng.hi - rng.lo) / 10**9
            assert p in rng, (board, ax, ao, p, rng)
    else:
        p = F(0) if advice.b1 == advice.bN else thrifty(rng)
    loser = "O" if winner == "X" else "X"
    square = {"X": advice.x_square, "O": advice.o_square}
    outcomes = []  # (payer, child, ax, ao)
    # W's bid stands: X needs p > 0 to beat O's 0 (a tie is O's).
    if not (winner == "X" and p == 0):
        outcomes.append((winner, kids[square[winner]]))
    # L takes it: O by matching (p <= A_O), X by a hair more (p < A_X).
    if (loser == "O" and p <= ao) or (loser == "X" and p < ax):
        outcomes.append((loser, kids[square[loser]]))
    scored = []
    for payer, child in outcomes:
        nax, nao = (ax - p, ao) if payer == "X" else (ax, ao - p)
        scored.append((margin(winner, S.b_value(child), nax, nao), payer, child, nax, nao))
    worst = min(m for m, *_ in scored)
    chosen = [s for s in scored if s[0] == worst or (math.isfinite(worst) and abs(s[0] - worst) <= 1e-9 * worst)]
    for _, payer, child, nax, nao in chosen:
        w = weight / len(chosen)
        spend[(payer, season)] = spend.get((payer, season), F(0)) + w * p
        walk(child, nax, nao, w, winner, policy, spend)


def experiment(r: F, policy: str) -> dict:
    b0 = S.b_value(S.EMPTY_BOARD)
    ao = F(1)
    ax = r * b0 * ao
    winner = "X" if S.x_wins(b0, ax, ao) else "O"
    spend: dict = {}
    walk(S.EMPTY_BOARD, ax, ao, F(1), winner, policy, spend)
    loser = "O" if winner == "X" else "X"

    def total(side: str | None, seasons) -> float:
        return float(sum(v for (who, k), v in spend.items() if k in seasons and (side is None or who == side)))

    row = {"r": float(r), "winner": winner, "ax": float(ax), "ao": float(ao)}
    for label, side in (("w", winner), ("l", loser), ("all", None)):
        spring, fall = total(side, SPRINGS), total(side, FALLS)
        row[f"{label}_spring"], row[f"{label}_fall"] = spring, fall
        row[f"{label}_ratio"] = fall / spring if spring > 0 else math.inf
    early, late = total(None, (1, 2, 3, 4)), total(None, (5, 6, 7, 8, 9))
    row["late_early"] = late / early if early > 0 else math.inf
    w_early, w_late = total(winner, (1, 2, 3, 4)), total(winner, (5, 6, 7, 8, 9))
    row["w_late_early"] = w_late / w_early if w_early > 0 else math.inf
    row["by_season"] = [float(sum(v for (_, k), v in spend.items() if k == season)) for season in range(1, 10)]
    row["w_by_season"] = [float(spend.get((winner, season), 0)) for season in range(1, 10)]
    return row


def ratios() -> list[F]:
    """r on a log grid 1/4 .. 4, 2^(j/6), and 1 + 1/100 just above the threshold."""
    grid = {F(2 ** (j / 6)).limit_denominator(1000) for j in range(-12, 13)}
    grid |= {F(101, 100), F(99, 100)}
    return sorted(grid)


def fmt(x: float) -> str:
    return "  inf" if math.isinf(x) else f"{x:5.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--png", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "pt3_rule_of_thumb.png")
    args = ap.parse_args()
    b0 = S.b_value(S.EMPTY_BOARD)
    print(f"empty board: b0 = {b0} = {float(b0):.6f}; A_O = 1, A_X = r * b0")
    print("Springs: seasons 1 3 5 7 9 (X's marks); Falls: 2 4 6 8 (O's marks). Expected payments.")
    results = {}
    for policy in ("price", "thrifty"):
        rows = [experiment(r, policy) for r in ratios()]
        results[policy] = rows
        print(f"\npolicy {policy!r}:")
        print("     r  win | winner: Spring  Fall  F/S | loser: Spring  Fall  F/S | both: Spring  Fall  F/S"
              " | late/early: winner  both | % of all spending in seasons 1..9")
        for row in rows:
            shares = row["by_season"]
            total = sum(shares) or 1.0
            print(f"{row['r']:6.3f}   {row['winner']}  |         {fmt(row['w_spring'])} {fmt(row['w_fall'])} "
                  f"{fmt(row['w_ratio'])} |        {fmt(row['l_spring'])} {fmt(row['l_fall'])} {fmt(row['l_ratio'])} "
                  f"|       {fmt(row['all_spring'])} {fmt(row['all_fall'])} {fmt(row['all_ratio'])} | "
                  f"           {fmt(row['w_late_early'])} {fmt(row['late_early'])} | "
                  + " ".join(f"{100 * s / total:3.0f}" for s in shares))
    plot(results, args.png)


def plot(results: dict, png: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        print("\n(no plot: matplotlib is not installed; .venv/bin/pip install -e '.[analysis]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(18, 5.6), dpi=100)
    ticks = [0.25, 0.5, 1, 2, 4]
    for axis, (key_w, key_all, title, ylabel) in (
            (left, ("w_ratio", "all_ratio", "Fall : Spring spending", "expected Fall spending / Spring spending")),
            (middle, ("w_late_early", "late_early", "Late : early spending",
                      "expected spending in seasons 5-9 / in seasons 1-4"))):
        for policy, style in (("price", "-"), ("thrifty", ":")):
            rows = results[policy]
            rs = [row["r"] for row in rows]
            for key, colour, label in ((key_w, "tab:blue", "winning side"), (key_all, "tab:green", "both sides")):
                ys = [min(max(row[key], 1 / 8), 8.0) for row in rows]
                axis.plot(rs, ys, style, color=colour, marker="o" if policy == "price" else None, markersize=3,
                          lw=1.8, label=f"{label}, policy {policy}")
        if key_w == "w_ratio":
            axis.axhline(2, color="tab:red", lw=1.4, ls="--", label="the seed's 2-1 rule")
        axis.axhline(1, color="grey", lw=0.9, ls="--", label="even split")
        axis.axvline(1, color="black", lw=0.8)
        axis.text(1.06, 6, "X wins \u2192", fontsize=9)
        axis.text(0.94, 6, "\u2190 O wins", fontsize=9, ha="right")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log", base=2)
        axis.set_xticks(ticks, [str(t) for t in ticks])
        axis.set_yticks([1 / 8, 0.25, 0.5, 1, 2, 4, 8], ["1/8", "1/4", "1/2", "1", "2", "4", "8"])
        axis.set_ylim(1 / 8, 8)
        axis.set_xlabel("r = A_X / (b0 \u00b7 A_O)   (b0 = 0.5804, the empty board's b)")
        axis.set_ylabel(ylabel)
        axis.set_title(title + " (Springs: seasons 1 3 5 7 9)" if key_w == "w_ratio" else title)
        axis.text(0.02, 0.975, "ratios beyond 1/8 .. 8 drawn at the edge", transform=axis.transAxes,
                  fontsize=8, color="dimgrey", va="top")
        axis.legend(fontsize=8, loc="lower left")
        axis.grid(True, which="major", alpha=0.3)
    shown = [r for r in (0.5, 0.99, 1.01, 2.0)]
    width = 0.2
    rows = results["price"]
    for n, target in enumerate(shown):
        row = min(rows, key=lambda row: abs(row["r"] - target))
        total = sum(row["by_season"]) or 1.0
        xs = [k + (n - 1.5) * width for k in range(1, 10)]
        right.bar(xs, [100 * s / total for s in row["by_season"]], width=width,
                  label=f"r = {row['r']:.2f} ({row['winner']} wins)")
    for k in FALLS:
        right.axvspan(k - 0.5, k + 0.5, color="tab:orange", alpha=0.08)
    right.set_xticks(range(1, 10), [f"{k}\n{'Fall' if k in FALLS else 'Spring'}" for k in range(1, 10)])
    right.set_xlabel("season (shaded: Falls)")
    right.set_ylabel("% of all money paid in the game (expected)")
    right.set_title("When the money is paid (policy: price)")
    right.legend(fontsize=8)
    right.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    print(f"\nplot: {png}")


if __name__ == "__main__":
    main()
