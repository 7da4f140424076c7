"""judge.methods.preference.solver: best total, then lowest spread, then a
uniform draw among ALL co-optimal assignments (docstring of the module).

Checked against brute force over all injective assignments, exhaustively for
the unranking, statistically for uniformity (fixed seeds: deterministic), and
for replay from nothing but the seed and the documented multi-word rule.
"""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys
from collections import Counter
from dataclasses import FrozenInstanceError
from functools import cache

import numpy as np
import pytest
from scipy.stats import chisquare

from judge.methods.preference.solver import assignment, costs, counting, line_dp, line_dp_numpy, linear_assignment
from judge.methods.preference.solver import tight_graph
from judge.methods.preference.solver.assignment import Block, Solution, optimum, solve
from judge.rng import DrawStream, word
from tests.realistic_cases import realistic_matrix

SEED = bytes.fromhex("00112233445566778899aabbccddeeff")


def seed(k: int) -> bytes:
    return b"exact-assignment" + k.to_bytes(4, "big")


# --------------------------------------------------------------------------
# Brute force
# --------------------------------------------------------------------------


@cache
def _perms(a: int, b: int) -> np.ndarray:
    """All injective maps of range(b) items chosen for a slots: shape (P, b)."""
    return np.array(list(itertools.permutations(range(a), b)), dtype=np.intp).reshape(-1, b)


def brute(w) -> tuple[int, int, set[tuple]]:
    """(best total, best sum of squares, set of co-optimal assignments as
    tuples: power per player or None)."""
    w = np.asarray(w, dtype=np.int64)
    p, q = w.shape
    if p <= q:
        perms = _perms(q, p)  # player i -> perms[:, i]
        vals = w[np.arange(p)[None, :], perms]
    else:
        perms = _perms(p, q)  # power j -> player perms[:, j]
        vals = w[perms, np.arange(q)[None, :]]
    tot = vals.sum(axis=1)
    sq = (vals * vals).sum(axis=1)
    best = tot.max()
    m = tot == best
    best_sq = sq[m].min()
    sel = np.flatnonzero(m & (sq == best_sq))
    out = set()
    for k in sel.tolist():
        if p <= q:
            out.add(tuple(perms[k].tolist()))
        else:
            a: list[int | None] = [None] * p
            for j, i in enumerate(perms[k].tolist()):
                a[i] = j
            out.add(tuple(a))
    return int(best), int(best_sq), out


def value(w, assignment) -> tuple[int, int]:
    vals = [int(w[i][c]) for i, c in enumerate(assignment) if c is not None]
    return sum(vals), sum(v * v for v in vals)


def is_assignment(assignment, p: int, q: int) -> bool:
    used = [c for c in assignment if c is not None]
    return (
        len(assignment) == p
        and len(used) == len(set(used)) == min(p, q)
        and all(0 <= c < q for c in used)
    )


def random_matrix(rnd: random.Random, p: int, q: int) -> np.ndarray:
    kind = rnd.random()
    if kind < 0.08:
        return np.full((p, q), rnd.randint(0, 4), dtype=np.int64)
    if kind < 0.2:  # shuffled block structure: several independent groups
        w = np.zeros((p, q), dtype=np.int64)
        rows, cols = list(range(p)), list(range(q))
        rnd.shuffle(rows)
        rnd.shuffle(cols)
        while rows and cols:
            a, b = rnd.randint(1, 3), rnd.randint(1, 3)
            level = rnd.randint(1, 6)
            for i in rows[:a]:
                for j in cols[:b]:
                    w[i, j] = level - (rnd.random() < 0.2)
            rows, cols = rows[a:], cols[b:]
        return w
    if kind < 0.35:
        hi = rnd.choice([1, 2])
    elif kind < 0.75:
        hi = rnd.choice([3, 4, 5])
    else:
        hi = rnd.choice([8, 14])
    return np.array([[rnd.randint(0, hi) for _ in range(q)] for _ in range(p)], dtype=np.int64)


def all_unranked(w) -> list[tuple]:
    """Every assignment reachable by unranking, in the product of the block
    ranks (block 0 slowest)."""
    base = list(solve(w).assignment)
    per_block = assignment._all_block_assignments(w)
    out = []
    for combo in itertools.product(*per_block):
        a = list(base)
        for pairs in combo:
            for r, c in pairs.items():
                a[r] = c
        out.append(tuple(a))
    return out


def shapes(rnd: random.Random, count: int, top: int = 8):
    for _ in range(count):
        p = rnd.randint(1, top)
        q = rnd.randint(1, top)
        if rnd.random() < 0.4:
            q = p
        yield p, q


# --------------------------------------------------------------------------
# Against brute force
# --------------------------------------------------------------------------


