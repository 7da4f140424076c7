"""The solver's tight moves and their blocks computed with
scipy.sparse.csgraph: a third implementation, not the one the solver runs.

Issue 12 asked whether csgraph (compiled, already a dependency) could
replace the numba kernel (judge/methods/tight_kernel.py). It computes the
same thing with library algorithms instead of hand-written loops: the
potentials are the shortest distances from a virtual source with a 0-cost
move to every player (scipy's Bellman-Ford), the components are scipy's
strongly connected components. Measured on the matrices the solver sees
(bench/bench_exact_assignment.py --kernels), a call costs 0.14 ms at 7
powers and 0.24 ms at 36, against 0.004 and 0.012 ms for the numba kernel
and 0.04 and 0.12 ms for the numpy reference: about 0.1 ms goes to building
scipy's sparse inputs and its per-call checks whatever the size, and its
Bellman-Ford always runs n rounds where the others stop at the fixed point.
It is slower than both, so it stays out of the solver (docs/preference.md,
"Why numba"). It is kept because it reaches the same answer by other
algorithms, which makes it an independent check of the other two
(tests/test_exact_assignment.py), and so that the comparison can be run
again (bench/bench_exact_assignment.py, bench/bench_preference.py --tight).
"""

from __future__ import annotations

import numpy as np

# Distances are summed in float64: exact while every path's total stays below 2**53.
_FLOAT_EXACT = 1 << 53


def tight_components(d: np.ndarray) -> tuple[bool, np.ndarray | None, np.ndarray | None]:
    """The contract of judge/methods/tight_kernel.py's tight_components:
    d[i, k] (diagonal 0) is the cost change when player i takes the power of
    player k. Returns (ok, tight, label); ok False when the moves have a
    negative cycle (the assignment was not optimal), and then tight and label
    are None. label names each player's strongly connected component; only
    the partition it makes is meaningful, not the numbers."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import NegativeCycleError, bellman_ford, connected_components

    d = np.asarray(d, dtype=np.int64)
    n = d.shape[0]
    if n * int(np.abs(d).max(initial=0)) >= _FLOAT_EXACT:
        raise ValueError("costs too large for exact float64 distances")
    # The other two iterate v <- min(v, min_i v[i] + d[i, k]) from
    # v = d.min(axis=0) to its fixed point: with d's diagonal 0, that is the
    # shortest distance to k from a source with a 0-cost edge to every
    # player, so the potentials (and the tight moves) are the same numbers.
    # Node n is the virtual source. Every move is stored, 0-cost ones
    # included: csgraph reads a stored 0 as an edge, a dense 0 as no edge.
    weights = np.concatenate([d.ravel(), np.zeros(n, dtype=np.int64)]).astype(np.float64)
    targets = np.concatenate([np.tile(np.arange(n), n), np.arange(n)])
    starts = np.arange(0, n * (n + 1) + 1, n)
    graph = csr_array((weights, targets, starts), shape=(n + 1, n + 1))
    try:
        dist = bellman_ford(graph, indices=n)
    except NegativeCycleError:
        return False, None, None
    v = np.rint(dist[:n]).astype(np.int64)
    tight = v[:, None] + d == v[None, :]
    src, dst = np.nonzero(tight)  # row-major: src is sorted
    moves = csr_array((np.ones(src.size, dtype=np.int8), dst, np.searchsorted(src, np.arange(n + 1))),
                      shape=(n, n))
    _, label = connected_components(moves, directed=True, connection="strong")
    return True, tight, label.astype(np.int64)
