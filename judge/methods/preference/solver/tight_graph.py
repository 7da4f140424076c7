"""The tight moves of one optimal assignment and the blocks they form
(judge/methods/preference/solver/assignment.py, "How it is computed"): a
player's moves to other players' powers at reduced cost 0 under dual
potentials, and their strongly connected components, the independent
blocks of co-optimal assignments. In one call to the compiled kernel where
it is loaded, else by scipy's (or the Hungarian method's) assignment,
Bellman-Ford's potentials and Tarjan's components in Python; the blocks
are the same either way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from judge.methods.preference.solver.costs import _as_bonus, _as_matrix, _check_sign, _costs, _decode, _kernel_status
from judge.methods.preference.solver.linear_assignment import _kernel, _lsa


@dataclass
class _RawBlock:
    rows: list[int]  # padded row indices, increasing
    cols: list[int]  # padded column indices, increasing
    allowed: list[list[bool]]  # rows x cols


@dataclass
class _Analysis:
    p: int
    q: int
    sigma: list[int]  # padded row -> padded column (one optimal assignment)
    blocks: list[_RawBlock]
    total: int  # the optimum: total weight ...
    sum_squares: int  # ... and sum of squares, shared by all co-optimal assignments
    bonus: int = 0  # ... and the bonus cells taken


def _strong_components(adj: list[list[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components (iterative)."""
    n = len(adj)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            nbrs = adj[v]
            if i < len(nbrs):
                work[-1] = (v, i + 1)
                u = nbrs[i]
                if index[u] < 0:
                    index[u] = low[u] = counter
                    counter += 1
                    stack.append(u)
                    on_stack[u] = True
                    work.append((u, 0))
                elif on_stack[u] and index[u] < low[v]:
                    low[v] = index[u]
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack[x] = False
                    comp.append(x)
                    if x == v:
                        break
                comps.append(comp)
    return comps


_NO_BONUS = np.zeros((0, 0), dtype=np.int64)


def _analyse(weights: Any, bonus: Any = None) -> _Analysis:
    w = _as_matrix(weights, checked=False)
    p, q = w.shape
    kernel = _kernel(max(p, q))
    if kernel is None:
        _check_sign(w)
    b = _as_bonus(bonus, w, checked=kernel is None)
    if p == 0 or q == 0:
        return _Analysis(p, q, list(range(max(p, q))), [], 0, 0)
    if kernel is not None:  # the costs, the optimum and its blocks in one call
        return _kernel_analysis(p, q, *kernel.analyse(w, _NO_BONUS if b is None else b))
    c, n, K, maxw, M = _costs(w, b)
    sigma, cost, tight, label = _optimum_moves(c)
    total, squares, taken = _decode(cost, n, K, maxw, M)
    return _blocks_of(p, q, sigma, tight, label, total, squares, taken)


def _kernel_analysis(p: int, q: int, status: int, sigma: np.ndarray, total: int, squares: int, taken: int,
                     rows: np.ndarray, cols: np.ndarray, starts: np.ndarray, allowed: np.ndarray) -> _Analysis:
    """The analysis of a p x q table from what the compiled kernel's
    `analyse` returns (its blocks packed: solver_kernel._blocks)."""
    _kernel_status(status)
    rows, cols, starts = rows.tolist(), cols.tolist(), starts.tolist()
    flat = allowed.tolist()  # (once: each block's lines are slices of it)
    blocks, cell = [], 0
    for s, e in zip(starts, starts[1:]):
        m = e - s
        blocks.append(_RawBlock(rows[s:e], cols[s:e], [flat[x:x + m] for x in range(cell, cell + m * m, m)]))
        cell += m * m
    return _Analysis(p, q, sigma.tolist(), blocks, int(total), int(squares), int(taken))


