"""judge.methods.matching_sampler: one perfect matching drawn exactly
uniformly without counting (docs/preference.md, "Blocks too big to count").

Uniformity against brute force with chi-square over fixed keys (so the test
is deterministic), the compiled trial loop against the Python one bit for
bit, the sampler's words against the Philox4x64-10 definition, and the exact
acceptance step."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from judge.methods import matching_sampler as ms

M64 = (1 << 64) - 1


def philox4x64_10(counter: list[int], key: list[int]) -> list[int]:
    """Philox4x64-10 from its definition (Salmon et al. 2011)."""
    x, k0, k1 = list(counter), key[0], key[1]
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B97F4A7C15) & M64, (k1 + 0xBB67AE8584CAA73B) & M64
        p0, p1 = 0xD2E7470EE14C6C93 * x[0], 0xCA5A826395121157 * x[2]
        x = [(p1 >> 64) ^ x[1] ^ k0, p1 & M64, (p0 >> 64) ^ x[3] ^ k1, p0 & M64]
    return x


def matchings(a) -> set[tuple[int, ...]]:
    n = len(a)
    return {p for p in itertools.permutations(range(n)) if all(a[i][p[i]] for i in range(n))}


def test_philox_known_answer_and_the_sampler_words():
    # Random123's known-answer vector for counter 0, key 0
    assert philox4x64_10([0, 0, 0, 0], [0, 0]) == [
        0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B]
    key = (0x0123456789ABCDEF, 0xFEDCBA9876543210)
    words = ms._Words(key)
    expected = [w >> 2 for c in range(1, 4) for w in philox4x64_10([c, 0, 0, 0], list(key))]
    assert [words.word(k) for k in range(12)] == expected  # word k: block k // 4 + 1


def test_bernoulli_is_exact():
    words = ms._Words((5, 6))
    # p = w / 2**62 exactly: a word equal to it ends p's expansion -> reject
    w0 = words.word(0)
    assert ms._bernoulli(Fraction(w0, 1 << 62), words, 0) == (False, 1)
    assert ms._bernoulli(Fraction(w0 + 1, 1 << 62), words, 0) == (True, 1)
    assert ms._bernoulli(Fraction(1), words, 0)[0] and not ms._bernoulli(Fraction(0), words, 0)[0]
    hits = sum(ms._bernoulli(Fraction(1, 3), words, p)[0] for p in range(0, 30000, 3))
    assert abs(hits - 10000 / 3) < 200


@pytest.mark.parametrize("tail", [0, 12])
def test_uniform_on_derangements_and_a_sparse_cycle(monkeypatch, tail):
    monkeypatch.setattr(ms, "TAIL", tail)
    derange = np.ones((5, 5), dtype=np.uint8)
    np.fill_diagonal(derange, 0)
    cycle = np.array([[1, 1, 0, 0, 1, 0], [1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0],
                      [0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 1, 1], [1, 0, 0, 0, 1, 1]], dtype=np.uint8)
    for a, draws in ((derange, 1760), (cycle, 1440)):
        every = matchings(a.tolist())
        counts = Counter(ms.sample(a, (k, tail), 10**9).match for k in range(draws))
        assert set(counts) == every
        assert chisquare([counts[m] for m in sorted(every)]).pvalue > 0.001


def test_compiled_loop_is_the_python_loop_bit_for_bit(monkeypatch):
    pytest.importorskip("numba")
    from judge.methods.matching_kernel import trials as compiled

    rnd = np.random.default_rng(12)
    for case in range(12):
        n = int(rnd.integers(6, 16))
        a = (rnd.random((n, n)) < rnd.uniform(0.2, 0.8)).astype(np.uint8)
        a[np.arange(n), rnd.permutation(n)] = 1
        out = []
        for run in (ms._trials, compiled):
            monkeypatch.setattr(ms, "_runner", lambda m, run=run: run)
            out.append(ms.sample(a, (case, 99), 10**9))
        assert out[0] == out[1]


def test_estimate_and_bounds_bracket_the_count():
    a = np.ones((7, 7), dtype=np.uint8)
    np.fill_diagonal(a, 0)
    s = ms.sample(a, (1, 2), 10**9)
    assert 1854 <= s.bound  # derangements of 7: per(A) <= U(A)
    assert 1854 / 3 < s.estimate < 1854 * 3
    assert sorted(s.match) == list(range(7)) and all(s.match[i] != i for i in range(7))


def test_work_limit_refuses_and_bad_tables_are_refused():
    a = np.ones((6, 6), dtype=np.uint8)
    with pytest.raises(ms.TooHard):
        ms.sample(a, (1, 1), 0)
    with pytest.raises(ValueError):
        ms.sample(np.zeros((3, 3), dtype=np.uint8), (1, 1), 10**6)
    with pytest.raises(ValueError):
        ms.sample(np.ones((2, 3), dtype=np.uint8), (1, 1), 10**6)


def test_the_bound_is_self_reducible_on_small_tables():
    """The property the proof rests on: expanding along the line the
    sampler picks, the children's U never sum to more than U (up to the
    rounding the margin pays for)."""
    rnd = np.random.default_rng(3)
    for _ in range(300):
        n = int(rnd.integers(2, 8))
        a = (rnd.random((n, n)) < rnd.uniform(0.3, 1.0)).astype(np.uint8)
        u = ms.bound(a)
        if u == 0.0:
            continue
        by_column = (lambda R, C: R <= C)(*_rc(a))
        sums = a.sum(axis=0 if by_column else 1)
        line = int(np.argmin(sums))
        kids = 0.0
        for x in range(n):
            i, j = (x, line) if by_column else (line, x)
            if a[i, j]:
                kids += ms.bound(np.delete(np.delete(a, i, 0), j, 1)) if n > 1 else 1.0
        assert kids <= u * (1 + 1e-12)
        assert len(matchings(a.tolist())) <= u * (1 + 1e-12)


def _rc(a):
    G, _ = ms._tables(a.shape[0])
    R = float(np.prod([G[r] for r in a.sum(axis=1)]))
    C = float(np.prod([G[c] for c in a.sum(axis=0)]))
    return R, C