def test_against_brute_force_thousands():
    rnd = random.Random(20240501)
    n_checked = 0
    for case, (p, q) in enumerate(shapes(rnd, 2500)):
        if p * q > 42 and rnd.random() < 0.6:  # keep the 8x8 share moderate
            p, q = min(p, 6), min(q, 6)
        w = random_matrix(rnd, p, q)
        best, best_sq, co = brute(w)
        assert optimum(w) == (best, best_sq)
        stream = DrawStream(seed(case))
        sol = solve(w, stream)
        assert is_assignment(sol.assignment, p, q)
        assert (sol.total, sol.sum_squares) == (best, best_sq)
        assert value(w, sol.assignment) == (best, best_sq)
        assert sol.assignment in co
        assert sol.exact
        assert sol.tied == len(co), (w.tolist(), sol)
        assert sol.tied == math.prod(b.count for b in sol.blocks)
        # one draw per block with count > 1, recorded as documented
        assert len(stream.draws) == len(sol.blocks)
        for k, (blk, d) in enumerate(zip(sol.blocks, stream.draws)):
            assert blk.count > 1 and blk.exact and blk.index == d.index == d.chosen
            assert 0 <= d.index < blk.count
            assert d.options == [] and d.what == "co-optimal"
            assert d.context["block"] == k and d.context["count"] == blk.count
            assert d.context["rows"] == list(blk.rows) and d.context["cols"] == list(blk.cols)
        # without a stream: deterministic, co-optimal, no draw
        plain = solve(w)
        assert plain.assignment in co and plain.tied == sol.tied
        assert all(b.index is None for b in plain.blocks)
        n_checked += 1
    assert n_checked == 2500


def test_blocks_are_disjoint_and_sorted():
    rnd = random.Random(7)
    for p, q in shapes(rnd, 300, 8):
        w = random_matrix(rnd, p, q)
        sol = solve(w, DrawStream(SEED))
        rows = [r for b in sol.blocks for r in b.rows]
        cols = [c for b in sol.blocks for c in b.cols]
        assert len(rows) == len(set(rows)) and len(cols) == len(set(cols))
        keys = [b.rows[0] for b in sol.blocks]
        assert keys == sorted(keys)
        for b in sol.blocks:
            assert list(b.rows) == sorted(b.rows) and list(b.cols) == sorted(b.cols)
            assert b.order in ("players", "powers")


def test_all_equal_and_special_shapes():
    for p, q in [(1, 1), (1, 5), (5, 1), (3, 5), (5, 3), (6, 6), (4, 7), (7, 4), (8, 8)]:
        for v in (0, 1, 7):
            w = np.full((p, q), v, dtype=np.int64)
            sol = solve(w, DrawStream(SEED))
            expected = math.perm(max(p, q), min(p, q))
            assert sol.tied == expected
            assert sol.total == v * min(p, q)
    assert solve([[3, 3, 3]]).tied == 3
    assert solve([[3], [3], [3]]).tied == 3
    empty = solve([])
    assert empty.assignment == () and empty.tied == 1
    no_powers = solve([[], []])
    assert no_powers.assignment == (None, None) and no_powers.tied == 1
    assert optimum([]) == (0, 0)


def test_padding_does_not_inflate_counts():
    # 3 players, 5 equal powers: 5*4*3 distinct sets of pairs (not 5! = 120)
    assert solve(np.ones((3, 5), dtype=int)).tied == 60
    assert solve(np.ones((5, 3), dtype=int)).tied == 60
    # one player only wants power 0; the two others are indifferent among 1..3
    w = [[4, 0, 0, 0], [0, 2, 2, 2], [0, 2, 2, 2]]
    _, _, co = brute(w)
    assert solve(w).tied == len(co) == 6


def test_lowest_spread_breaks_total_ties():
    # totals: (0->0, 1->1) = 4 + 0 = 4 and (0->1, 1->0) = 2 + 2 = 4; the second
    # has the lower sum of squares.
    w = [[4, 2], [2, 0]]
    sol = solve(w, DrawStream(SEED))
    assert sol.assignment == (1, 0) and sol.total == 4 and sol.sum_squares == 8 and sol.tied == 1


def test_accepts_lists_and_arrays_and_rejects_bad_input():
    w = [[1, 2], [2, 1]]
    assert solve(w).assignment == solve(np.array(w)).assignment == (1, 0)
    assert solve(np.array(w, dtype=float)).assignment == (1, 0)
    with pytest.raises(ValueError):
        solve([[1, -1], [0, 0]])
    with pytest.raises(ValueError):
        solve([[1.5, 0], [0, 0]])
    with pytest.raises(ValueError):
        solve([1, 2, 3])
    with pytest.raises(ValueError):
        solve([[10**12, 0], [0, 0]])  # the float64 bound would not hold


def test_every_co_optimal_assignment_is_reachable():
    rnd = random.Random(99)
    done = 0
    while done < 40:
        p, q = rnd.randint(1, 5), rnd.randint(1, 5)
        w = random_matrix(rnd, p, q)
        _, _, co = brute(w)
        if not 2 <= len(co) <= 24:
            continue
        seen = set()
        for k in range(40 * len(co)):
            sol = solve(w, DrawStream(seed(k)))
            assert sol.assignment in co
            seen.add(sol.assignment)
            if seen == co:
                break
        assert seen == co, (w.tolist(), len(seen), len(co))
        done += 1