def _blocks_of(p: int, q: int, sigma: np.ndarray, tight: np.ndarray, label: np.ndarray, total: int, squares: int,
               taken: int) -> _Analysis:
    """The analysis of a p x q table from its optimum (_optimum_moves): the
    blocks of more than one player."""
    sig = sigma.tolist()
    groups: dict[int, list[int]] = {}
    for i, x in enumerate(label.tolist()):
        if x in groups:
            groups[x].append(i)
        else:
            groups[x] = [i]
    blocks: list[_RawBlock] = []
    for rows in groups.values():  # each in increasing player order
        if len(rows) > 1:
            holder = {sig[i]: i for i in rows}
            cols = sorted(holder)
            allowed = tight[rows][:, [holder[col] for col in cols]].tolist()
            blocks.append(_RawBlock(rows, cols, allowed))
    blocks.sort(key=lambda b: b.rows[0])  # block order: by lowest player number
    return _Analysis(p, q, sig, blocks, total, squares, taken)


def _optimum_moves(c: np.ndarray) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """(sigma, cost, tight, label): one optimal assignment of the padded
    square table c (player i takes column sigma[i]) and its cost; tight[i, k]
    when player i may take player k's power at reduced cost 0; label[i] the
    strongly connected component of player i among the tight moves. In one
    call to the compiled kernel where it is loaded (its potentials are the
    assignment's duals), else scipy's or the small-table Hungarian's
    assignment and _tight_components_py (potentials from the moves). The
    tight moves may differ between the two on pairs of no optimal
    assignment, never the components of more than one player nor the tight
    moves inside them: a move inside a component lies on a cycle of tight
    moves, so in an optimal assignment, and every optimal assignment is
    tight under every optimal potential (complementary slackness). So the
    blocks are the same either way (tests)."""
    kernel = _kernel(c.shape[0])
    if kernel is not None:
        sigma, cost, tight, label = kernel.optimum_moves(c)
        return sigma, int(cost), tight, label
    _, sigma = _lsa(c)
    cs = c[:, sigma]  # cs[i, k]: player i on the power now held by player k
    diag = cs.diagonal()
    tight, label = _tight_components_py(cs - diag[:, None])  # d[i, k]: player i moving to player k's power
    return sigma, int(diag.sum()), tight, label


def _tight_components_py(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tight moves and their components without a JIT, from the moves
    d[i, k] of one optimal assignment (player i taking player k's power);
    raises AssertionError if the assignment is not optimal."""
    n = d.shape[0]
    # Bellman-Ford for potentials v with v[k] <= v[i] + d[i, k] (no negative
    # cycle: sigma is optimal). At the fixed point the reduced cost of player i
    # on the power of player k is v[i] + d[i, k] - v[k] >= 0.
    v = d.min(axis=0)
    relaxed = np.empty_like(d)
    nv = np.empty_like(v)
    for _ in range(n + 1):
        np.add(v[:, None], d, out=relaxed)
        relaxed.min(axis=0, out=nv)
        if (nv == v).all():  # nv <= v always: equal means the fixed point
            break
        v, nv = nv, v
    else:  # pragma: no cover - would mean scipy returned a non-optimal assignment
        raise AssertionError("no dual potentials: the assignment is not optimal")
    tight = relaxed == v
    src, dst = np.nonzero(tight)
    off = src != dst
    out: dict[int, set[int]] = {}
    for i, k in zip(src[off].tolist(), dst[off].tolist()):
        if i in out:
            out[i].add(k)
        else:
            out[i] = {k}
    has_in = set(dst[off].tolist())
    # Only players with a tight move in and out can lie on a cycle.
    nodes = sorted(i for i in out if i in has_in)
    pos = {i: x for x, i in enumerate(nodes)}
    adj = [[pos[k] for k in sorted(out[i]) if k in pos] for i in nodes]
    label = np.arange(n, dtype=np.int64) + n  # singletons: their own labels
    for x, comp in enumerate(_strong_components(adj)):
        for y in comp:
            label[nodes[y]] = x
    return tight, label
