"""Timing of the Blind Auction: resolution (U = 7 and U = 36) and the parsing
and checking of a 7-line bid mail.

Run:  .venv/bin/python bench/bench_blind_auction.py [--reps N]

Each item is timed against a baseline run in the same process: a plain
sorted() over the same data (the (bid, power, player) triples for a
resolution; the (power, amount) pairs of the bid lines for the mail).
Baseline and measured samples are interleaved, so slow phases of the machine
hit both alike; the ratio median(item) / median(baseline) is the number to
compare between machines. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.methods.blind_auction.engine import (  # noqa: E402
    NO_PREFERENCE,
    BidEntry,
    BidList,
    Params,
    check_params,
    effective_bids,
    validate,
    resolve,
)
from judge.rng import DrawStream  # noqa: E402
from judge.syntax import parse_line  # noqa: E402
from judge.variants import make_power_list, variant_powers  # noqa: E402


def random_bid_list(rnd: random.Random, names: list[str], params: Params) -> dict[str, int]:
    """A random valid list: ranks 1..U plus non-decreasing extras that use up
    (most of) T - (1+...+U) without passing M; top-heavy or flat at random."""
    U = len(names)
    budget = params.T - U * (U + 1) // 2
    shape = rnd.uniform(0.5, 6.0)
    xs = sorted(rnd.random() ** shape for _ in range(U))
    scale = budget / sum(xs)
    extras = [int(x * scale) for x in xs]  # floor keeps the order
    top_room = params.M - U
    if extras[-1] > top_room:  # cap the favourite, keep the order
        extras = [min(e, top_room) for e in extras]
    values = [r + 1 + e for r, e in enumerate(extras)]
    order = names[:]
    rnd.shuffle(order)
    bids = dict(zip(order, values))
    entries = [BidEntry(power=w, amount=str(a)) for w, a in bids.items()]
    assert validate(make_power_list(names), params, entries).ok
    return bids


def auction(U: int, params: Params, no_pref: int, seed: int):
    rnd = random.Random(seed)
    names = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"] if U == 7 else [
        f"Power{k:02d}" for k in range(U)
    ]
    powers = variant_powers("standard") if U == 7 else make_power_list(names)
    check_params(U, params)
    players = [f"player{k:02d}@example.org" for k in range(U)]
    subs = {}
    for k, pl in enumerate(players):
        subs[pl] = NO_PREFERENCE if k < no_pref else BidList(random_bid_list(rnd, names, params))
    triples = [
        (bid, w, pl) for pl, b in subs.items() for w, bid in effective_bids(b, powers, params).items()
    ]
    return powers, subs, triples


def calibrate(fn: Callable[[], object], target_ns: int = 300_000) -> int:
    """Calls per sample so that a sample lasts about target_ns."""
    n = 1
    while True:
        t0 = perf_counter_ns()
        for _ in range(n):
            fn()
        dt = perf_counter_ns() - t0
        if dt >= target_ns or n >= 1 << 20:
            return max(1, int(n * target_ns / max(dt, 1)))
        n *= 2


def measure(item: Callable[[], object], baseline: Callable[[], object], reps: int):
    """Interleaved samples; per-call times in ns for item and baseline."""
    ni, nb = calibrate(item), calibrate(baseline)
    item_t, base_t = [], []
    for _ in range(reps):
        t0 = perf_counter_ns()
        for _ in range(nb):
            baseline()
        t1 = perf_counter_ns()
        for _ in range(ni):
            item()
        t2 = perf_counter_ns()
        base_t.append((t1 - t0) / nb)
        item_t.append((t2 - t1) / ni)
    return item_t, base_t


def p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10)[-1]


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.0f} ns"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500, help="interleaved samples per item")
    args = ap.parse_args()

    rows = []

    for U, params, no_pref in ((7, Params(T=140, M=70, D=1), 1), (36, Params(T=2600, M=1300, D=1), 3)):
        powers, subs, triples = auction(U, params, no_pref, seed=U)
        seeds = [bytes([k % 256, k // 256]) for k in range(4096)]
        state = {"k": 0}

        def run_resolve(powers=powers, params=params, subs=subs, state=state, seeds=seeds):
            state["k"] = (state["k"] + 1) % len(seeds)
            return resolve(powers, params, subs, DrawStream(seeds[state["k"]]))

        def run_sorted(triples=triples):
            return sorted(triples)

        out = run_resolve()
        label = f"resolve U={U} (T={params.T}, M={params.M}, {no_pref} no-pref)"
        rows.append((label, *measure(run_resolve, run_sorted, args.reps), f"{len(out.draws)} draws"))

    mail = ["Austria 40", "England: 30", "F=25", "ger 20", "Italy 15", "russia: 6", "T=4"]
    std = variant_powers("standard")
    custom = Params(T=140, M=70, D=1)

    def run_parse():
        found = []
        for k, line in enumerate(mail, 1):
            found.extend(parse_line(line, k).entries)
        checked = validate(std, custom, found)
        assert checked.ok
        return checked

    pairs = [(e.power, e.amount) for k, line in enumerate(mail, 1) for e in parse_line(line, k).entries]

    def run_pairs_sorted():
        return sorted(pairs)

    run_parse()
    rows.append(("parse + validate 7-line mail", *measure(run_parse, run_pairs_sorted, args.reps), "7 lines"))

    head = f"{'item':<44} {'median':>10} {'p90':>10} {'sorted() med':>13} {'ratio':>8}  note"
    print(f"Blind Auction bench, {args.reps} interleaved samples per item, Python {sys.version.split()[0]}")
    print(head)
    print("-" * len(head))
    for label, item_t, base_t, note in rows:
        med, base = statistics.median(item_t), statistics.median(base_t)
        print(f"{label:<44} {fmt(med):>10} {fmt(p90(item_t)):>10} {fmt(base):>13} {med / base:>7.0f}x  {note}")


if __name__ == "__main__":
    main()
