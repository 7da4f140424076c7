"""Timing of one Payola movement phase's bribes (issue 14) against the
adjudication of the same orders.

Run:  .venv/bin/python bench/bench_payola.py [--runs 30]

Two boards of the standard map: the 22 units of Spring 1901, and 34 units
(a made-up middle game: every province holds at most one unit, owners in
turn). Every power sends a sheet: for each of its units a plateaued offer
and an alternative, for foreign units direct, negative, move and hold
offers, and savings; in all about twice its balance, so that the board is
resolved again several times (the rounds are printed).

Timed, each the median of --runs, interleaved:
- cold: bribes.choose_orders from the texts, nothing kept from before (the
  position built, every line parsed and checked against the map, the
  conversion, every overspending pass, the debit);
- at the deadline: the same call when each sheet was checked as it came
  (bribes.check_sheet, untimed, as the game by mail does): the parsed lines
  and the position are kept (sheet._parse, orders._board), the checks and
  everything after are done again;
- passes: bribes.resolve_checked from the checked sheets (the conversion,
  the passes, the debit);
- adjudication: the `diplomacy` package given the chosen orders (a Game at
  the position, the orders set, processed), the baseline.
The ratios to the adjudication are the numbers to compare between
machines. Nothing is asserted.

--worst (issue 24, docs/payola.md "Limits"): seven sheets of the attack that
took 24-35 s and ~600 MB a phase (499 lines of 83 `+`-joined
`NN*NNNN#NNN` offers each), now refused line by line before the parser;
seven sheets of 500 lines the parser reads to their end before refusing
them; and the worst the limits let through: seven sheets of MAX_SHEET_BRIBES
bribes, lines of MAX_PIECES random `NN*NNNN#NNN` pieces on three orders
each, from purses of 10 AgP (so that nearly every bribe is cut to 0, each
its own event), plain and under EBAYOLA (whose rebated prices make
more events). Each: choose_orders cold, its peak memory (tracemalloc), against
the adjudication of the orders it chose.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.methods.payola import bribes, orders, sheet  # noqa: E402
from judge.methods.payola.orders import board, initial_units, power_names  # noqa: E402
from judge.methods.payola.replay import adjudicate  # noqa: E402
from judge.rng import DrawStream  # noqa: E402

POWERS = power_names("standard")
LETTERS = "AEFGIRT"


def middle_game(n: int, seed: int) -> dict[str, str]:
    """n units, one per province, owners in turn: armies on land, fleets at sea."""
    from diplomacy.engine.map import Map

    m = Map("standard")
    rng = random.Random(seed)
    provinces = sorted({loc.upper().split("/")[0] for loc in m.locs})
    rng.shuffle(provinces)
    units: dict[str, str] = {}
    for loc in provinces:
        if len(units) == n:
            break
        kind = m.area_type(loc)
        unit = f"A {loc}" if kind in ("LAND", "COAST") and rng.random() < 0.7 or kind == "LAND" else f"F {loc}"
        if unit.startswith("F") and kind == "COAST" and [c for c in m.loc_coasts[loc] if "/" in c]:
            unit = f"F {[c for c in m.loc_coasts[loc] if '/' in c][0]}"
        if m.is_valid_unit(unit):
            units[unit] = POWERS[len(units) % 7]
    return units


def sheets_for(units: dict[str, str], balances: dict[str, int], seed: int) -> dict[str, str]:
    possible: dict[str, list[str]] = {}
    for order in sorted(board("standard", units).possible):
        possible.setdefault(" ".join(order.split()[:2]), []).append(order)
    rng = random.Random(seed)
    out = {}
    for power in POWERS:
        own = [u for u, o in sorted(units.items()) if o == power]
        foreign = [u for u, o in sorted(units.items()) if o != power]
        budget = balances[power]
        lines = [f"{max(budget // 10, 1)} $"]
        for unit in own:
            first, second = rng.sample(possible[unit], 2)
            a = rng.randint(budget // 6, budget // 3)
            lines.append(f"{a}#{a // 2} : {first}")
            lines.append(f"{rng.randint(1, 5)} : {second}")
        for unit in rng.sample(foreign, min(len(foreign), 2 * len(own))):
            order = rng.choice(possible[unit])
            kind = rng.choice(":::!>@")
            lines.append(f"{rng.randint(3, budget // 5)} {kind} {order}")
        out[power] = "\n".join(lines)
    return out


def median_ms(samples: list[int]) -> float:
    return statistics.median(samples) / 1e6


def bench(name: str, units: dict[str, str], runs: int) -> None:
    balances = {p: 48 + 14 * (p == "Russia") for p in POWERS}  # Spring 1901: 17+16+15, Russia 4 centres
    sheets = sheets_for(units, balances, seed=len(units))
    acceptance = {p: LETTERS[POWERS.index(p)] + "?" for p in POWERS}
    timed = {"cold": [], "at the deadline": [], "passes": [], "adjudication": []}
    result = None

    def choose(k: int) -> bribes.BribeResult:
        return bribes.choose_orders(variant="standard", units=units, balances=balances, acceptance=acceptance,
                                    sheets=sheets, stream=DrawStream(bytes([k % 256, 1])))

    for k in range(runs + 1):
        sheet._parse.cache_clear()
        orders._board.cache_clear()
        t0 = perf_counter_ns()
        result = choose(k)
        t1 = perf_counter_ns()
        for p in POWERS:  # as each sheet came
            bribes.check_sheet(variant="standard", units=units, power=p, text=sheets[p])
        t2 = perf_counter_ns()
        choose(k)
        t3 = perf_counter_ns()
        position = board("standard", units)
        checks = {p: bribes._check(position, p, sheets[p]) for p in POWERS}
        t4 = perf_counter_ns()
        bribes.resolve_checked(position=position, checks=checks, balances=balances, acceptance=acceptance,
                               stream=DrawStream(bytes([k % 256, 1])))
        t5 = perf_counter_ns()
        adjudicate("standard", "S1901M", units, result.orders)
        t6 = perf_counter_ns()
        if k:  # the first run warms what every run finds (the map, the grammar)
            timed["cold"].append(t1 - t0)
            timed["at the deadline"].append(t3 - t2)
            timed["passes"].append(t5 - t4)
            timed["adjudication"].append(t6 - t5)
    assert result is not None
    lines = sum(len(s.splitlines()) for s in sheets.values())
    adj = median_ms(timed["adjudication"])
    print(f"{name}: {len(units)} units, {lines} sheet lines, {result.passes - 1} overspending rounds, "
          f"cuts {sum(result.reductions.values())} "
          f"({', '.join(f'{p[:3]} {n}' for p, n in result.reductions.items() if n)})")
    print(f"  adjudication alone   {adj:7.2f} ms")
    for key in ("cold", "at the deadline", "passes"):
        ms = median_ms(timed[key])
        print(f"  {key:<20} {ms:7.2f} ms   {ms / adj:5.2f} x the adjudication")


def attack_sheets(units: dict[str, str]) -> dict[str, str]:
    """Issue 24's: 499 lines a power of 83 pieces NN*NNNN#NNN on one unit."""
    rng = random.Random(24)
    out = {}
    for power in POWERS:
        unit = sorted(u for u, o in units.items() if o == power)[0]
        line = lambda: "+".join(f"{rng.randint(10, 99)}*{rng.randint(1000, 9999)}#{rng.randint(100, 999)}"
                                for _ in range(83)) + f" : {unit} H"  # noqa: E731
        out[power] = "\n".join(line() for _ in range(499))
    return out


