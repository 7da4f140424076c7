"""One minimum-cost assignment of the solver's square cost table, in exact
integers: from the compiled kernel (judge/methods/preference/solver/
solver_kernel.py) where the process may load it (judge/methods/preference/
solver/compiled.py), else from the Hungarian method in Python (small
tables, or any table in a process without scipy), else from scipy's
linear_sum_assignment. Which optimal assignment comes back does not matter:
the solver counts and draws among all of them."""

from __future__ import annotations

import sys

import numpy as np

from judge.methods.preference.solver import compiled


# Up to this many rows, one optimal assignment comes from _hungarian below
# instead of scipy: importing scipy.optimize costs a process ~0.33 s, more
# than 60% of a `judge resolve` of a 7-player game (bench/bench_startup.py),
# while the O(n^3) method on a 7x7 table takes some 0.1 ms in Python.
SMALL_LSA = 10
# Up to this many rows too, in a process that has not imported scipy yet
# and has no compiled kernel (a command that resolves one game before
# `judge compile`): 1.5 ms at 36 rows and 12 ms at 50 in Python, against
# scipy's import. A process that solves many tables has the kernel, or
# pays scipy's import once.
HUNGARIAN_UP_TO = 64


def _lsa(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One minimum-cost assignment of the square table c: (rows, cols), as
    scipy's linear_sum_assignment gives it. Up to SMALL_LSA rows from
    _hungarian, from the compiled kernel where it is loaded (_kernel), up to
    HUNGARIAN_UP_TO rows from _hungarian again in a process without scipy,
    else from scipy, imported on first use. Which optimal assignment comes back
    does not matter: the solver counts and draws among all of them in a
    canonical order (tests check that they give the same results)."""
    n = c.shape[0]
    if n <= SMALL_LSA and n == c.shape[1]:
        return _small_lsa(c)
    kernel = _kernel(n)
    if kernel is not None and n == c.shape[1]:
        return np.arange(n), kernel.assign(np.ascontiguousarray(c, dtype=np.int64))[0]
    if n <= HUNGARIAN_UP_TO and n == c.shape[1] and "scipy.optimize" not in sys.modules:
        return _small_lsa(c)
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(c)


def _small_lsa(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cols = _hungarian(c.tolist())
    return np.arange(len(cols)), np.asarray(cols, dtype=np.intp)


def _hungarian(c: list[list[int]]) -> list[int]:
    """The Hungarian method with potentials (Kuhn, Munkres; the O(n^3)
    shortest augmenting path form), in exact integers: cols[i] is row i's
    column in one minimum-cost assignment of the square table c."""
    n = len(c)
    INF = float("inf")
    u, v = [0] * (n + 1), [0] * (n + 1)
    match = [0] * (n + 1)  # match[j]: the row (1-based) holding column j; column 0 is the root
    way = [0] * (n + 1)
    for i in range(1, n + 1):
        match[0], j0 = i, 0
        minv, used = [INF] * (n + 1), [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], INF, 0
            row = c[i0 - 1]
            for j in range(1, n + 1):
                if not used[j]:
                    cur = row[j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:  # augment along the path back to the root
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    cols = [0] * n
    for j in range(1, n + 1):
        cols[match[j] - 1] = j - 1
    return cols


_KERNEL: list = []
# Rows of a table from which the compiled kernel
# (judge/methods/preference/solver/solver_kernel.py) is worth loading. numba
# costs a process ~0.3 s (import and cache load) and saves some 0.5 ms a
# solve at 36 powers: a 7-player game never loads it; a big variant's first
# solve loads it where judge/methods/preference/solver/compiled.py allows
# (a daemon whose cache is built; never a compile in a `judge` command, and
# never in one that resolves one game and exits), and every later solve of
# the process uses it. Both paths give the same result
# (tests/test_exact_assignment.py, tests/test_preference_replay.py): only the
# time differs.
COMPILED_FROM = 12


def _kernel(n: int):
    """The compiled kernel module for a table of n rows, or None (the Python
    path): loaded once, from n >= COMPILED_FROM, when compiled.allowed()."""
    if _KERNEL:
        return _KERNEL[0]
    if n < COMPILED_FROM or not compiled.allowed("solver"):
        return None
    try:
        from judge.methods.preference.solver import solver_kernel
    except ImportError:  # pragma: no cover - numba is a dependency; keep working without it
        solver_kernel = None
    _KERNEL.append(solver_kernel)
    return solver_kernel
