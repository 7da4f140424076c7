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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    bench("Spring 1901", initial_units("standard"), args.runs)
    bench("Middle game", middle_game(34, seed=14), args.runs)


if __name__ == "__main__":
    main()