def garbage_sheets(units: dict[str, str]) -> dict[str, str]:
    """500 lines a power that the parser reads to their end before it refuses
    them: 15 alternatives, then a word no order has."""
    rng = random.Random(25)
    out = {}
    for power in POWERS:
        unit = sorted(u for u, o in units.items() if o == power)[0]
        out[power] = "\n".join(f"{k} : {unit} H" + "".join(rng.choice([" | H", " | - XXX", " | S A MAR"])
                                                              for _ in range(15)) + " junk"
                               for k in range(1, 501))
    return out


def worst_allowed(units: dict[str, str]) -> dict[str, str]:
    """MAX_SHEET_BRIBES a power: lines of MAX_PIECES random pieces, three
    orders each, on every unit in turn (own and foreign)."""
    from judge.methods.payola.bribes import MAX_SHEET_BRIBES
    from judge.methods.payola.sheet import MAX_PIECES

    possible: dict[str, list[str]] = {}
    for order in sorted(board("standard", units).possible):
        possible.setdefault(" ".join(order.split()[:2]), []).append(order)
    rng = random.Random(26)
    out = {}
    for power in POWERS:
        lines, made = [], 0
        targets = sorted(units)
        while made + MAX_PIECES * 3 <= MAX_SHEET_BRIBES:
            unit = targets[len(lines) % len(targets)]
            orders_ = rng.sample(possible[unit], min(3, len(possible[unit])))
            amount = "+".join(f"{rng.randint(10, 99)}*{rng.randint(1000, 9999)}#{rng.randint(0, 999)}"
                              for _ in range(MAX_PIECES))
            lines.append(f"{amount} : {orders_[0]}" + "".join(" | " + o.split(" ", 2)[2] for o in orders_[1:]))
            made += MAX_PIECES * len(orders_)
        out[power] = "\n".join(lines)
    return out


