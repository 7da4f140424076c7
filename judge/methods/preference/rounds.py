"""One round of a preference resolution (judge.methods.preference.engine,
steps 1-4 of its docstring): the random powers, the uncontested first
choices, the exact optimum drawn uniformly, and the round's record
(outcome.Round) kept as it goes.

Pure: no I/O, no clock, no global randomness.
"""

from __future__ import annotations

from itertools import compress, count
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from judge.methods.preference.outcome import (Round, _comparison, _spread, _sums, compare_with_shortcut,
                                              compare_without_shortcut)
from judge.rng import DrawStream

if TYPE_CHECKING:
    import numpy as np

    from judge.methods.preference.engine import Params, Preference

# numpy and the solver are imported by the functions that resolve (see engine.py).

_ASKS_RANDOM = attrgetter("random")  # a list that is "*"


def _one_round(r: Round, players: list[str], names: Sequence[str], remaining: list[int], prefs: list[Preference],
               weights: np.ndarray, params: Params, stream: DrawStream, got: list[list[str]],
               worth: list[int]) -> tuple[int, int]:
    """One round (all of it unless duplex): steps 1-4 of engine.py's
    docstring on the powers `remaining` (power-list order), which it
    reduces; each player's powers go to `got` (names), their doubled
    values to `worth`. Returns the sum and the sum of squares of the
    doubled values it gave (random powers included)."""
    import numpy as np

    # (imported as names, not from the package: no package import machinery per round)
    import judge.methods.preference.solver.assignment as assignment
    import judge.methods.preference.solver.linear_assignment as linear_assignment
    import judge.methods.preference.solver.tight_graph as tight_graph

    doubled: list[int] = []  # this round's doubled values of the shortcut and the optimum
    random_sums = (0, 0)  # and of its random powers
    # 1. Random powers: everybody in mode "random", "*" players in mode "both".
    if params.mode == "random":
        randoms = list(range(len(players)))
    else:
        randoms = list(compress(count(), map(_ASKS_RANDOM, prefs))) if params.mode == "both" else []
    open_rows = list(range(len(players)))
    if randoms:
        drawn = _random_powers(r.number, randoms, players, names, remaining, stream)
        for i, w in drawn:
            r.random[players[i]] = names[w]
            got[i].append(names[w])
            worth[i] += weights.item(i, w)
        if drawn:
            random_sums = _sums([weights.item(i, w) for i, w in drawn])
            gone = {i for i, _ in drawn}
            open_rows = [i for i in open_rows if i not in gone]
    if not remaining or not open_rows:
        return random_sums
    before = remaining[:]
    whole = len(open_rows) == weights.shape[0] and len(before) == weights.shape[1]
    if whole:
        open_weights = weights
    else:  # (index arrays made first: a list given to take is converted more slowly)
        open_weights = weights.take(np.fromiter(open_rows, np.intp, len(open_rows)), 0) \
            .take(np.fromiter(before, np.intp, len(before)), 1)
    # 2. Uncontested first choices (the seed's shortcut), as rows and
    # columns of open_weights. The literal step (SET PREFERENCE SHORTCUT)
    # gives them before the optimum, which can cost total value; by default
    # they only break ties among the best assignments.
    kernel = linear_assignment._kernel(len(names))
    listed = [prefs[i].listed for i in open_rows]
    analysed = None  # the optimum's analysis, when the round's compiled call made it
    rest_optimum = None  # and the best of the rest after the literal step, when it was needed
    values = first_sums = None  # and the weights it read: each row's in that optimum, the first choices' sums
    if kernel is not None and not params.shortcut:
        # One compiled call for steps 2-4's compiled parts (the uncontested
        # first choices, the optimum with them as the bonus table, the
        # shortcut's comparison): the same results as the calls one by one
        # below, without their glue (the bonus table, the comparison's
        # arrays and its solve from scratch: solver_kernel.preference_round).
        out = kernel.preference_round(open_weights, weights.shape[1] - 1 - np.array(listed, dtype=np.int64))
        first_rows, first_cols = out[0].tolist(), out[1].tolist()
        analysed = tight_graph._kernel_analysis(*open_weights.shape, *out[2:11])
        if out[11]:
            tight_graph._kernel_status(out[12])
            rest_optimum = (int(out[13]), int(out[14]))
        values, first_sums = out[15].tolist(), (out[16], out[17])
    else:
        uncontested = _uncontested(open_weights, listed, weights.shape[1], kernel)
        first_rows, first_cols = [k for k, _ in uncontested], [j for _, j in uncontested]
    ks: Sequence[int] = []  # the (row, column) pairs given this round, as the results list them
    js: Sequence[int] = []
    if params.shortcut:
        ks, js = first_rows[:], first_cols[:]
        firsts, given = set(first_rows), set(first_cols)
        rest = [k for k in range(len(open_rows)) if k not in firsts]
        columns = [j for j in range(len(before)) if j not in given]
    else:
        rest, columns = range(len(open_rows)), range(len(before))
    # 3-4. The exact optimum of the rest, uniform among all co-optimal
    # assignments (by default, those giving the most uncontested first choices).
    if rest and columns and analysed is not None:  # (all open players and powers: not SHORTCUT)
        sol = assignment.solve(open_weights, stream, what="co-optimal", analysed=analysed)
    elif rest and columns:
        bonus = None
        if not params.shortcut and first_rows:
            bonus = np.zeros(open_weights.shape, dtype=np.int64)
            bonus[first_rows, first_cols] = 1
        table = open_weights if len(rest) == len(open_rows) and len(columns) == len(before) else \
            open_weights.take(rest, 0).take(columns, 1)
        sol = assignment.solve(table, stream, what="co-optimal", bonus=bonus)
    if rest and columns:
        solved = sol.assignment
        if None in solved:
            ks += [k for k, col in zip(rest, solved) if col is not None]
            js += [columns[col] for col in solved if col is not None]
        elif params.shortcut:
            ks += rest
            js += [columns[col] for col in solved]
        else:  # (`rest` and `columns` are all the open players and powers, in order)
            ks, js = rest, solved
        # (an exact count's bounds are the count: every block's low and high are its count)
        r.tied, r.exact = sol.tied, sol.exact
        r.tied_bounds = (sol.tied, sol.tied) if sol.exact else (sol.tied_low, sol.tied_high)
        r.blocks = [{"players": [players[open_rows[rest[k]]] for k in b.rows],
                     "powers": [names[before[columns[j]]] for j in b.cols],
                     "count": b.count, "index": b.index, "exact": b.exact,
                     # a count too big to count is an estimate: its bounds go with it
                     **({} if b.exact else {"low": b.low, "high": b.high})} for b in sol.blocks]
    if ks:
        if values is not None and ks is rest:
            # (every open player has a power: the optimum's values, but
            # for the players of the blocks drawn, whose powers may differ)
            doubled = values
            for b in sol.blocks:
                for k in b.rows:
                    doubled[k] = open_weights.item(k, js[k])
            # and the sums are the optimum's: every co-optimal assignment has its total and sum of squares
            sums = sol.total, sol.sum_squares
        else:
            doubled = list(map(open_weights.item, ks, js))  # (no index arrays built from the lists)
            sums = _sums(doubled)
        # (comprehensions rather than one loop over the pairs: fewer steps per player)
        rows = open_rows if ks is rest and not params.shortcut else [open_rows[k] for k in ks]
        who = [players[i] for i in rows]
        what = [names[j] for j in js] if whole else [names[before[j]] for j in js]  # (whole: before[j] is j)
        # Each pair in the optimum's record, then the uncontested first
        # choices given taken out into the shortcut's, in row order.
        r.optimized = dict(zip(who, what))
        if first_rows:
            at = dict(zip(ks, range(len(ks)))) if ks is not rest else None
            for k, j in zip(first_rows, first_cols):
                x = k if at is None else at.get(k)
                if x is not None and js[x] == j:
                    r.shortcut[who[x]] = r.optimized.pop(who[x])
        for i, w, v in zip(rows, what, doubled):
            got[i].append(w)
            worth[i] += v
        if len(js) == len(remaining):
            remaining.clear()  # every power left is given
        else:
            taken = {before[j] for j in js}
            remaining[:] = [w for w in remaining if w not in taken]
    if not ks:
        sums = 0, 0
    r.total = sums[0] / 2
    # the values' standard deviation from the doubled sums: the same float
    # as from the values (halves of small integers add up exactly)
    r.stddev = _spread(*sums, len(doubled)) if doubled else 0.0
    if first_rows:
        if params.shortcut:
            r.shortcut_check = compare_without_shortcut(open_weights, doubled)
        elif len(r.shortcut) == len(first_rows):
            # The optimum gave every uncontested first choice: the literal
            # step fixes those, and the best of the rest is the optimum's
            # own rest (else the optimum could be bettered), so both are
            # the same and need no second solve.
            r.shortcut_check = _comparison(sums, sums, len(doubled))
        else:
            r.shortcut_check = compare_with_shortcut(open_weights, first_rows, first_cols, doubled, rest_optimum,
                                                     sums, first_sums)
    return sums[0] + random_sums[0], sums[1] + random_sums[1]


