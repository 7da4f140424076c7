"""Timing of the exact preference assignment (judge.methods.preference.solver).

Run:  .venv/bin/python bench/bench_exact_assignment.py [--cases 400] [--sizes 7,10,17,36]
          [--path compiled|python] [--kernels]

For each N, several hundred realistic N x N weight matrices are built from
preference lists (doubled values 2 * (N - position)): a common popularity
order plus per-player noise; 30% of players put a bracket of 2-4 equal
positions (each gets the average position), 30% give partial lists (the
unlisted powers share the average of the remaining positions), 3% give an
empty list (all equal). `solve` with a DrawStream is timed against scipy's
`linear_sum_assignment` on the primary objective alone (maximise the total:
minimise -w) on the same matrix; the two are interleaved so slow phases of
the machine hit both alike. Ratios are median/median and p99/p99. The gate
at N = 36 is median ratio <= 10 and p99 ratio <= 25. Nothing is asserted.

--path picks how the solver finds one optimum, its tight moves and blocks:
the compiled kernel (judge/methods/preference/solver/solver_kernel.py: one call) or the path
without a JIT (scipy's linear_sum_assignment, potentials by Bellman-Ford in
numpy, Tarjan in Python), which the `judge` commands run until the kernels
are in the judge's cache (judge/methods/preference/solver/compiled.py). --kernels times both
alone, side by side, with scipy's linear_sum_assignment, on the cost tables
`solve` builds for realistic matrices at each N.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.methods.preference.solver import costs, linear_assignment, tight_graph  # noqa: E402
from judge.methods.preference.solver.assignment import solve  # noqa: E402
from judge.rng import DrawStream  # noqa: E402
from tests.realistic_cases import realistic_matrix  # noqa: E402


PATHS = ("compiled", "python")


def use_path(name: str) -> None:
    """Make the solver find its optimum, tight moves and blocks this way."""
    from judge.methods.preference.solver import solver_kernel

    linear_assignment._KERNEL[:] = [solver_kernel if name == "compiled" else None]


def _python_path(c: np.ndarray):
    linear_assignment._KERNEL[:] = [None]
    return tight_graph._optimum_moves(c)


def cost_tables(n: int, cases: int, seed: int) -> list[np.ndarray]:
    """The padded cost tables `solve` builds for realistic N x N matrices."""
    rnd = random.Random(seed * 1000 + n)
    return [costs._costs(realistic_matrix(rnd, n))[0] for _ in range(cases)]


def time_kernels(n: int, cases: int, reps: int, seed: int) -> dict[str, float]:
    """Median microseconds of each on the same inputs, calls interleaved;
    checks on the way that the two paths agree on the optimum and the blocks."""
    from judge.methods.preference.solver import solver_kernel

    mats = cost_tables(n, cases, seed)
    ways = {"compiled": solver_kernel.optimum_moves, "python": _python_path, "lsa": linear_sum_assignment}
    for c in mats[:20]:  # warm up (and load numba's cache)
        for f in ways.values():
            f(c)
    times: dict[str, list[float]] = {name: [] for name in ways}
    for c in mats:
        results = {}
        for _ in range(reps):
            for name, f in ways.items():
                a = perf_counter_ns()
                results[name] = f(c)
                times[name].append((perf_counter_ns() - a) / 1000)
        one, two = results["compiled"], results["python"]
        same = int(one[1]) == two[1] and _blocks(one[3]) == _blocks(two[3])
        assert same, f"the two paths disagree at N = {n}"
    return {name: statistics.median(ts) for name, ts in times.items()}


def _blocks(label: np.ndarray) -> list[list[int]]:
    return [g for g in _partition(label) if len(g) > 1]


def _partition(label: np.ndarray) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for i, x in enumerate(label.tolist()):
        groups.setdefault(x, []).append(i)
    return sorted(groups.values())


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))
    return xs[k]


def run(n: int, cases: int, reps: int, seed: int, noise_max: float = 1.5) -> dict[str, float]:
    rnd = random.Random(seed * 1000 + n)
    mats = [realistic_matrix(rnd, n, noise_max) for _ in range(cases)]
    # warm up
    for m in mats[:20]:
        solve(m, DrawStream(b"warm"))
        linear_sum_assignment(-m)
    t_solve: list[float] = []
    t_lsa: list[float] = []
    tied_cases = 0
    largest = 0
    inexact = 0
    for k, m in enumerate(mats):
        neg = -m
        for rep in range(reps):
            stream = DrawStream(b"bench" + k.to_bytes(4, "big") + rep.to_bytes(2, "big"))
            a = perf_counter_ns()
            linear_sum_assignment(neg)
            b = perf_counter_ns()
            sol = solve(m, stream)
            c = perf_counter_ns()
            t_lsa.append((b - a) / 1000)
            t_solve.append((c - b) / 1000)
        if sol.tied > 1:
            tied_cases += 1
        if not sol.exact:
            inexact += 1
        for blk in sol.blocks:
            largest = max(largest, max(len(blk.rows), len(blk.cols)))
    return {
        "n": n,
        "lsa_med": statistics.median(t_lsa),
        "lsa_p99": pct(t_lsa, 0.99),
        "sol_med": statistics.median(t_solve),
        "sol_p99": pct(t_solve, 0.99),
        "sol_max": max(t_solve),
        "ties": tied_cases / len(mats),
        "largest": largest,
        "inexact": inexact,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400, help="matrices per N")
    ap.add_argument("--reps", type=int, default=3, help="timed solves per matrix")
    ap.add_argument("--sizes", default="7,10,17,36")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise-max", type=float, default=1.5, help="upper end of the per-game noise level")
    ap.add_argument("--pathological", action="store_true",
                    help="also time random 3-level tables (N = 17, 36): exact counting or the fallback")
    ap.add_argument("--path", choices=PATHS, default="compiled",
                    help="how the solver finds its optimum and blocks (default: compiled, as a warm judge)")
    ap.add_argument("--kernels", action="store_true",
                    help="only time the two paths and LSA side by side (N = 7, 17, 36, 50 unless --sizes)")
    args = ap.parse_args()
    if args.kernels:
        sizes = [int(x) for x in args.sizes.split(",")] if args.sizes != "7,10,17,36" else [7, 17, 36, 50]
        cases = min(args.cases, 200)
        print(f"One optimum, its tight moves and blocks, on the cost tables of `solve` for {cases} realistic"
              f" matrices per N, {args.reps} calls each; median microseconds")
        print("| N | compiled kernel | Python path | scipy's linear_sum_assignment alone | compiled / LSA |")
        print("| --- | --- | --- | --- | --- |")
        for n in sizes:
            t = time_kernels(n, cases, args.reps, args.seed)
            print(f"| {n} | {t['compiled']:.1f} | {t['python']:.1f} | {t['lsa']:.1f} |"
                  f" {t['compiled'] / t['lsa']:.2f} |")
        return
    use_path(args.path)
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{args.cases} realistic matrices per N, {args.reps} timed solves each, the {args.path} path;"
          " microseconds")
    print("| N | LSA primary median | LSA p99 | exact+uniform median | p99 | max | ratio median | ratio p99 |"
          " cases with ties | largest block | inexact |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        r = run(n, args.cases, args.reps, args.seed, args.noise_max)
        print(
            f"| {n} | {r['lsa_med']:.1f} | {r['lsa_p99']:.1f} | {r['sol_med']:.1f} | {r['sol_p99']:.1f} |"
            f" {r['sol_max']:.0f} | {r['sol_med'] / r['lsa_med']:.1f} | {r['sol_p99'] / r['lsa_p99']:.1f} |"
            f" {100 * r['ties']:.0f}% | {r['largest']} | {r['inexact']} |"
        )

    if args.pathological:
        print()
        print("| pathological (random 3-level values) | median ms | max ms | exact |")
        print("| --- | --- | --- | --- |")
        rnd = random.Random(args.seed)
        for n in (17, 36):
            times = []
            exact = 0
            for k in range(10):
                m = np.array([[2 * rnd.randrange(3) for _ in range(n)] for _ in range(n)])
                a = perf_counter_ns()
                sol = solve(m, DrawStream(b"path" + bytes([k])))
                times.append((perf_counter_ns() - a) / 1e6)
                exact += sol.exact
            print(f"| N = {n} | {statistics.median(times):.1f} | {max(times):.1f} | {exact}/10 |")


if __name__ == "__main__":
    main()