def test_unranking_is_a_bijection():
    rnd = random.Random(4242)
    checked = 0
    for p, q in shapes(rnd, 600, 7):
        w = random_matrix(rnd, p, q)
        sol = solve(w)
        if sol.tied > 200:
            continue
        _, _, co = brute(w)
        listed = all_unranked(w)
        assert len(listed) == sol.tied == len(co)
        assert len(set(listed)) == len(listed)
        assert set(listed) == co
        checked += 1
    assert checked > 400


def test_canonical_order_players():
    # one block, order "players": sorted by the power of player 0, then player 1, ...
    w = [[2, 2, 0], [2, 2, 2], [0, 2, 2]]
    (block_list,) = assignment._all_block_assignments(w)
    assert solve(w).blocks[0].order == "players"
    got = [tuple(d[r] for r in range(3)) for d in block_list]
    assert got == sorted(got) == [(0, 1, 2), (0, 2, 1), (1, 0, 2)]


def test_canonical_order_with_nothing_last():
    # 3 players, 2 equal powers; listed by power (order "powers"): the
    # player of power 0, then the player of power 1.
    w = np.ones((3, 2), dtype=int)
    sol = solve(w)
    (block_list,) = assignment._all_block_assignments(w)
    order = sol.blocks[0].order
    if order == "powers":
        keys = []
        for d in block_list:
            inv = {c: r for r, c in d.items() if c is not None}
            keys.append((inv[0], inv[1]))
    else:
        keys = [tuple(3 if d[r] is None else d[r] for r in range(3)) for d in block_list]
    assert keys == sorted(keys) and len(set(keys)) == 6


def test_order_matches_listing_for_random_blocks():
    """The unranked listing is sorted in the documented canonical order."""
    rnd = random.Random(31337)
    for p, q in shapes(rnd, 300, 7):
        w = random_matrix(rnd, p, q)
        an_blocks = assignment._all_block_assignments(w)
        sol = solve(w)
        for blk, listing in zip(sol.blocks, an_blocks):
            if blk.order == "players":
                keys = [tuple(q if d[r] is None else d[r] for r in blk.rows) for d in listing]
            else:
                keys = []
                for d in listing:
                    inv = {c: r for r, c in d.items() if c is not None}
                    keys.append(tuple(inv.get(c, p) for c in blk.cols))
            assert keys == sorted(keys) and len(set(keys)) == len(keys)


# --------------------------------------------------------------------------
# Uniformity (fixed seeds, so deterministic)
# --------------------------------------------------------------------------


def _chi_square(w, draws_per_outcome: int, first_seed: int = 0) -> tuple[float, int]:
    _, _, co = brute(w)
    counts = Counter()
    total = draws_per_outcome * len(co)
    for k in range(total):
        sol = solve(w, DrawStream(seed(first_seed + k)))
        counts[sol.assignment] += 1
    assert set(counts) == co
    observed = [counts[a] for a in sorted(co, key=lambda t: tuple(-1 if x is None else x for x in t))]
    return float(chisquare(observed).pvalue), len(co)


def test_uniform_on_all_equal_6x6():
    pvalue, n = _chi_square(np.full((6, 6), 3), 12)
    assert n == 720
    assert pvalue > 0.001


def test_uniform_on_block_structure():
    # two blocks: a 3-player "staircase" (3 assignments) and a 3x3 all-equal (6)
    w = np.zeros((6, 6), dtype=int)
    w[:3, :3] = [[2, 2, 0], [2, 2, 2], [0, 2, 2]]
    w[3:, 3:] = 5
    sol = solve(w, DrawStream(SEED))
    assert sol.tied == 18 and len(sol.blocks) == 2
    pvalue, n = _chi_square(w, 150)
    assert n == 18 and pvalue > 0.001


def test_uniform_with_padding_both_ways():
    for w in (np.ones((3, 5), dtype=int), np.ones((5, 3), dtype=int),
              np.array([[4, 4, 4, 0], [4, 4, 0, 4], [2, 4, 4, 4]])):
        pvalue, n = _chi_square(w, 60, first_seed=10_000)
        assert pvalue > 0.001, (w.tolist(), pvalue, n)


def test_uniform_on_uneven_structure():
    # rows with different tight sets (type multiplicities differ)
    w = [[3, 3, 3, 0, 0], [3, 3, 0, 0, 0], [0, 3, 3, 3, 3], [0, 0, 3, 3, 3], [3, 0, 0, 3, 3]]
    pvalue, n = _chi_square(w, 80, first_seed=50_000)
    assert n > 5 and pvalue > 0.001


# --------------------------------------------------------------------------
# Replay from the seed alone
# --------------------------------------------------------------------------


