"""Realistic preference matrices, shared by tests/test_exact_assignment.py and
bench/bench_exact_assignment.py: powers with a popularity, players' lists
with noise around it, brackets of equal powers, partial and empty lists;
values doubled, 2 * (n - position)."""

from __future__ import annotations

import random

import numpy as np


def realistic_list_positions(rnd: random.Random, popularity: list[float], noise: float) -> list[float]:
    """Position (1 = first, may be half-integral) of every power for one player."""
    n = len(popularity)
    u = rnd.random()
    if u < 0.03:  # empty list: all equal
        return [(n + 1) / 2] * n
    keys = [popularity[j] + rnd.gauss(0.0, noise) for j in range(n)]
    order = sorted(range(n), key=lambda j: keys[j])
    pos = [0.0] * n
    for k, j in enumerate(order):
        pos[j] = float(k + 1)
    u = rnd.random()
    if u < 0.30 and n >= 2:  # a bracket of 2-4 equal positions
        size = min(n, rnd.randint(2, 4))
        start = rnd.randint(0, n - size)
        avg = sum(range(start + 1, start + size + 1)) / size
        for j in order[start:start + size]:
            pos[j] = avg
    elif u < 0.60 and n >= 2:  # partial list
        listed = rnd.randint(1, n - 1)
        avg = sum(range(listed + 1, n + 1)) / (n - listed)
        for j in order[listed:]:
            pos[j] = avg
    return pos


def realistic_matrix(rnd: random.Random, n: int, noise_max: float = 1.5) -> np.ndarray:
    popularity = [rnd.gauss(0.0, 1.0) for _ in range(n)]
    noise = rnd.uniform(0.3, noise_max)
    rows = []
    for _ in range(n):
        pos = realistic_list_positions(rnd, popularity, noise)
        rows.append([round(2 * (n - p)) for p in pos])
    return np.array(rows, dtype=np.int64)