def worst(runs: int) -> None:
    import tracemalloc

    from judge.methods.payola.rules import rules_from

    balances = {p: 10 for p in POWERS}
    acceptance = {p: LETTERS[POWERS.index(p)] + "?" for p in POWERS}
    start, middle = initial_units("standard"), middle_game(34, seed=14)
    for name, units, sheets, rules in (
            ("issue 24's attack (refused), Spring 1901", start, attack_sheets(start), ()),
            ("lines read to their end, then refused, Spring 1901", start, garbage_sheets(start), ()),
            ("worst allowed, Spring 1901", start, worst_allowed(start), ()),
            ("worst allowed, 34 units", middle, worst_allowed(middle), ()),
            ("worst allowed, Spring 1901, EBAYOLA", start, worst_allowed(start), ("EBAYOLA",)),
            ("worst allowed, 34 units, EBAYOLA", middle, worst_allowed(middle), ("EBAYOLA",))):
        def choose(k: int) -> bribes.BribeResult:
            sheet._parse.cache_clear()
            orders._board.cache_clear()
            return bribes.choose_orders(variant="standard", units=units, balances=balances, acceptance=acceptance,
                                        sheets=sheets, stream=DrawStream(bytes([k % 256, 2])),
                                        rules=rules_from({"rules": list(rules)}))

        times, adj = [], []
        result = choose(0)  # warms the map and the grammar
        for k in range(runs):
            t0 = perf_counter_ns()
            result = choose(k)
            t1 = perf_counter_ns()
            adjudicate("standard", "S1901M", units, result.orders)
            t2 = perf_counter_ns()
            times.append(t1 - t0)
            adj.append(t2 - t1)
        tracemalloc.start()  # apart from the timing: it slows Python several times over
        choose(0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        lines = sum(len(x.splitlines()) for x in sheets.values())
        ms, a = median_ms(times), median_ms(adj)
        print(f"{name}: {lines} lines, {len(result.rejected)} refused, {result.passes} passes, "
              f"{sum(result.reductions.values())} cuts")
        print(f"  choose_orders {ms:8.1f} ms  ({ms / a:6.1f} x the adjudication, {a:.2f} ms); "
              f"peak memory {peak / 2**20:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--worst", action="store_true", help="issue 24's attack and the worst the limits allow")
    args = parser.parse_args()
    if args.worst:
        worst(args.runs)
        return
    bench("Spring 1901", initial_units("standard"), args.runs)
    bench("Middle game", middle_game(34, seed=14), args.runs)


if __name__ == "__main__":
    main()
