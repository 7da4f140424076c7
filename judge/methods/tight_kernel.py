"""The solver's hot loop, compiled: dual potentials, tight moves and their
strongly connected components in one pass.

judge/methods/exact_assignment.py has the same computation in numpy and
Python (`_tight_components_py`), judge/methods/tight_csgraph.py with
scipy.sparse.csgraph; all three must agree exactly
(tests/test_exact_assignment.py).
This one is about 10x faster than the numpy version and 20-40x faster than
csgraph on the matrices the solver sees (0.004 ms at 7 powers, 0.012 ms at
36), which keeps the whole method within 10x scipy's linear_sum_assignment
at 36 powers (12x with the numpy version, 15x with csgraph:
docs/preference.md, "Why numba"). numba costs a process about 0.27 s
(import, then loading this kernel from numba's on-disk cache; 1.4 s to
compile when the cache is missing), so the solver imports this module on
its first solve only (`_kernel` in exact_assignment.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def tight_components(d: np.ndarray):  # pragma: no cover - compiled; checked against the Python version
    """d[i, k]: cost change when player i takes the power of player k (from
    one optimal assignment). Returns (ok, tight, label): ok False if the
    potentials did not converge (the assignment was not optimal); tight[i, k]
    where the reduced cost is 0 (the diagonal always); label[i] the strongly
    connected component of player i in the graph of tight moves."""
    n = d.shape[0]
    v = np.empty(n, np.int64)
    for k in range(n):
        m = d[0, k]
        for i in range(1, n):
            if d[i, k] < m:
                m = d[i, k]
        v[k] = m
    ok = False
    for _ in range(n + 1):
        changed = False
        for k in range(n):
            m = v[k]
            for i in range(n):
                x = v[i] + d[i, k]
                if x < m:
                    m = x
            if m < v[k]:
                v[k] = m
                changed = True
        if not changed:
            ok = True
            break
    tight = np.zeros((n, n), np.bool_)
    for i in range(n):
        for k in range(n):
            if v[i] + d[i, k] == v[k]:
                tight[i, k] = True
    # Tarjan's algorithm, iterative.
    index = -np.ones(n, np.int64)
    low = np.zeros(n, np.int64)
    on_stack = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int64)
    sp = 0
    label = -np.ones(n, np.int64)
    counter = 0
    components = 0
    node = np.empty(n, np.int64)
    edge = np.empty(n, np.int64)
    for root in range(n):
        if index[root] >= 0:
            continue
        top = 0
        node[0] = root
        edge[0] = 0
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on_stack[root] = True
        while top >= 0:
            u = node[top]
            e = edge[top]
            advanced = False
            while e < n:
                w = e
                e += 1
                if w == u or not tight[u, w]:
                    continue
                if index[w] < 0:
                    edge[top] = e
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    on_stack[w] = True
                    top += 1
                    node[top] = w
                    edge[top] = 0
                    advanced = True
                    break
                elif on_stack[w]:
                    if index[w] < low[u]:
                        low[u] = index[w]
            if advanced:
                continue
            edge[top] = e
            if low[u] == index[u]:
                while True:
                    sp -= 1
                    w = stack[sp]
                    on_stack[w] = False
                    label[w] = components
                    if w == u:
                        break
                components += 1
            top -= 1
            if top >= 0:
                parent = node[top]
                if low[u] < low[parent]:
                    low[parent] = low[u]
    return ok, tight, label
