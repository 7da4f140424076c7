"""Timing of the WHOLE preference method (judge.methods.preference.resolve).

Run:  .venv/bin/python bench/bench_preference.py [--cases 400] [--reps 3] [--sizes 7,10,17,36]
          [--tight numba|csgraph|numpy]

For each N, several hundred realistic profiles of N players for N powers are
built as preference lists (group structures): a common popularity order plus
per-player noise; about 30% of the players put a bracket of 2-4 powers, 30%
give a partial list, 3% an empty list and 5% ask for `*` (mode "both"). The
whole method (random powers, uncontested first choices, exact optimum, uniform draw, the
shortcut's comparison) is timed with a DrawStream, by default as games run
(the best total, uncontested first choices breaking ties; --shortcut for
the seed's literal step), against
scipy's `linear_sum_assignment` on the primary objective alone (maximise the
doubled values matrix of all players x all powers) on the same profile; the
two are interleaved so slow phases of the machine hit both alike. Ratios are
median/median and p99/p99. The bar at N = 36: median ratio <= 10 and p99
ratio <= 25. For contrast, a brute force over all permutations (numpy; the
permutation table built once per N, not timed) for N = 7, 8, 9.
--tight runs the solver's tight moves and blocks with another implementation
than its numba kernel (see bench/bench_exact_assignment.py). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_exact_assignment import TIGHT, use_tight  # noqa: E402 (this directory, first on sys.path)
from judge.methods import exact_assignment
from judge.methods.preference import (
    Params,
    Preference,
    doubled_values,
    first_choice_shortcut,
    player_order,
    resolve,
)
from judge.rng import DrawStream
from judge.variants import STANDARD_POWERS, make_power_list


def power_names(n: int) -> list[str]:
    if n == 7:
        return list(STANDARD_POWERS)
    return [f"Power{k:02d}" for k in range(n)]


def realistic_preference(rnd: random.Random, names: list[str], popularity: list[float], noise: float) -> Preference:
    u = rnd.random()
    if u < 0.05:
        return Preference(random=True)
    if u < 0.08:
        return Preference()
    n = len(names)
    order = sorted(range(n), key=lambda j: popularity[j] + rnd.gauss(0.0, noise))
    groups: list[tuple[str, ...]] = [(names[j],) for j in order]
    u = rnd.random()
    if u < 0.30:  # a bracket of 2-4 equally liked powers
        size = min(n, rnd.randint(2, 4))
        start = rnd.randint(0, n - size)
        groups[start:start + size] = [tuple(names[j] for j in order[start:start + size])]
    elif u < 0.60:  # a partial list
        groups = groups[:rnd.randint(1, n - 1)]
    return Preference(tuple(groups))


def realistic_profile(rnd: random.Random, n: int, noise_max: float = 1.5) -> dict[str, Preference]:
    names = power_names(n)
    popularity = [rnd.gauss(0.0, 1.0) for _ in range(n)]
    noise = rnd.uniform(0.3, noise_max)
    return {f"player{k:02d}": realistic_preference(rnd, names, popularity, noise) for k in range(n)}


SHORTCUT = [False]  # --shortcut times the seed's literal step instead of the default


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def run(n: int, cases: int, reps: int, seed: int) -> dict[str, float]:
    rnd = random.Random(seed * 1000 + n)
    powers = make_power_list(power_names(n))
    params = Params(mode="both", shortcut=SHORTCUT[0])
    profiles = [realistic_profile(rnd, n) for _ in range(cases)]
    matrices = []
    for lists in profiles:
        rows = [doubled_values(lists[pl], powers) for pl in sorted(lists)]
        matrices.append(-np.array([[row[w] for w in powers.names] for row in rows], dtype=np.int64))
    for lists, neg in zip(profiles[:20], matrices[:20]):  # warm up
        resolve(powers, params, lists, DrawStream(b"warm"))
        linear_sum_assignment(neg)
    t_method: list[float] = []
    t_lsa: list[float] = []
    tied = largest = inexact = differs = 0
    for k, (lists, neg) in enumerate(zip(profiles, matrices)):
        for rep in range(reps):
            stream = DrawStream(b"bench" + k.to_bytes(4, "big") + rep.to_bytes(2, "big"))
            a = perf_counter_ns()
            linear_sum_assignment(neg)
            b = perf_counter_ns()
            out = resolve(powers, params, lists, stream)
            c = perf_counter_ns()
            t_lsa.append((b - a) / 1000)
            t_method.append((c - b) / 1000)
        tied += out.tied > 1
        inexact += not out.exact
        for r in out.rounds:
            differs += bool(r.shortcut_check and r.shortcut_check["differs"])
            for blk in r.blocks:
                largest = max(largest, len(blk["players"]), len(blk["powers"]))
    return {
        "lsa_med": statistics.median(t_lsa), "lsa_p99": pct(t_lsa, 0.99),
        "med": statistics.median(t_method), "p99": pct(t_method, 0.99), "max": max(t_method),
        "ties": tied / cases, "largest": largest, "inexact": inexact, "differs": differs / cases,
    }


def brute_force(w: np.ndarray, perms: np.ndarray, stream: DrawStream) -> np.ndarray:
    """Best total, then lowest sum of squares, then a uniform draw among them."""
    vals = w[np.arange(w.shape[0])[None, :], perms]
    tot = vals.sum(axis=1)
    sq = (vals * vals).sum(axis=1)
    best = tot == tot.max()
    co = np.nonzero(best & (sq == sq[best].min()))[0]
    r, _, _ = stream.below(len(co))
    return perms[co[r]]


def run_brute(n: int, cases: int, seed: int) -> float:
    rnd = random.Random(seed * 7919 + n)
    powers = make_power_list(power_names(n))
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
    times = []
    for k in range(cases):
        lists = realistic_profile(rnd, n)
        rows = [doubled_values(lists[pl], powers) for pl in sorted(lists)]
        w = np.array([[row[x] for x in powers.names] for row in rows], dtype=np.int64)
        a = perf_counter_ns()
        brute_force(w, perms, DrawStream(b"brute" + bytes([k])))
        times.append((perf_counter_ns() - a) / 1000)
    return statistics.median(times)


def breakdown(n: int, cases: int, seed: int) -> dict[str, float]:
    """Median time of each public step of the method, on whole profiles (the
    method's own optimum runs on the players left after the shortcut)."""
    rnd = random.Random(seed * 31 + n)
    powers = make_power_list(power_names(n))
    params = Params(mode="both", shortcut=SHORTCUT[0])
    names = powers.names
    times: dict[str, list[float]] = {k: [] for k in [
        "LSA primary (baseline)", "values (doubled_values, all players)", "shortcut (first_choice_shortcut)",
        "exact optimum + draw (solve, all players)", "optimum only (as in the shortcut comparison)", "whole method"]}
    keys = list(times)
    for k in range(cases):
        lists = realistic_profile(rnd, n)
        players = player_order(list(lists))
        a = perf_counter_ns()
        values = {pl: doubled_values(lists[pl], powers) for pl in players}
        b = perf_counter_ns()
        first_choice_shortcut(players, names, lists)
        c = perf_counter_ns()
        w = [[values[pl][x] for x in names] for pl in players]
        neg = -np.array(w, dtype=np.int64)
        d = perf_counter_ns()
        linear_sum_assignment(neg)
        e = perf_counter_ns()
        exact_assignment.solve(w, DrawStream(b"parts" + k.to_bytes(4, "big")))
        f = perf_counter_ns()
        exact_assignment.optimum(w)
        g = perf_counter_ns()
        resolve(powers, params, lists, DrawStream(b"whole" + k.to_bytes(4, "big")))
        h = perf_counter_ns()
        for key, t in zip(keys, [e - d, b - a, c - b, f - e, g - f, h - g]):
            times[key].append(t / 1000)
    return {key: statistics.median(v) for key, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400, help="profiles per N")
    ap.add_argument("--reps", type=int, default=3, help="timed resolutions per profile")
    ap.add_argument("--sizes", default="7,10,17,36")
    ap.add_argument("--brute-sizes", default="7,8,9")
    ap.add_argument("--brute-cases", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false",
                    help="skip the timing of the method's parts at the largest N")
    ap.add_argument("--shortcut", action="store_true", help="time SET PREFERENCE SHORTCUT instead of the default")
    ap.add_argument("--tight", choices=sorted(TIGHT), default="numba",
                    help="implementation of the solver's tight moves and blocks (default: numba, as games run)")
    args = ap.parse_args()
    SHORTCUT[0] = args.shortcut
    if args.tight != "numba":
        use_tight(args.tight)
    print(f"{args.cases} realistic profiles per N (mode both, shortcut {'on' if args.shortcut else 'off: the default'}),"
          f" {args.reps} timed runs each, tight moves by {args.tight};"
          " microseconds")
    print("| N | LSA primary median | LSA p99 | whole method median | p99 | max | ratio median | ratio p99 |"
          " profiles with ties | largest tied block | fell back (exact false) | shortcut changed optimum |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in [int(x) for x in args.sizes.split(",")]:
        r = run(n, args.cases, args.reps, args.seed)
        print(f"| {n} | {r['lsa_med']:.1f} | {r['lsa_p99']:.1f} | {r['med']:.1f} | {r['p99']:.1f} | {r['max']:.0f} |"
              f" {r['med'] / r['lsa_med']:.1f} | {r['p99'] / r['lsa_p99']:.1f} | {100 * r['ties']:.0f}% |"
              f" {r['largest']} | {r['inexact']} | {100 * r['differs']:.0f}% |")
    print()
    print(f"Brute force over all N! permutations (numpy, {args.brute_cases} profiles each)")
    print("| N | permutations | median microseconds |")
    print("| --- | --- | --- |")
    for n in [int(x) for x in args.brute_sizes.split(",")]:
        med = run_brute(n, args.brute_cases, args.seed)
        print(f"| {n} | {math.factorial(n)} | {med:.0f} |")
    if args.breakdown:
        n = max(int(x) for x in args.sizes.split(","))
        print()
        print(f"Where the time goes at N = {n} (the method's public parts timed alone on the same kind of profiles)")
        print("| part | median microseconds | x LSA median |")
        print("| --- | --- | --- |")
        parts = breakdown(n, min(args.cases, 300), args.seed)
        for part, med in parts.items():
            print(f"| {part} | {med:.1f} | {med / parts['LSA primary (baseline)']:.1f} |")


if __name__ == "__main__":
    main()