def _random_powers(number: int, randoms: list[int], players: list[str], names: Sequence[str], remaining: list[int],
                   stream: DrawStream) -> list[tuple[int, int]]:
    """Step 1: (player, power) drawn for the players `randoms`, taken out
    of `remaining`."""
    out = []
    if len(remaining) >= len(randoms):
        # kept beside `remaining`, in its order (power-list order: all of them, the names as they are)
        options = list(names) if len(remaining) == len(names) else [names[w] for w in remaining]
        for i in randoms:
            k = options.index(stream.choice(options, what="random-power", round=number, player=players[i]))
            del options[k]
            out.append((i, remaining.pop(k)))
    else:
        # Fewer powers than random players (a duplex game's last round): each
        # power draws its player, so who gets one is random too, not name order.
        waiting = list(randoms)
        for w in list(remaining):
            options = [players[i] for i in waiting]
            i = waiting[options.index(stream.choice(options, what="random-player", round=number,
                                                    power=names[w]))]
            waiting.remove(i)
            remaining.remove(w)
            out.append((i, w))
    return out


def _uncontested(weights: np.ndarray, listed: Sequence[int], N: int, kernel: Any = None) -> list[tuple[int, int]]:
    """first_choice_shortcut's pairs read from the doubled values of the
    open players (rows) on the powers left (columns), as (row, column) in
    row order: a player's first remaining group is the powers of the
    highest value left, if that value is a listed power's (a bracket's
    powers share one value, a later group's is lower, and unlisted powers
    are worth less than any listed one: N - listed - 1). With `kernel`
    (judge/methods/preference/solver/solver_kernel.py), its compiled
    `uncontested`: the same pairs (tests)."""
    import numpy as np

    floor = N - 1 - np.array(listed, dtype=np.int64)
    if kernel is not None:
        rows, cols = kernel.uncontested(weights, floor)
        return list(zip(rows.tolist(), cols.tolist()))
    top = weights.max(axis=1)
    first = weights == top[:, None]
    first &= (top > floor)[:, None]
    single = first.sum(axis=1) == 1
    if not single.any():
        return []
    col = first.argmax(axis=1)
    alone = first.sum(axis=0)[col] == 1
    return [(k, int(col[k])) for k in np.flatnonzero(single & alone).tolist()]


def first_choice_shortcut(players: Sequence[str], remaining: Sequence[str],
                          lists: Mapping[str, Preference]) -> dict[str, str]:
    """The seed's step: each player's first remaining group; a single power
    that is in nobody else's first remaining group goes to that player.

    Only what a player listed is a choice: a player whose list is empty or
    used up has no first choice, so takes nothing here and contests nothing
    (not minding which power one gets is no claim on any of them)."""
    left = set(remaining)
    first: dict[str, list[str]] = {}
    claims: dict[str, int] = {}  # how many first groups hold each power
    for pl in players:
        group: list[str] = []
        for g in lists[pl].groups:
            group = [w for w in g if w in left]
            if group:
                break
        first[pl] = group
        for w in group:
            claims[w] = claims.get(w, 0) + 1
    return {pl: group[0] for pl, group in first.items() if len(group) == 1 and claims[group[0]] == 1}
