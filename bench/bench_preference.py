"""Timing of the WHOLE preference method (judge.methods.preference.resolve).

Run:  .venv/bin/python bench/bench_preference.py [--cases 400] [--reps 3] [--sizes 7,10,17,36]
          [--path compiled|python]

For each N, several hundred realistic profiles of N players for N powers are
built as preference lists (group structures): a common popularity order plus
per-player noise; about 30% of the players put a bracket of 2-4 powers, 30%
give a partial list, 3% an empty list and 5% ask for `*` (mode "both"),
each valued once on the variant as the list reader does when a list comes
(as_read; the breakdown times that apart). The
whole method (random powers, uncontested first choices, exact optimum, uniform draw, the
shortcut's comparison) is timed with a DrawStream, by default as games run
(the best total, uncontested first choices breaking ties; --shortcut for
the seed's literal step), against
scipy's `linear_sum_assignment` on the primary objective alone (maximise the
doubled values matrix of all players x all powers) on the same profile; the
two are interleaved so slow phases of the machine hit both alike (wall
clock, and the medians of process time beside). Ratios are
median/median and p99/p99. The bar at N = 36: median ratio <= 10 and p99
ratio <= 25 (issue 12); issue 29's aim: a median ratio <= 3. For contrast, a brute force over all permutations (numpy; the
permutation table built once per N, not timed) for N = 7, 8, 9.
--path python runs the solver without its compiled kernel (see
bench/bench_exact_assignment.py). Nothing is asserted.

--pathological [--size 17,24,36,50] [--budget 30] [--dump DIR]: for each
size, in a child process of its own, a small hill-climb (seeded: which
mutations it tries is fixed; which it keeps follows the times measured)
over the adversarial shapes of tests/adversarial_cases.py ("anything but
X", random brackets of every density, two-power brackets, lists of pairs,
mixes with realistic lists) looks for the input on which the whole method
is slowest, for `--budget` seconds of climbing per size. It starts from two
profiles of every shape, then mutates the slowest found (a power flipped in
or out of a bracket, two powers swapped in a list, groups merged or split,
a list copied). Each input is timed once with the same stream seed; the
slowest is timed again with two other seeds. Per size it prints the worst
time, its ratio to scipy's linear_sum_assignment on the same weight table
(median of 5, timed in the same run), the peak memory of the size's
process (ru_maxrss, with the part taken before the first input: Python,
numpy, scipy, numba), how many inputs were drawn exactly (counted or
sampled) and how many the solver refused (TooHard), against the bounds of
issue 12; then the slowest inputs, described. --dump writes each size's
slowest inputs as `judge resolve` files.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import resource
import statistics
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter, perf_counter_ns, process_time_ns

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_exact_assignment import PATHS, use_path  # noqa: E402 (this directory, first on sys.path)
from judge.methods.preference.engine import (
    Params,
    Preference,
    _value_table,
    values_row,
    doubled_values,
    first_choice_shortcut,
    player_order,
    resolve,
)
from judge.methods.preference.engine import read_preference
from judge.methods.preference.solver import assignment
from judge.rng import DrawStream
from judge.variants import STANDARD_POWERS, make_power_list
from tests.adversarial_cases import SHAPES, Genome, anything_but, mutate, powers_of, texts


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


def as_read(lists: dict[str, Preference], powers) -> dict[str, Preference]:
    """The lists as a game holds them at its deadline: read by
    read_preference when they came, which values each list once on the
    variant (values_row; the breakdown times it apart)."""
    for pref in lists.values():
        values_row(pref, powers)
    return lists


SHORTCUT = [False]  # --shortcut times the seed's literal step instead of the default


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def run(n: int, cases: int, reps: int, seed: int) -> dict[str, float]:
    rnd = random.Random(seed * 1000 + n)
    powers = make_power_list(power_names(n))
    params = Params(mode="both", shortcut=SHORTCUT[0])
    profiles = [as_read(realistic_profile(rnd, n), powers) for _ in range(cases)]
    matrices = []
    for lists in profiles:
        rows = [doubled_values(lists[pl], powers) for pl in sorted(lists)]
        matrices.append(-np.array([[row[w] for w in powers.names] for row in rows], dtype=np.int64))
    for lists, neg in zip(profiles[:20], matrices[:20]):  # warm up
        resolve(powers, params, lists, DrawStream(b"warm"))
        linear_sum_assignment(neg)
    t_method: list[float] = []
    t_lsa: list[float] = []
    # CPU time of the process too: on a loaded machine the wall clock also
    # counts the time other jobs held the core.
    cpu_method: list[float] = []
    cpu_lsa: list[float] = []
    tied = largest = inexact = differs = 0
    for k, (lists, neg) in enumerate(zip(profiles, matrices)):
        for rep in range(reps):
            stream = DrawStream(b"bench" + k.to_bytes(4, "big") + rep.to_bytes(2, "big"))
            ca = process_time_ns()
            a = perf_counter_ns()
            linear_sum_assignment(neg)
            b = perf_counter_ns()
            cb = process_time_ns()
            out = resolve(powers, params, lists, stream)
            c = perf_counter_ns()
            cc = process_time_ns()
            t_lsa.append((b - a) / 1000)
            t_method.append((c - b) / 1000)
            cpu_lsa.append((cb - ca) / 1000)
            cpu_method.append((cc - cb) / 1000)
        tied += out.tied > 1
        inexact += not out.exact
        for r in out.rounds:
            differs += bool(r.shortcut_check and r.shortcut_check["differs"])
            for blk in r.blocks:
                largest = max(largest, len(blk["players"]), len(blk["powers"]))
    return {
        "lsa_med": statistics.median(t_lsa), "lsa_p99": pct(t_lsa, 0.99),
        "med": statistics.median(t_method), "p99": pct(t_method, 0.99), "max": max(t_method),
        "cpu_lsa_med": statistics.median(cpu_lsa), "cpu_med": statistics.median(cpu_method),
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
        "LSA primary (baseline)", "values (the value table, from the rows kept as the lists were read)",
        "shortcut (first_choice_shortcut)",
        "exact optimum + draw (solve, all players)", "optimum only (as in the shortcut comparison)", "whole method",
        "(not in the whole method) valuing every list as it is read (values_row, at SET PREFERENCE)"]}
    keys = list(times)
    for k in range(cases):
        lists = realistic_profile(rnd, n)
        players = player_order(list(lists))
        prefs = [lists[pl] for pl in players]
        z = perf_counter_ns()
        for pref in prefs:
            values_row(pref, powers)
        a = perf_counter_ns()
        w = _value_table(prefs, powers)
        b = perf_counter_ns()
        first_choice_shortcut(players, names, lists)
        c = perf_counter_ns()
        neg = -w
        d = perf_counter_ns()
        linear_sum_assignment(neg)
        e = perf_counter_ns()
        assignment.solve(w, DrawStream(b"parts" + k.to_bytes(4, "big")))
        f = perf_counter_ns()
        assignment.optimum(w)
        g = perf_counter_ns()
        resolve(powers, params, lists, DrawStream(b"whole" + k.to_bytes(4, "big")))
        h = perf_counter_ns()
        for key, t in zip(keys, [e - d, b - a, c - b, f - e, g - f, h - g, a - z]):
            times[key].append(t / 1000)
    return {key: statistics.median(v) for key, v in times.items()}


# --------------------------------------------------------------------------
# --pathological: a hill-climb over adversarial shapes, one process per size
# --------------------------------------------------------------------------

# Issue 12's bounds on the whole method: (largest size covered, seconds, MB,
# whether a refusal may count): up to 36 powers 1 s (aim 0.1 s); 50: 3 s (aim
# 1 s), 300 MB, every input drawn; 100: 10 s, 1 GB, or a clear refusal.
BOUNDS = [(36, 1.0, 300, False), (50, 3.0, 300, False), (100, 10.0, 1024, True)]
CLIMB_SEED = b"pathological"  # one stream seed for every input, so times compare
RETIME_SEEDS = [b"pathological-2", b"pathological-3"]


def bound_for(n: int) -> tuple[float, int, bool] | None:
    for top, secs, mb, refusal_ok in BOUNDS:
        if n <= top:
            return secs, mb, refusal_ok
    return None


def approx(count: int) -> str:
    """A count too big for a float's exponent still prints."""
    try:
        return f"{count:.2g}"
    except OverflowError:
        return f"2^{count.bit_length() - 1}"


