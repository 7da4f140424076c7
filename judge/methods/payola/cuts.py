"""The overspending passes (5.5 as DPjudge makes them: every bribe of an
overspending power cut by one, the whole board resolved again, until
nobody overspends), made without a pass per cut.

A power's bribes fall together: after R cuts a bribe of `a` AgP with
plateau `p` stands at max(p, a - R), and once all stand at their plateaus
the plateaus are forgotten and each falls to 0. So the totals of a unit's
candidate orders are sums of such falls, kept per candidate and power
(`total`) with how many AgP they lose per cut (`slope`). Between two
events (a bribe reaching its plateau or 0, a unit changing its winner or
meeting a new tie, a power starting or ending to overspend) every pass
would cut the same bribes of the same powers and choose the same orders:
those passes are made at once. The result is the one a cut at a time
gives (bribes.resolve_checked(stepwise=True); tests/test_payola_property.py
compares them), and the work is a few sums per event instead of the whole
board per cut: a 9999 AgP offer from an empty purse is one event.

Under EBAYOLA a power pays a rebated price, not its offer: between two
events the price is still a straight line of the cuts as long as no
branch of its arithmetic changes (bribes._ebayola_run says for how long),
and the best losing order stays the same; those are events too.

Pure; the bribes are duck-typed (power, amount, plateau, count) so that
this module imports nothing of bribes.py.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Mapping, Sequence

INF = 1 << 62


def passes(board: Sequence[tuple[str, Sequence[Any]]], bribes: Mapping[str, Sequence[Any]], names: Sequence[str],
           liquid: Mapping[str, int], pick: Callable[[str, Sequence[Any], list[int]], Any],
           charge: Callable[..., dict[str, int]] | None = None, dummies: frozenset[int] = frozenset(),
           charge_run: Callable[..., tuple[int, dict[str, int]]] | None = None
           ) -> tuple[dict[str, Any], dict[str, int], int, dict[str, dict[str, int]]]:
    """The passes of one phase: (unit -> the winning candidate, power -> its
    cuts, the number of passes a cut at a time makes, unit -> what each
    power pays its order). `pick(unit, candidates, totals)` chooses among a
    unit's candidates (5.1-5.4, the draw, a dummy's hold). `charge(unit,
    chosen, totals, paid, plateaus)`: what each power pays, when that is
    not what it offered (EBAYOLA); `charge_run(unit, chosen, paid,
    plateaus, falls, runner_total, runner_fall)`: for how many cuts that
    price stays one straight line, and each power's fall a cut (without it,
    the passes are made a cut at a time). `dummies`: the units
    (indices in `board`) whose `pick` holds on a tie between powers, so
    that a tie, not only a pass, ends a run of cuts. Leaves each bribe's
    amount (and plateau, once forgotten) as the cuts made them."""
    every = [b for name in names for b in bribes[name]]
    index = {id(b): i for i, b in enumerate(every)}
    base = [b.amount for b in every]
    floor = [b.plateau for b in every]
    count = [b.count for b in every]
    owner = [b.power for b in every]

    cands: list[Any] = []  # every candidate of every unit, flat
    unit_of: list[int] = []
    first: list[int] = []  # each unit's first candidate in `cands`
    for u, (_, candidates) in enumerate(board):
        first.append(len(cands))
        for c in candidates:
            cands.append(c)
            unit_of.append(u)
    first.append(len(cands))
    holders: list[list[int]] = [[] for _ in every]  # bribe -> the candidates its money goes to
    total: list[dict[str, int]] = [{} for _ in cands]
    slope: list[dict[str, int]] = [{} for _ in cands]
    plateau: list[dict[str, int]] = [{} for _ in cands]  # what each power's money there may not fall below
    for ci, c in enumerate(cands):
        for b in c.bribes:
            i = index[id(b)]
            holders[i].append(ci)
            total[ci][b.power] = total[ci].get(b.power, 0) + base[i] * count[i]
            plateau[ci][b.power] = plateau[ci].get(b.power, 0) + floor[i] * count[i]
            slope[ci].setdefault(b.power, 0)
    sums = [sum(d.values()) for d in total]  # each candidate's total

    cuts = {n: 0 for n in names}
    forgot_at: dict[str, int] = {}
    at_forget = list(base)
    falling: dict[str, list[tuple[int, int]]] = {n: [] for n in names}  # (cuts at which it stops, bribe)

    # power -> the candidates whose total its cuts lower now (a slope above 0): only their units can
    # change, so only they are passed again and looked at for the next event.
    moving: dict[str, set[int]] = {n: set() for n in names}

    def start_falling(i: int, stops_at: int) -> None:
        heapq.heappush(falling[owner[i]], (stops_at, i))
        for ci in holders[i]:
            slope[ci][owner[i]] += count[i]
            moving[owner[i]].add(ci)

    for i in range(len(every)):
        if base[i] > floor[i]:
            start_falling(i, base[i] - floor[i])

    winners: list[int] = [0] * len(board)
    paid: list[dict[str, int]] = [{} for _ in board]
    dirty = set(range(len(board)))
    rounds = 0
    while True:
        rounds += 1
        for u in dirty:
            lo, hi = first[u], first[u + 1]
            chosen = pick(board[u][0], board[u][1], sums[lo:hi])
            winners[u] = w = lo + next(k for k, c in enumerate(board[u][1]) if c is chosen)
            paid[u] = total[w] if charge is None else charge(
                board[u][0], chosen, sums[lo:hi], dict(total[w]),
                {p: 0 if p in forgot_at else v for p, v in plateau[w].items()})  # forgotten plateaus are 0
        cost = {n: 0 for n in names}
        for each in paid:
            for name, amount in each.items():
                cost[name] += amount
        over = [n for n in names if cost[n] > liquid[n]]
        if not over:
            break
        forgot_now = False
        for name in over:
            if not falling[name]:
                forgot_now = True
                # All at their plateaus: they are forgotten, and all fall to 0 (reduce).
                assert name not in forgot_at, "a power with nothing left to cut spends nothing"
                forgot_at[name] = cuts[name]
                for b in bribes[name]:
                    i = index[id(b)]
                    at_forget[i] = floor[i]
                    if floor[i] > 0:
                        start_falling(i, cuts[name] + floor[i])
        dirty = {unit_of[ci] for n in over for ci in moving[n]}
        priced = None
        if charge_run is not None:
            def priced(u: int, w: int, runner: int | None) -> tuple[int, dict[str, int]]:
                """The cuts for which unit u's price stays one straight line, and each power's fall a cut."""
                falls = {n: (slope[w].get(n, 0) if n in over else 0) for n in total[w]}
                runner_total = None if runner is None else sums[runner]
                runner_fall = 0 if runner is None else sum(slope[runner].get(n, 0) for n in over)
                return charge_run(board[u][0], cands[w], dict(total[w]),
                                  {p: 0 if p in forgot_at else v for p, v in plateau[w].items()}, falls,
                                  runner_total, runner_fall)
        # A price (EBAYOLA) counts plateaus: forgetting them changes it at once, so one cut, then look again.
        k = 1 if charge is not None and (charge_run is None or forgot_now) else _run_length(
            over, board, first, winners, sums, slope, falling, cuts, cost, liquid, dirty, dummies, priced, names)
        for name in over:
            cuts[name] += k
            for ci in moving[name]:
                fall = k * slope[ci][name]
                total[ci][name] -= fall
                sums[ci] -= fall
            heap = falling[name]
            while heap and heap[0][0] <= cuts[name]:
                _, i = heapq.heappop(heap)
                for ci in holders[i]:
                    slope[ci][name] -= count[i]
                    if not slope[ci][name]:
                        moving[name].discard(ci)
        rounds += k - 1

    for i, b in enumerate(every):
        if b.power in forgot_at:
            b.plateau = 0
            b.amount = max(0, at_forget[i] - (cuts[b.power] - forgot_at[b.power]))
        else:
            b.amount = max(floor[i], base[i] - cuts[b.power])
    return ({board[u][0]: cands[w] for u, w in enumerate(winners)}, cuts, rounds,
            {board[u][0]: dict(paid[u]) for u in range(len(board))})


def _run_length(over: list[str], board: Sequence[tuple[str, Sequence[Any]]], first: list[int], winners: list[int],
                sums: list[int], slope: list[dict[str, int]],
                falling: Mapping[str, list[tuple[int, int]]], cuts: Mapping[str, int], cost: Mapping[str, int],
                liquid: Mapping[str, int], changing: set[int], dummies: frozenset[int] = frozenset(),
                priced: Callable[[int, int, int | None], tuple[int, dict[str, int]]] | None = None,
                names: Sequence[str] = ()) -> int:
    """k such that cutting `over` k times at once is what k passes would
    do: for the first k-1 cuts no winner changes or newly ties, the same
    powers and only they overspend, and no bribe stops falling before the
    k-th (see the module's docstring). For a dummy's unit the top orders
    must stay the same ones: a new tie there may hold the unit. `changing`:
    the units whose totals the cuts lower (no other unit can change).
    `priced`: when a power pays another price than its offer (EBAYOLA),
    each changing unit's run of one straight price and its falls; the
    unit's best losing order must then stay the same one too, and a power
    that does not overspend may come to (its price rising as a saving
    shrinks)."""
    k = INF
    rate: dict[int, int] = {}
    for u in changing:
        for ci in range(first[u], first[u + 1]):
            rate[ci] = sum(slope[ci].get(n, 0) for n in over)
    if priced is None:
        drops = {name: sum(slope[winners[u]].get(name, 0) for u in changing) for name in over}
    else:
        drops = dict.fromkeys(names, 0)
        for u in changing:
            w = winners[u]
            others = [ci for ci in range(first[u], first[u + 1]) if ci != w]
            runner = max(others, key=lambda ci: (sums[ci], -rate[ci])) if others else None
            run, falls = priced(u, w, runner)
            k = min(k, run)
            for name, fall in falls.items():
                drops[name] += fall
            if runner is not None:
                # The best losing order must stay the best: the first cut at which another reaches it.
                for ci in others:
                    closing = rate[runner] - rate[ci]
                    if ci != runner and closing > 0:
                        k = min(k, -(-(sums[runner] - sums[ci]) // closing))
        for name, drop in drops.items():
            if name not in over and drop < 0:
                k = min(k, (liquid[name] - cost[name]) // -drop + 1)  # the first cut at which it overspends
    for name in over:
        k = min(k, falling[name][0][0] - cuts[name])
        if drops.get(name, 0) > 0:
            k = min(k, -(-(cost[name] - liquid[name]) // drops[name]))
    for u in changing:
        if u in dummies:
            k = min(k, _top_run(u, first, sums, rate))
            continue
        w = winners[u]
        key_w = board[u][1][w - first[u]].key
        total_w, drop_w = sums[w], rate[w]
        for ci in range(first[u], first[u + 1]):
            closing = drop_w - rate[ci]
            if closing <= 0 or ci == w:
                continue
            gap = total_w - sums[ci]
            # The winner keeps winning while its lead stays positive, or nil
            # with a better tie-break (5.2-5.4): the first cut that ends it.
            k = min(k, gap // closing + 1 if key_w < board[u][1][ci - first[u]].key else -(-gap // closing))
    return max(k, 1)


def _top_run(u: int, first: list[int], sums: list[int], rate: Mapping[int, int]) -> int:
    """The cuts for which a dummy's unit keeps the same top orders: 1 when
    tied top orders fall at different rates (they part at once), else the
    first cut at which another order reaches them."""
    lo, hi = first[u], first[u + 1]
    top = max(sums[lo:hi])
    tops = [ci for ci in range(lo, hi) if sums[ci] == top]
    if len({rate[ci] for ci in tops}) > 1:
        return 1
    k = INF
    for ci in range(lo, hi):
        closing = rate[tops[0]] - rate[ci]
        if sums[ci] != top and closing > 0:
            k = min(k, -(-(top - sums[ci]) // closing))
    return k
