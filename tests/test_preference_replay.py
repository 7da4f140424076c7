"""Every record of the preference method replays: the whole method's outcome
(assignment, values, rounds, blocks, the shortcut's comparison and every
draw) is pinned, by a digest, over a fixed seeded set of games, and the
solver's two paths (compiled kernels, and the Python code a `judge` command
runs until its kernels are cached: judge/methods/preference/solver/compiled.py) give the same
outcomes.

The games are built as Preference objects (not from text, so that this
digest depends on the method only): realistic lists at 7-50 powers in the
three modes, with and without SET PREFERENCE SHORTCUT, duplex games, and
the adversarial shapes of tests/adversarial_cases.py at 5-24 powers, some
of them with a block too big to count (drawn by the sampler).
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from judge.methods.preference.solver import assignment, linear_assignment, sampler
from judge.methods.preference import engine as pref
from judge.rng import DrawStream
from tests.adversarial_cases import SHAPES, mutate, power_names
from judge.variants import make_power_list

# How REPLAY_DIGEST was made: `replay_digest()` run on the method of commit
# 8e2128a (before issue 29's solver: scipy's assignment and Bellman-Ford's
# potentials, the engine's rounds as they were). A change of this digest
# means that a game resolves differently: a record stored earlier would
# not replay. Never update it to make the test pass.
REPLAY_DIGEST = "4df2c407bfc2be8dfa0f77c969e572a89faafc68028236800bda17a7b6537d92"


def _realistic(rnd: random.Random, names: list[str], popularity: list[float], star: bool) -> pref.Preference:
    """A list as bench/bench_preference.py makes them: a common popularity
    plus noise, a bracket, a partial list; some empty, some `*`."""
    u = rnd.random()
    if star and u < 0.06:
        return pref.Preference(random=True)
    if u < 0.1:
        return pref.Preference()
    n = len(names)
    order = sorted(range(n), key=lambda j: popularity[j] + rnd.gauss(0.0, 0.9))
    groups = [(names[j],) for j in order]
    u = rnd.random()
    if u < 0.3:
        size = min(n, rnd.randint(2, 4))
        start = rnd.randint(0, n - size)
        groups[start:start + size] = [tuple(names[j] for j in order[start:start + size])]
    elif u < 0.6:
        groups = groups[:rnd.randint(1, n - 1)]
    return pref.Preference(tuple(groups))


def _genome_lists(genome, names: list[str]) -> dict[str, pref.Preference]:
    return {f"p{i:02d}": pref.Preference(tuple(tuple(names[x] for x in g) for g in groups))
            for i, groups in enumerate(genome)}


def replay_games() -> list[tuple[str, list[str], pref.Params, dict[str, pref.Preference]]]:
    """(name, powers, params, lists) of every game of the digest."""
    games = []
    for n in (7, 10, 17, 36, 50):
        names = power_names(n) if n <= 8 else [f"Power{k:02d}" for k in range(n)]
        rnd = random.Random(f"whole/{n}")
        for k in range(8 if n < 50 else 4):
            mode = ("list", "both", "random")[k % 3] if k < 6 else "both"
            shortcut = k % 2 == 1
            players = None if k < 6 else max(1, n // 3 + k - 6)
            popularity = [rnd.gauss(0.0, 1.0) for _ in range(n)]
            lists = {f"player{i:02d}": _realistic(rnd, names, popularity, mode != "list")
                     for i in range(players or n)}
            games.append((f"realistic/{n}/{k}", names, pref.Params(mode, shortcut, players), lists))
    for n in (5, 8, 12, 17, 24):
        names = power_names(n)
        for shape, make in SHAPES.items():
            genome = make(n, random.Random(f"whole/{shape}/{n}"))
            rnd = random.Random(f"whole/{shape}/{n}/mutated")
            for _ in range(2):
                genome = mutate(genome, n, rnd)
            for shortcut in (False, True):
                games.append((f"{shape}/{n}/{shortcut}", names, pref.Params("list", shortcut),
                              _genome_lists(genome, names)))
    return games


def outcome_record(out: pref.Outcome) -> dict:
    return {"assignment": out.assignment, "values": out.values, "total": out.total, "stddev": out.stddev,
            "tied": str(out.tied), "exact": out.exact, "bounds": [str(x) for x in out.tied_bounds],
            "unassigned": out.unassigned, "rounds": [r.as_dict() for r in out.rounds], "draws": out.draws}


def resolve_all(games=None) -> list[str]:
    """One JSON line per game and seed."""
    lines = []
    for name, names, params, lists in games or replay_games():
        powers = make_power_list(names)
        for s in range(2):
            try:
                rec = outcome_record(pref.resolve(powers, params, lists, DrawStream(f"{name}/{s}".encode())))
            except assignment.TooHard as err:  # pragma: no cover - none expected at these sizes
                rec = {"refused": str(err)}
            lines.append(json.dumps([name, s, rec], sort_keys=True, default=str))
    return lines


def replay_digest() -> str:
    h = hashlib.sha256()
    for line in resolve_all():
        h.update(line.encode() + b"\n")
    return h.hexdigest()


def test_whole_method_records_replay():
    assert replay_digest() == REPLAY_DIGEST


@pytest.fixture
def python_path(monkeypatch):
    """The solver without its compiled kernels (a `judge` command whose
    cache is not built yet)."""
    monkeypatch.setattr(linear_assignment, "_KERNEL", [None])
    monkeypatch.setattr(sampler, "_COMPILED", [(sampler._frontier, sampler._paths, sampler._node_bounds,
                                                sampler._trials)])


def test_the_python_path_resolves_every_game_alike(python_path):
    games = [g for g in replay_games() if len(g[3]) <= 17]  # the Python sampler is slow past that
    compiled_lines = _compiled(games)
    assert resolve_all(games) == compiled_lines


def _compiled(games) -> list[str]:
    from judge.methods.preference.solver import solver_kernel

    saved = (list(linear_assignment._KERNEL), list(sampler._COMPILED))
    linear_assignment._KERNEL[:] = [solver_kernel]
    sampler._COMPILED[:] = [sampler.compiled_runner()]
    try:
        return resolve_all(games)
    finally:
        linear_assignment._KERNEL[:], sampler._COMPILED[:] = saved


def test_uncontested_first_choices_read_from_values_are_the_seeds_step():
    """The method reads the uncontested first choices from the value table
    (engine._uncontested, numpy and compiled): the same pairs as the seed's
    step written on the lists (first_choice_shortcut), with any powers gone
    (duplex rounds, random powers) and any players left out."""
    from judge.methods.preference.solver import solver_kernel

    checked = 0
    for name, names, lists, players, powers, table in _pinned_subtables():
        expected = pref.first_choice_shortcut(players, powers, lists)
        listed = [lists[pl].listed for pl in players]
        for kernel in (None, solver_kernel):
            got = pref._uncontested(table, listed, len(make_power_list(names)), kernel)
            assert {players[k]: powers[j] for k, j in got} == expected, (name, kernel)
            assert [k for k, _ in got] == sorted(k for k, _ in got)
        checked += bool(expected)
    assert checked > 100


def _pinned_subtables():
    """Each pinned game's value table with players and powers left out (as
    random powers and duplex rounds leave them), four a game, seeded by its
    name: (game, its powers, its lists, the players and powers kept, their
    table)."""
    import numpy as np

    for name, names, params, lists in replay_games():
        players = pref.player_order(list(lists))
        weights = np.array([pref._value_row(lists[pl], {w: k for k, w in enumerate(names)}, len(names))
                            for pl in players], dtype=np.int64)
        rnd = random.Random(name)
        for _ in range(4):
            rows = sorted(rnd.sample(range(len(players)), rnd.randint(1, len(players))))
            cols = sorted(rnd.sample(range(len(names)), rnd.randint(1, len(names))))
            yield (name, names, lists, [players[i] for i in rows], [names[j] for j in cols],
                   np.ascontiguousarray(weights[np.ix_(rows, cols)]))


def test_a_rounds_compiled_call_gives_what_its_steps_give():
    """solver_kernel.preference_round (a default round's one compiled call)
    gives the uncontested first choices, the analysis with them as the
    bonus table, and the shortcut comparison's optimum (found from the
    round's own costs, potentials and assignment) that the calls one by
    one give: engine._uncontested, tight_graph._analyse, assignment.optimum
    without those rows and columns. On the pinned games' tables with
    players and powers left out (random powers, duplex rounds: tables not
    square), and on random tables."""
    import numpy as np

    from judge.methods.preference.solver import solver_kernel, tight_graph

    saved = linear_assignment._KERNEL[:]
    linear_assignment._KERNEL[:] = [solver_kernel]
    try:
        tables = [(table, [lists[pl].listed for pl in players], len(names))
                  for _, names, lists, players, _, table in _pinned_subtables()]
        rnd = random.Random(29)
        for _ in range(300):
            p, q = rnd.randint(1, 14), rnd.randint(1, 14)
            top = rnd.choice([2, 5, 30])
            tables.append((np.array([[rnd.randint(0, top) for _ in range(q)] for _ in range(p)], dtype=np.int64),
                           [rnd.randint(0, q) for _ in range(p)], q))
        from tests.realistic_cases import realistic_matrix

        for n in (12, 17, 36, 50):  # realistic lists, some players and powers left out
            for _ in range(150):
                w = realistic_matrix(rnd, n)
                rows = sorted(rnd.sample(range(n), n - rnd.choice([0, 0, 1, 3])))
                cols = sorted(rnd.sample(range(n), n - rnd.choice([0, 0, 1, 3])))
                tables.append((np.ascontiguousarray(w[np.ix_(rows, cols)]), [n] * len(rows), n))
        compared = 0
        for w, listed, N in tables:
            out = solver_kernel.preference_round(w, N - 1 - np.array(listed, dtype=np.int64))
            unc = pref._uncontested(w, listed, N, solver_kernel)
            assert list(zip(out[0].tolist(), out[1].tolist())) == unc
            bonus = None
            if unc:
                bonus = np.zeros(w.shape, dtype=np.int64)
                bonus[tuple(zip(*unc))] = 1
            got, want = tight_graph._kernel_analysis(*w.shape, *out[2:11]), tight_graph._analyse(w, bonus)
            assert (got.sigma, got.total, got.sum_squares, got.bonus) == \
                (want.sigma, want.total, want.sum_squares, want.bonus)
            assert [(b.rows, b.cols, b.allowed) for b in got.blocks] == \
                [(b.rows, b.cols, b.allowed) for b in want.blocks]
            assert bool(out[11]) == (want.bonus < len(unc))
            if out[11]:
                keep_rows = np.ones(w.shape[0], dtype=bool)
                keep_rows[[k for k, _ in unc]] = False
                keep_cols = np.ones(w.shape[1], dtype=bool)
                keep_cols[[j for _, j in unc]] = False
                assert (out[12], int(out[13]), int(out[14])) == (0, *assignment.optimum(w, keep_rows, keep_cols))
                compared += 1
        assert compared > 100
    finally:
        linear_assignment._KERNEL[:] = saved