@dataclass
class Tried:
    genome: Genome
    origin: str  # the shape it started from
    mutations: int  # mutations since
    seconds: float  # the whole method, stream seeded CLIMB_SEED
    lsa: float  # scipy's linear_sum_assignment on the same table (median of 5)
    refused: str | None  # the solver's TooHard message, if it refused
    counted: bool  # every tied block counted (else some were sampled)
    blocks: list[tuple[int, bool, int]]  # each tied block: players, counted, count (estimated if sampled)


def rss_mb() -> float:
    """Peak resident memory of this process so far (ru_maxrss: KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time_method(powers, prefs, seed: bytes):
    """(seconds, outcome or None, refusal or None) of one resolve."""
    a = perf_counter_ns()
    try:
        out = resolve(powers, Params(), prefs, DrawStream(seed))
        refused = None
    except assignment.TooHard as err:
        out, refused = None, str(err)
    return (perf_counter_ns() - a) / 1e9, out, refused


def _lsa_time(powers, prefs) -> float:
    rows = [doubled_values(prefs[pl], powers) for pl in player_order(list(prefs))]
    neg = -np.array([[row[w] for w in powers.names] for row in rows], dtype=np.int64)
    times = []
    for _ in range(5):
        a = perf_counter_ns()
        linear_sum_assignment(neg)
        times.append((perf_counter_ns() - a) / 1e9)
    return statistics.median(times)


def _read(genome: Genome, powers):
    return {pl: read_preference(text, powers) for pl, text in texts(genome, powers.names).items()}


def describe(t: Tried, n: int) -> str:
    """What an input looks like: where it came from, its lists, its blocks."""
    firsts = sorted(len(groups[0]) if groups else 0 for groups in t.genome)
    lengths = sorted(len(groups) for groups in t.genome)
    one_bracket = sum(1 for groups in t.genome if len(groups) == 1 and len(groups[0]) > 1)
    listed = sorted(sum(map(len, groups)) for groups in t.genome)
    text = (f"{t.origin} + {t.mutations} mutations: first groups of {firsts[0]}-{statistics.median(firsts):g}-"
            f"{firsts[-1]} powers (min-median-max), {lengths[0]}-{lengths[-1]} groups a list, "
            f"{listed[0]}-{listed[-1]} powers listed, {one_bracket} of {n} lists a single bracket; ")
    if t.refused:
        return text + "refused: " + t.refused.split(" in ways")[0]
    if not t.blocks:
        return text + "one best assignment"
    parts = [f"{size} players {'counted' if counted else 'sampled'} ({approx(count)})"
             for size, counted, count in t.blocks]
    return text + "tied blocks: " + ", ".join(parts)


def pathological_child(n: int, budget: float, seed: int, dump: str | None) -> dict:
    """The climb at one size (run in its own process: its ru_maxrss is the
    size's peak memory)."""
    imports = rss_mb()  # Python, numpy, scipy, numba (the bench imports them all)
    powers = powers_of(n)
    rnd = random.Random(f"climb/{seed}/{n}")
    # Untimed: loads scipy and numba's kernels (tight pairs, sampler trials).
    _time_method(powers, _read(anything_but(n, rnd=random.Random(0)), powers), b"warm")
    base = rss_mb()
    tried: list[Tried] = []

    def evaluate(genome: Genome, origin: str, mutations: int) -> None:
        prefs = _read(genome, powers)
        secs, out, refused = _time_method(powers, prefs, CLIMB_SEED)
        blocks = [] if out is None else [(len(b["players"]), b["exact"], b["count"])
                                         for r in out.rounds for b in r.blocks]
        tried.append(Tried(genome, origin, mutations, secs, _lsa_time(powers, prefs), refused,
                           out is not None and out.exact, blocks))

    start = perf_counter()
    for shape, make in SHAPES.items():  # the test suite's profiles (tests/test_adversarial_preference.py)
        for k in range(2):
            evaluate(make(n, random.Random(f"{shape}/{n}/{k}")), shape, 0)
    while perf_counter() - start < budget:
        # A refusal is already the worst outcome: climb from inputs drawn.
        ranked = sorted((t for t in tried if t.refused is None), key=lambda t: -t.seconds) or tried
        parent = ranked[0] if rnd.random() < 0.6 else rnd.choice(ranked[:5])
        genome = parent.genome
        steps = rnd.randint(1, 3)
        for _ in range(steps):
            genome = mutate(genome, n, rnd)
        evaluate(genome, parent.origin, parent.mutations + steps)
    climbed = perf_counter() - start
    ranked = sorted(tried, key=lambda t: -t.seconds)
    worst = ranked[0]
    drawn = [t for t in ranked if t.refused is None]

    def retimed(t: Tried) -> list[float]:
        prefs = _read(t.genome, powers)
        return [t.seconds] + [_time_method(powers, prefs, s)[0] for s in RETIME_SEEDS]

    times = retimed(worst)
    drawn_times = times if drawn and drawn[0] is worst else retimed(drawn[0]) if drawn else [math.nan]
    # Python's and numpy's allocations of one run of the worst input (numba's
    # loops allocate nothing); untimed, as tracing slows allocation down.
    tracemalloc.start()
    _time_method(powers, _read(worst.genome, powers), CLIMB_SEED)
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    if dump:
        Path(dump).mkdir(parents=True, exist_ok=True)
        for rank, t in enumerate(ranked[:3], 1):
            content = {"method": "preference", "powers": powers.names,
                       "params": {"mode": "list", "shortcut": False, "players": None},
                       "submissions": texts(t.genome, powers.names)}
            Path(dump, f"pathological-{n}-{rank}.json").write_text(json.dumps(content, indent=1) + "\n")
    return {
        "n": n, "tried": len(tried), "climbed": climbed, "worst_max": max(times),
        "worst_median": statistics.median(times), "lsa": worst.lsa, "traced": traced,
        "drawn_max": max(drawn_times), "drawn_lsa": drawn[0].lsa if drawn else math.nan,
        "rss": rss_mb(), "base_rss": base, "imports_rss": imports,
        "refused": sum(t.refused is not None for t in tried),
        "counted": sum(t.counted for t in tried),
        "median_all": statistics.median(t.seconds for t in tried),
        "slowest": [f"{t.seconds:.3f} s: {describe(t, n)}" for t in ranked[:3]],
    }


def pathological(sizes: list[int], budget: float, seed: int, dump: str | None) -> None:
    print(f"Adversarial inputs (tests/adversarial_cases.py), hill-climbed {budget:g} s per size, one process per size;"
          " the whole method (mode list, the default optimum) against linear_sum_assignment on the same table")
    print("| N | inputs tried | worst time (max of 3 seeds) | its median | LSA on it | ratio |"
          " slowest drawn (not refused), ratio | median of all inputs |"
          " peak RSS (ru_maxrss; after imports; after a first solve) | traced peak, worst input |"
          " drawn exactly (counted + sampled) | refused (TooHard) | issue 12 bound | within |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    found = []
    for n in sizes:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--pathological-child", str(n),
               "--budget", str(budget), "--seed", str(seed)] + (["--dump", dump] if dump else [])
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"| {n} | the child failed: {done.stderr.strip().splitlines()[-1:]} |")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        exact = r["tried"] - r["refused"]
        b = bound_for(n)
        within = "-" if b is None else (
            "yes" if r["worst_max"] <= b[0] and r["rss"] <= b[1] and (b[2] or not r["refused"]) else "NO")
        print(f"| {n} | {r['tried']} | {r['worst_max']:.3f} s | {r['worst_median']:.3f} s | {1e6 * r['lsa']:.0f} us |"
              f" {r['worst_max'] / r['lsa']:.0f}x | {r['drawn_max']:.3f} s, {r['drawn_max'] / r['drawn_lsa']:.0f}x |"
              f" {1000 * r['median_all']:.1f} ms |"
              f" {r['rss']:.0f} MB ({r['imports_rss']:.0f}; {r['base_rss']:.0f}) | {r['traced']:.0f} MB |"
              f" {exact}/{r['tried']} ({r['counted']} + {exact - r['counted']}) | {r['refused']} |"
              f" {'-' if b is None else f'{b[0]:g} s, {b[1]} MB' + (', or refused' if b[2] else '')} | {within} |")
        found.append((n, r["slowest"]))
    print()
    for n, slowest in found:
        print(f"Slowest at N = {n}:")
        for line in slowest:
            print(f"  {line}")


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
    ap.add_argument("--path", choices=PATHS, default="compiled",
                    help="the solver's optimum and blocks compiled (as a warm judge runs) or without a JIT")
    ap.add_argument("--pathological", action="store_true",
                    help="hill-climb adversarial shapes for the slowest input per size (see the module docstring)")
    ap.add_argument("--size", default="17,24,36,50", help="--pathological: the sizes (powers), e.g. 100")
    ap.add_argument("--budget", type=float, default=25.0, help="--pathological: seconds of climbing per size")
    ap.add_argument("--dump", help="--pathological: write each size's slowest inputs here as judge resolve files")
    ap.add_argument("--pathological-child", type=int, help=argparse.SUPPRESS)  # one size, in its own process
    args = ap.parse_args()
    if args.pathological_child:
        print(json.dumps(pathological_child(args.pathological_child, args.budget, args.seed, args.dump)))
        return
    if args.pathological:
        pathological([int(x) for x in args.size.split(",")], args.budget, args.seed, args.dump)
        return
    SHORTCUT[0] = args.shortcut
    use_path(args.path)
    print(f"{args.cases} realistic profiles per N (mode both, shortcut {'on' if args.shortcut else 'off: the default'}),"
          f" {args.reps} timed runs each, the {args.path} path;"
          " microseconds")
    print("| N | LSA primary median | LSA p99 | whole method median | p99 | max | ratio median | ratio p99 |"
          " profiles with ties | largest tied block | fell back (exact false) | shortcut changed optimum |"
          " CPU: LSA median | CPU: whole method median | CPU ratio median |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in [int(x) for x in args.sizes.split(",")]:
        r = run(n, args.cases, args.reps, args.seed)
        print(f"| {n} | {r['lsa_med']:.1f} | {r['lsa_p99']:.1f} | {r['med']:.1f} | {r['p99']:.1f} | {r['max']:.0f} |"
              f" {r['med'] / r['lsa_med']:.1f} | {r['p99'] / r['lsa_p99']:.1f} | {100 * r['ties']:.0f}% |"
              f" {r['largest']} | {r['inexact']} | {100 * r['differs']:.0f}% |"
              f" {r['cpu_lsa_med']:.1f} | {r['cpu_med']:.1f} | {r['cpu_med'] / r['cpu_lsa_med']:.1f} |")
    print()
    print(f"Brute force over all N! permutations (numpy, {args.brute_cases} profiles each)")
    print("| N | permutations | median microseconds |")
    print("| --- | --- | --- |")
    for n in [int(x) for x in args.brute_sizes.split(",") if x]:
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