def replay_big(seed_: bytes, start: int, n: int) -> tuple[int, int, int, int]:
    """The documented multi-word rule, from judge.rng.word only:
    (value, counter of the accepted group, rejected groups, next counter)."""
    k = max(1, -(-(n - 1).bit_length() // 64))
    span = 1 << (64 * k)
    limit = span - span % n
    counter = start
    rejected = 0
    while True:
        w = 0
        for j in range(k):
            w = (w << 64) | word(seed_, counter + j)
        if w < limit:
            return w % n, counter, rejected, counter + k
        rejected += 1
        counter += k


def test_counted_blocks_and_solutions_built_in_one_step_are_the_dataclasses():
    """Block._counted and Solution._of (solve's way, without the frozen
    dataclasses' __init__) give the objects the dataclasses give: equal,
    the same repr and hash, and as frozen."""
    block = Block._counted((1, 4), (0, 2), 2, 1, "players")
    assert block == Block((1, 4), (0, 2), 2, 1, True, "players")
    assert repr(block) == repr(Block((1, 4), (0, 2), 2, 1, True, "players"))
    assert hash(block) == hash(Block((1, 4), (0, 2), 2, 1, True, "players"))
    assert (block.low, block.high) == (2, 2)
    solution = Solution._of((0, None, 1), 7, 25, 2, True, (block,), 1)
    assert solution == Solution((0, None, 1), 7, 25, 2, True, (block,), 1)
    assert repr(solution) == repr(Solution((0, None, 1), 7, 25, 2, True, (block,), 1))
    for frozen in (block, solution):
        with pytest.raises(FrozenInstanceError):
            frozen.tied = 3


def test_below_big_equals_below_for_one_word():
    for n in (2, 3, 7, 720, 2**32 + 1, 2**63 + 5, 2**64):
        a, b = DrawStream(SEED), DrawStream(SEED)
        for _ in range(20):
            assert assignment._below_big(a, n) == b.below(n)
        assert a.counter == b.counter


def test_below_big_multiword_replay_with_rejections():
    n = 2**127 + 1  # two words; about half the groups are rejected
    rejected_seen = 0
    for s in range(60):
        sd = seed(s)
        stream = DrawStream(sd)
        start = 0
        for _ in range(3):
            got = assignment._below_big(stream, n)
            value_, counter, rejected, nxt = replay_big(sd, start, n)
            assert got == (value_, counter, rejected)
            assert stream.counter == nxt
            rejected_seen += rejected
            start = nxt
    assert rejected_seen > 20


def test_replay_of_recorded_draws():
    rnd = random.Random(5)
    cases = [np.ones((36, 36), dtype=int), np.ones((21, 30), dtype=int)]
    cases += [random_matrix(rnd, 6, 6) for _ in range(20)]
    for w in cases:
        sd = seed(int(w.sum()))
        stream = DrawStream(sd)
        sol = solve(w, stream)
        start = 0
        for blk, d in zip(sol.blocks, stream.draws):
            value_, counter, rejected, nxt = replay_big(sd, start, blk.count)
            assert (d.index, d.counter, d.rejected) == (value_, counter, rejected)
            start = nxt
        assert stream.counter == start
        # the same seed gives the same result
        again = solve(w, DrawStream(sd))
        assert again == sol
    big = solve(np.ones((36, 36), dtype=int), DrawStream(SEED))
    assert big.blocks[0].count > 2**128  # three words per draw


# --------------------------------------------------------------------------
# Size and speed
# --------------------------------------------------------------------------


def test_36_all_equal_counts_36_factorial():
    # (how fast: bench/bench_exact_assignment.py; tests assert no times)
    w = np.full((36, 36), 70, dtype=np.int64)
    sol = solve(w, DrawStream(SEED))
    assert sol.tied == math.factorial(36) and sol.exact
    assert sorted(sol.assignment) == list(range(36))
    # rectangular: 36 players, 30 powers: 36! / 6! distinct results
    sol = solve(np.ones((36, 30), dtype=int), DrawStream(SEED))
    assert sol.tied == math.factorial(36) // math.factorial(6)


def test_realistic_36_is_counted_exactly():
    rnd = random.Random(36)
    for k in range(60):
        w = realistic_matrix(rnd, 36)
        sol = solve(w, DrawStream(seed(k)))
        assert sol.exact
        assert (sol.total, sol.sum_squares) == optimum(w)


def test_realistic_small_against_brute_force():
    rnd = random.Random(77)
    for k in range(150):
        n = rnd.randint(2, 8)
        w = realistic_matrix(rnd, n)
        best, sq, co = brute(w)
        sol = solve(w, DrawStream(seed(k)))
        assert (sol.total, sol.sum_squares) == (best, sq)
        assert sol.assignment in co and sol.tied == len(co)


# --------------------------------------------------------------------------
# Blocks too big to count: the exact sampler (count_limit=1 forces it)
# --------------------------------------------------------------------------


def test_sampled_block_is_co_optimal_reproducible_and_bounded():
    w = np.full((6, 6), 2, dtype=int)
    stream = DrawStream(SEED)
    sol = solve(w, stream, count_limit=1)
    assert not sol.exact
    (blk,) = sol.blocks
    assert not blk.exact and blk.index is None and blk.order == "sampled"
    assert blk.low <= 720 <= blk.high and blk.low <= blk.count <= blk.high
    assert (sol.tied_low, sol.tied, sol.tied_high) == (blk.low, blk.count, blk.high)
    assert sorted(sol.assignment) == list(range(6))
    (draw,) = stream.draws
    assert draw.what == "co-optimal" and draw.context["order"] == "sampled" and draw.context["estimated"]
    assert draw.counter == 0 and stream.counter == 2  # two words key the sampler
    again = DrawStream(SEED)
    assert solve(w, again, count_limit=1) == sol
    assert [d.as_dict() for d in again.draws] == [d.as_dict() for d in stream.draws]
    # without a stream: the sampler keyed (0, 0), the same every time
    assert solve(w, count_limit=1).assignment == solve(w, count_limit=1).assignment


def test_sampled_random_against_brute_force():
    rnd = random.Random(2718)
    sampled = 0
    for case, (p, q) in enumerate(shapes(rnd, 400, 7)):
        w = random_matrix(rnd, p, q)
        best, sq, co = brute(w)
        sol = solve(w, DrawStream(seed(case)), count_limit=1)
        assert is_assignment(sol.assignment, p, q)
        assert sol.assignment in co
        assert (sol.total, sol.sum_squares) == (best, sq)
        assert sol.tied_low <= len(co) <= sol.tied_high
        sampled += not sol.exact
    assert sampled > 100


def test_sampled_reaches_everything_uniformly_on_small_case():
    w = [[1, 1, 0], [1, 1, 1], [0, 1, 1]]
    _, _, co = brute(w)
    counts = Counter(solve(w, DrawStream(seed(k)), count_limit=1).assignment for k in range(900))
    assert set(counts) == co
    assert chisquare(list(counts.values())).pvalue > 0.001


def test_a_block_past_the_work_limit_is_refused_clearly():
    w = np.full((6, 6), 2, dtype=int)
    with pytest.raises(assignment.TooHard) as err:
        solve(w, DrawStream(SEED), count_limit=1, work_limit=0)
    assert "SET PRFRAND" in str(err.value) and "6 players" in str(err.value)


def test_dataclasses():
    sol = solve([[1, 1], [1, 1]], DrawStream(SEED))
    assert isinstance(sol, Solution) and isinstance(sol.blocks[0], Block)
    with pytest.raises(FrozenInstanceError):
        sol.total = 3  # type: ignore[misc]


# --------------------------------------------------------------------------
# The two counting engines (plain Python for small state spaces, numpy for
# large ones) agree exactly
# --------------------------------------------------------------------------


def _dp_pairs(w):
    """Both orientations of every block of w, as DP inputs."""
    p, q = np.asarray(w).shape
    for raw in tight_graph._analyse(w).blocks:
        a = raw.allowed
        at = [list(x) for x in zip(*a)]
        col_dummy = [c >= q for c in raw.cols]
        row_dummy = [r >= p for r in raw.rows]
        n_rows = sum(r < p for r in raw.rows)
        n_cols = sum(c < q for c in raw.cols)
        if n_rows and n_cols:
            yield a, n_rows, line_dp._slot_types([tuple(x) for x in at], col_dummy)
            yield at, n_cols, line_dp._slot_types([tuple(x) for x in a], row_dummy)


def test_python_and_numpy_dp_agree():
    rnd = random.Random(1618)
    checked = 0
    for p, q in shapes(rnd, 1500, 9):
        w = random_matrix(rnd, p, q)
        for table, n_real, types in _dp_pairs(w):
            d1 = line_dp._LineDP(table, n_real, types, 10**9)
            d2 = line_dp_numpy._LineDPVec(table, n_real, types, 10**9)
            assert d1.count == d2.count
            ranks = range(d1.count) if d1.count <= 60 else [0, 1, d1.count // 3, d1.count - 1]
            for r in ranks:
                assert d1.unrank(r) == d2.unrank(r)
            checked += 1
    assert checked > 1000
    # big counts: object (Python int) arithmetic in the numpy engine
    for m in (21, 36):
        a = [[True] * m for _ in range(m)]
        types = line_dp._slot_types([tuple(x) for x in a], [False] * m)
        d1 = line_dp._LineDP(a, m, types, 10**6)
        d2 = line_dp_numpy._LineDPVec(a, m, types, 10**6)
        assert d1.count == d2.count == math.factorial(m)
        for r in (0, 1, 10**20 % d1.count, d1.count - 1):
            assert d1.unrank(r) == d2.unrank(r)


def test_numpy_engine_against_brute_force(monkeypatch):
    monkeypatch.setattr(counting, "_VEC_FROM", 0)
    rnd = random.Random(141)
    for case, (p, q) in enumerate(shapes(rnd, 300, 7)):
        w = random_matrix(rnd, p, q)
        _, _, co = brute(w)
        sol = solve(w, DrawStream(seed(case)))
        assert sol.assignment in co and sol.tied == len(co) and sol.exact
        if sol.tied <= 100:
            assert set(all_unranked(w)) == co


def test_pathological_17_counted_and_36_sampled():
    rnd = random.Random(17)
    w = np.array([[rnd.randrange(2) * 2 for _ in range(17)] for _ in range(17)])
    sol = solve(w, DrawStream(SEED))
    assert sol.exact and sol.tied > 10**6
    assert (sol.total, sol.sum_squares) == optimum(w)
    w = np.array([[rnd.randrange(3) * 2 for _ in range(36)] for _ in range(36)])
    stream = DrawStream(SEED)
    sol = solve(w, stream)
    assert not sol.exact and (sol.total, sol.sum_squares) == optimum(w)
    assert sorted(sol.assignment) == list(range(36))
    assert [d.context["order"] for d in stream.draws] == ["sampled"] * len(sol.blocks)
    assert all(b.low <= b.count <= b.high for b in sol.blocks)


def test_result_does_not_depend_on_which_optimum_scipy_returns(monkeypatch):
    """Only the set of co-optimal assignments matters: replace scipy's solver
    by one returning another optimal permutation, same outcome per seed."""
    rnd = random.Random(404)
    real_lsa = linear_assignment._lsa
    for case in range(60):
        p, q = rnd.randint(1, 6), rnd.randint(1, 6)
        w = random_matrix(rnd, p, q)
        reference = [solve(w, DrawStream(seed(k))) for k in range(3)]

        pick_rnd = random.Random(case)

        def other_lsa(c, _rnd=pick_rnd):
            c = np.asarray(c)
            n = c.shape[0]
            perms = np.array(list(itertools.permutations(range(n))))
            costs = c[np.arange(n)[None, :], perms].sum(axis=1)
            best = np.flatnonzero(costs == costs.min())
            pick = perms[_rnd.choice(best.tolist())]
            assert costs.min() == c[real_lsa(c)].sum()
            return np.arange(n), pick

        monkeypatch.setattr(tight_graph, "_lsa", other_lsa)
        for k in range(3):
            assert solve(w, DrawStream(seed(k))) == reference[k]
        monkeypatch.setattr(tight_graph, "_lsa", real_lsa)


def _partition(label) -> list[tuple[int, ...]]:
    """The groups of players a labelling makes (the numbers are arbitrary)."""
    by: dict[int, list[int]] = {}
    for i, x in enumerate(np.asarray(label).tolist()):
        by.setdefault(x, []).append(i)
    return sorted(tuple(g) for g in by.values())


@pytest.fixture
def paths(monkeypatch):
    """Runs a function of the solver once through the compiled kernel
    (judge/methods/preference/solver/solver_kernel.py) and once through the Python path
    (scipy's or the small-table Hungarian's assignment, then
    _tight_components_py): returns both results."""
    from judge.methods.preference.solver import solver_kernel

    def both(f, *args, **kwargs):
        out = []
        for kernel in (solver_kernel, None):
            monkeypatch.setattr(linear_assignment, "_KERNEL", [kernel])
            out.append(f(*args, **kwargs))
        monkeypatch.setattr(linear_assignment, "_KERNEL", [])
        return out

    return both


def _same_analysis(paths, w, bonus=None, what=None) -> bool:
    """Both paths give the same optimum and the same blocks (players,
    powers, the tight pairs inside them); each its own optimal assignment.
    Returns whether there was a block."""
    compiled, python = paths(tight_graph._analyse, w, bonus)
    assert (compiled.total, compiled.sum_squares, compiled.bonus) == (python.total, python.sum_squares,
                                                                        python.bonus), what
    assert compiled.blocks == python.blocks, what
    c, *_ = costs._costs(costs._as_matrix(w), costs._as_bonus(bonus, costs._as_matrix(w)))
    n = c.shape[0]
    assert c[np.arange(n), compiled.sigma].sum() == c[np.arange(n), python.sigma].sum(), what
    assert sorted(compiled.sigma) == list(range(n)), what
    return bool(compiled.blocks)


def test_compiled_and_python_paths_give_the_same_blocks(paths):
    """On the solver's own inputs, with and without the bonus rule, square
    and not, from 1 to 40 players: the same optimum and the same blocks."""
    rnd = np.random.default_rng(77)
    blocks = 0
    for case in range(400):
        p, q = int(rnd.integers(1, 41)), int(rnd.integers(1, 41))
        if case % 3:
            q = p
        levels = int(rnd.integers(1, 6))
        w = rnd.integers(0, levels, size=(p, q)) * int(rnd.integers(1, 20))
        bonus = (rnd.random(size=(p, q)) < 0.2).astype(np.int64) if case % 2 else None
        blocks += _same_analysis(paths, w, bonus, case)
    assert blocks > 200  # most cases have tied blocks: the blocks were really compared
    rnd = random.Random(78)
    for case in range(60):
        w = realistic_matrix(rnd, rnd.choice([7, 17, 36, 50]))
        _same_analysis(paths, w, None, ("realistic", case))


def test_compiled_and_python_paths_agree_on_built_tables(paths):
    """Tables built to be hard rather than realistic: costs from known
    potentials plus non-negative reduced costs, mostly 0 (large blocks,
    many optimal assignments and potentials); a chain that only a long
    alternating path reaches; costs near the 2**53 bound; all equal."""
    rnd = np.random.default_rng(12)
    for case in range(300):
        n = int(rnd.integers(1, 41))
        u = rnd.integers(0, 10**6, size=n)
        v = rnd.integers(0, 10**6, size=n)
        r = rnd.integers(0, 4, size=(n, n)) * (rnd.random((n, n)) < rnd.random())
        r[np.arange(n), rnd.permutation(n)] = 0  # an assignment of reduced cost 0: optimal
        c = u[:, None] + v[None, :] + r
        compiled, python = paths(tight_graph._optimum_moves, np.ascontiguousarray(c, dtype=np.int64))
        assert compiled[1] == python[1] == int(u.sum() + v.sum()), case
        blocks = [g for g in _partition(python[3]) if len(g) > 1]
        assert [g for g in _partition(compiled[3]) if len(g) > 1] == blocks, case
        for g in blocks:  # inside a block the tight moves are those of every optimal assignment
            ci = [int(compiled[0][i]) for i in g]
            pi = [int(python[0][i]) for i in g]
            assert sorted(ci) == sorted(pi), case
    for n in (2, 7, 36, 50):
        # player i + 1 only gains by taking player i's power: one long chain
        c = np.full((n, n), 3 * n, dtype=np.int64)
        c[np.arange(n), np.arange(n)] = 1
        c[np.arange(1, n), np.arange(n - 1)] = 0
        c[0, n - 1] = 2 * n
        compiled, python = paths(tight_graph._optimum_moves, c)
        assert compiled[1] == python[1] and _partition(compiled[3]) == _partition(python[3])
        big = (2**53 - 1) // (n + 1)
        c = np.where(np.eye(n, dtype=bool), 0, big).astype(np.int64)
        compiled, python = paths(tight_graph._optimum_moves, c)
        assert compiled[1] == python[1] == 0
        compiled, python = paths(tight_graph._optimum_moves, np.zeros((n, n), dtype=np.int64))
        assert _partition(compiled[3]) == _partition(python[3]) == [tuple(range(n))]


def test_the_compiled_assignment_is_optimal_with_its_potentials():
    """solver_kernel's assignment costs what scipy's does, and its
    potentials are dual feasible and tight on it (what the tight moves
    rest on), in exact integers up to the 2**53 bound."""
    from scipy.optimize import linear_sum_assignment

    from judge.methods.preference.solver import solver_kernel

    rnd = random.Random(53)
    for _ in range(1500):
        n = rnd.randint(1, 45)
        top = rnd.choice([1, 3, 50, 10**6, 2**53 // 64])
        c = np.array([[rnd.randint(0, top) for _ in range(n)] for _ in range(n)], dtype=np.int64)
        col4row, u, v = solver_kernel._assign(c)
        assert sorted(col4row.tolist()) == list(range(n))
        reduced = c - u[:, None] - v[None, :]
        assert reduced.min() >= 0 and (reduced[np.arange(n), col4row] == 0).all()
        r, k = linear_sum_assignment(c)
        cols, cost = solver_kernel.assign(c)
        assert int(cost) == int(c[r, k].sum()) == int(c[np.arange(n), col4row].sum())
        assert (cols == col4row).all()


def test_the_python_path_refuses_a_non_optimal_assignment():
    """Its Bellman-Ford finds no potentials when the moves of the
    assignment it is given have a negative cycle (a cheaper assignment)."""
    rnd = np.random.default_rng(5)
    worse = 0
    for case in range(200):
        n = int(rnd.integers(2, 37))
        w = rnd.integers(0, int(rnd.integers(2, 8)), size=(n, n)) * 2
        c, *_ = costs._costs(w)
        sigma = rnd.permutation(n)
        rows, cols = linear_assignment._lsa(c)
        optimal = c[:, sigma].diagonal().sum() == c[rows, cols].sum()
        cs = c[:, sigma]
        try:
            tight_graph._tight_components_py(cs - cs.diagonal()[:, None])
            ok = True
        except AssertionError:
            ok = False
        assert ok == optimal, case
        worse += not ok
    assert worse > 150


# --------------------------------------------------------------------------
# Rule 3: a bonus table decides between assignments equal under rules 1 and 2
# --------------------------------------------------------------------------


def brute_bonus(w, bonus) -> tuple[int, int, int, set[tuple]]:
    """(best total, best sum of squares, most bonus cells, the assignments
    with all three) by brute force over the co-optimal set of rules 1-2."""
    best, best_sq, co = brute(w)
    taken = {a: sum(int(bonus[i][c]) for i, c in enumerate(a) if c is not None) for a in co}
    top = max(taken.values())
    return best, best_sq, top, {a for a in co if taken[a] == top}


def random_bonus(rnd: random.Random, p: int, q: int) -> np.ndarray:
    """At most one bonus cell per player and per power, as the preference
    method marks uncontested first choices; sometimes any pattern at all."""
    b = np.zeros((p, q), dtype=np.int64)
    if rnd.random() < 0.3:
        for i in range(p):
            for j in range(q):
                b[i, j] = rnd.random() < 0.3
        return b
    cols = list(range(q))
    rnd.shuffle(cols)
    for i in range(p):
        if cols and rnd.random() < 0.5:
            b[i, cols.pop()] = 1
    return b


def test_bonus_against_brute_force():
    rnd = random.Random(20260311)
    changed = 0
    for case, (p, q) in enumerate(shapes(rnd, 1500, 7)):
        w = random_matrix(rnd, p, q)
        bonus = random_bonus(rnd, p, q)
        best, best_sq, top, co = brute_bonus(w, bonus)
        stream = DrawStream(seed(case))
        sol = solve(w, stream, bonus=bonus)
        assert is_assignment(sol.assignment, p, q)
        assert (sol.total, sol.sum_squares, sol.bonus) == (best, best_sq, top), (w.tolist(), bonus.tolist())
        assert sol.assignment in co
        assert sol.tied == len(co) == math.prod(b.count for b in sol.blocks)
        assert len(stream.draws) == len(sol.blocks)
        changed += len(co) < len(brute(w)[2])
    assert changed > 100  # the bonus often narrows the co-optimal set


def test_bonus_keeps_total_and_spread_first():
    # The bonus cell (player 0, power 1) would cost total: never taken.
    w = [[4, 0], [4, 2]]
    sol = solve(w, bonus=[[0, 1], [0, 0]])
    assert sol.assignment == (0, 1) and sol.total == 6 and sol.bonus == 0
    # Equal totals and spreads: the bonus decides, no draw is left.
    w = [[2, 2], [2, 2]]
    stream = DrawStream(SEED)
    sol = solve(w, stream, bonus=[[0, 1], [0, 0]])
    assert sol.assignment == (1, 0) and sol.tied == 1 and stream.draws == []
    with pytest.raises(ValueError):
        solve(w, bonus=[[0, 2], [0, 0]])
    with pytest.raises(ValueError):
        solve(w, bonus=[[0, 1]])


def test_bonus_draw_is_uniform_among_the_rest():
    # 4 equal players; the bonus fixes player 0 on power 2: 3! = 6 remain.
    w = np.full((4, 4), 3, dtype=np.int64)
    bonus = np.zeros((4, 4), dtype=np.int64)
    bonus[0, 2] = 1
    _, _, _, co = brute_bonus(w, bonus)
    assert len(co) == 6
    counts = Counter(solve(w, DrawStream(seed(k)), bonus=bonus).assignment for k in range(600))
    assert set(counts) == co
    assert chisquare([counts[a] for a in sorted(co)]).pvalue > 0.001


@pytest.mark.parametrize("n,loads", [(7, False), (14, True)])
def test_the_compiled_kernel_is_loaded_for_large_blocks_only(n, loads):
    """numba costs a process ~0.27 s: a 7-player game (all tied: one block of
    7) never loads it, a block of 14 players does (COMPILED_FROM)."""
    code = ("import sys, numpy as np\n"
            "from judge.methods.preference.solver.assignment import solve\n"
            f"sol = solve(np.zeros(({n}, {n}), dtype=np.int64))\n"
            f"assert sol.tied > 1 and len(sol.blocks) == 1 and len(sol.blocks[0].rows) == {n}\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(loads)


def test_the_small_tables_hungarian_finds_what_scipy_finds():
    """Up to SMALL_LSA rows (and HUNGARIAN_UP_TO in a process without
    scipy) one optimal assignment comes from _hungarian: a permutation of
    the same minimum cost as scipy's, in exact integers, on tables with
    ties, zeros and large costs."""
    from scipy.optimize import linear_sum_assignment

    rnd = random.Random(77)
    for case in range(2200):
        small, up_to = linear_assignment.SMALL_LSA, linear_assignment.HUNGARIAN_UP_TO
        n = rnd.randint(1, small) if case < 2000 else rnd.randint(small, up_to)
        top = rnd.choice([1, 3, 50, 10**15])
        c = np.array([[rnd.randint(0, top) for _ in range(n)] for _ in range(n)], dtype=np.int64)
        rows, cols = linear_assignment._small_lsa(c)
        assert sorted(cols.tolist()) == list(range(n))
        r, k = linear_sum_assignment(c)
        assert int(c[rows, cols].sum()) == int(c[r, k].sum())
