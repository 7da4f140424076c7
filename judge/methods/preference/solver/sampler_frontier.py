"""The sampler's frontier (docs/preference.md, "The frontier"): the tree of
partial matchings expanded best-first from the block until enough nodes
are live, and the live nodes' paths written out for the trials. Compiled
as is by sampler_kernel.py."""

from __future__ import annotations

import numpy as np

from judge.methods.preference.solver.sampler_steps import _child, _line, _node_state, _tail_per


def _paths(par, fi, fj, lnode):
    """Each live node's pairs from the root down, one node after the other
    (live node t: pi, pj[ptr[t]:ptr[t + 1]]), so that a trial reads its
    node's path in one sweep rather than hopping from parent to parent
    through the whole tree. Returns (ptr, pi, pj)."""
    n_live = lnode.shape[0]
    ptr = np.zeros(n_live + 1, np.int64)
    for t in range(n_live):
        d = 0
        v = lnode[t]
        while v > 0:
            d += 1
            v = par[v]
        ptr[t + 1] = ptr[t] + d
    pi = np.zeros(ptr[n_live], np.int32)
    pj = np.zeros(ptr[n_live], np.int32)
    for t in range(n_live):
        v = lnode[t]
        k = ptr[t + 1]
        while v > 0:
            k -= 1
            pi[k] = fi[v]
            pj[k] = fj[v]
            v = par[v]
    return ptr, pi, pj


def _heap_better(fU, x, y):
    """Node x comes out of the frontier's heap before node y."""
    return fU[x] > fU[y] or (fU[x] == fU[y] and x < y)


def _frontier(a, G, F, rp, rx, cp, cx, rsum0, csum0, tail, K, work_limit, par, fi, fj, fU, fR, fC, leaf,
              heap, ra, ca, rsum, csum, match, f, rows, cols):
    """The frontier (docs/preference.md, "The frontier"): from the root (node
    0, the whole block), expand the live node with the largest bound (lowest
    number on ties) into its children along the line a trial would take
    there, as long as fewer than K nodes are live, the node arrays have room
    for one more expansion and work_limit is not reached. Node v fixes row
    fi[v] to column fj[v] below its parent par[v]; fR, fC, fU: R, C and U
    there as a trial carries them (fU: the exact count from the tail's
    first row on, and such a node is not expanded); leaf[v]: live. Returns
    (nodes, work). The live nodes' matchings are exactly the block's, each
    in one node, and their bounds sum to at most U(root): the sampler
    draws a node first, then a trial from it."""
    m = a.shape[0]
    cap = par.shape[0]
    R = 1.0
    for i in range(m):
        R *= G[rsum0[i]]
    C = 1.0
    for j in range(m):
        C *= G[csum0[j]]
    par[0] = -1
    fi[0] = -1
    fj[0] = -1
    fR[0] = R
    fC[0] = C
    fU[0] = R if R <= C else C
    leaf[0] = True
    n = 1
    nh = 0
    work = 2 * m
    if m > tail:
        heap[0] = 0
        nh = 1
    live = 1
    while nh > 0 and live < K and n + m <= cap and work < work_limit:
        v = heap[0]  # pop the largest bound
        nh -= 1
        heap[0] = heap[nh]
        h = 0
        while 2 * h + 1 < nh:
            c = 2 * h + 1
            if c + 1 < nh and _heap_better(fU, heap[c + 1], heap[c]):
                c += 1
            if not _heap_better(fU, heap[c], heap[h]):
                break
            t = heap[c]
            heap[c] = heap[h]
            heap[h] = t
            h = c
        depth = _node_state(v, par, fi, fj, rsum0, csum0, ra, ca, rsum, csum, match, rp, rx, cp, cx, m)
        R = fR[v]
        C = fC[v]
        by_column = R <= C
        line = _line(rsum, csum, ra, ca, by_column, m)
        work += m * 2
        exact = m - depth - 1 <= tail  # the children lie in the exact tail: their counts
        born = 0
        lo, hi = (cp[line], cp[line + 1]) if by_column else (rp[line], rp[line + 1])
        for t in range(lo, hi):
            if by_column:
                i, j = cx[t], line
                if not ra[i]:
                    continue
            else:
                i, j = line, rx[t]
                if not ca[j]:
                    continue
            rc = 0.0
            cc = 0.0
            if exact:
                per, k = _tail_per(a, ra, ca, i, j, m, f, rows, cols)
                w = float(per)
                work += (1 << k) * k
            else:
                rc, cc = _child(G, F, rsum, csum, ra, ca, rp, rx, cp, cx, i, j, R, C)
                w = rc if rc <= cc else cc
                work += rp[i + 1] - rp[i] + cp[j + 1] - cp[j]
            if w <= 0.0:
                continue
            par[n] = v
            fi[n] = i
            fj[n] = j
            fR[n] = rc
            fC[n] = cc
            fU[n] = w
            leaf[n] = True
            born += 1
            if not exact:  # into the heap
                h = nh
                heap[h] = n
                nh += 1
                while h > 0 and _heap_better(fU, heap[h], heap[(h - 1) // 2]):
                    p = (h - 1) // 2
                    t2 = heap[p]
                    heap[p] = heap[h]
                    heap[h] = t2
                    h = p
            n += 1
        leaf[v] = False
        live += born - 1
    return n, work
