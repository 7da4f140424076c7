"""The sampler's trial loop (judge/methods/preference/solver/sampler.py,
"Trial"): from a live node of the frontier, step by step to a perfect
matching or a rejection, then the acceptance's first word. Compiled as is
by sampler_kernel.py."""

from __future__ import annotations

import math

import numpy as np

from judge.methods.preference.solver.sampler_exact_lines import _exact_draw, _exact_form
from judge.methods.preference.solver.sampler_steps import (
    ONE_WORD_FROM,
    TWO62,
    TWO_WORDS_FROM,
    _child,
    _fix,
    _line,
    _path_state,
    _pick,
    _tail_draw,
    _tail_per,
)


def _trials(a, G, F, rp, rx, cp, cx, words, pos, work_limit, match, whi, wlo, wn, tail, tailper,
            rsum0, csum0, ptr, pi, pj, lR, lC, lform, lhi, llo, lch, lcl, fnw, log2c, xk, xg, xd):
    """Trials from words[pos] on, until one completes, the words run out or
    work_limit is reached. Returns (status, pos, rejected, work, steps):
    0: a trial completed and was accepted: match[row] = column; step s
       (s < steps) chose the width whi[s] * 2**62 + wlo[s] (two words,
       wn[s] == 2) or whi[s] (one word) out of 2**(62 * wn[s]); pos is after
       its words and the acceptance's word;
    4: the same, but the acceptance's first word fell too near its
       probability to decide in floating point: pos is at that word, and the
       caller decides exactly (_bernoulli);
    1: the words ran out: pos is the start of the unfinished trial;
    2: work_limit reached (checked before each trial): pos is the next trial's;
    3: a step weight below TWO_WORDS_FROM.
    rejected: trials rejected in this call; work: operations.
    A trial starts at a live node of the frontier (_frontier), drawn with
    fnw words against the cumulative widths lch, lcl of the live nodes
    (their own widths lhi, llo: step 0; their paths from the root: _paths;
    their R and C: lR, lC); with one live node (the root) no word is
    drawn. A node whose bound is exact in some lines (lform 1 or 2:
    _node_bounds) draws how those lines are matched first (_exact_draw),
    then goes on from what is left, its first step measured against the
    rest's bound (C for form 1, R for form 2), which the draw's factors
    telescope to. Each step then moves along the node's line to child e
    with probability about U(e) / U(node), R and C carried from node to
    child. With at most `tail` rows left, a trial finishes exactly: the
    rest is counted (tailper[0]) and drawn uniformly; one row before, each
    child's weight is its exact count over U (docs/preference.md)."""
    m = a.shape[0]
    n_words = words.shape[0]
    n_live = lR.shape[0]
    rsum = np.zeros(m, np.int64)
    csum = np.zeros(m, np.int64)
    ra = np.zeros(m, np.bool_)
    ca = np.zeros(m, np.bool_)
    cand = np.zeros(m + 1, np.int64)
    wts = np.zeros(m + 1, np.float64)
    kr = np.zeros(m, np.float64)
    kc = np.zeros(m, np.float64)
    f = np.zeros(1 << tail, np.int64)
    rows = np.zeros(m, np.int64)
    cols = np.zeros(m, np.int64)
    xi = np.zeros((14, m + xd + 2), np.int64)
    tab = np.zeros((2 * m + 2) << xg, np.float64)
    pairs = np.zeros((m, 2), np.int64)
    rejected = 0
    work = 0
    while True:
        if work >= work_limit:
            return 2, pos, rejected, work, 0
        start = pos
        leaf = 0
        st = 0
        work += 1
        if n_live > 1:  # the frontier's node: the first step
            if pos + fnw > n_words:
                return 1, start, rejected, work, 0
            xh = words[pos]
            xl = words[pos + 1] if fnw == 2 else 0
            pos += fnw
            lo_t = 0
            hi_t = n_live
            while lo_t < hi_t:  # the first live node whose cumulative width is above the draw
                mid = (lo_t + hi_t) // 2
                if xh < lch[mid] or (xh == lch[mid] and xl < lcl[mid]):
                    hi_t = mid
                else:
                    lo_t = mid + 1
            if lo_t == n_live:  # the rejected rest
                rejected += 1
                continue
            leaf = lo_t
            whi[0] = lhi[lo_t]
            wlo[0] = llo[lo_t]
            wn[0] = fnw
            st = 1
        depth = _path_state(leaf, ptr, pi, pj, rsum0, csum0, ra, ca, rsum, csum, match, rp, rx, cp, cx, m)
        work += m * 2
        R = lR[leaf]
        C = lC[leaf]
        U = R if R <= C else C
        form = lform[leaf]
        if form > 0:  # the node's exact lines first
            _, nc, wk = _exact_form(form, rp, rx, cp, cx, ra, ca, rsum, csum, G, xk, xg, xd, m, xi, tab)
            work += wk
            at, st, npairs = _exact_draw(G, xi, tab, nc, words, pos, whi, wlo, wn, st, pairs, wts)
            if at == -1:
                return 1, start, rejected, work, 0
            if at == -3:
                return 3, start, rejected, work, 0
            if at == -2:
                rejected += 1
                continue
            pos = at
            for p in range(npairs):
                if form == 1:
                    _fix(pairs[p, 0], pairs[p, 1], match, ra, ca, rsum, csum, rp, rx, cp, cx)
                else:
                    _fix(pairs[p, 1], pairs[p, 0], match, ra, ca, rsum, csum, rp, rx, cp, cx)
            depth += npairs
            R = 1.0
            C = 1.0
            for x in range(m):
                if ra[x]:
                    R *= G[rsum[x]]
                if ca[x]:
                    C *= G[csum[x]]
            work += 2 * m
            U = C if form == 1 else R  # what the draw's factors telescope to
        dead = False
        tailper[0] = 1
        for step in range(depth, m):
            if m - step <= tail:  # the exact tail: count the rest, draw it uniformly
                per, k = _tail_per(a, ra, ca, -1, -1, m, f, rows, cols)
                work += (1 << k) * k
                if per == 0:  # only after a node's exact lines: what they left has no perfect matching
                    dead = True
                    break
                tailper[0] = per
                pos = _tail_draw(a, f, rows, cols, k, match, words, pos)
                if pos < 0:
                    return 1, start, rejected, work, 0
                break
            by_column = R <= C
            line = _line(rsum, csum, ra, ca, by_column, m)
            work += m
            nc = 0
            wmin = 2.0
            lo, hi = (cp[line], cp[line + 1]) if by_column else (rp[line], rp[line + 1])
            for t in range(lo, hi):
                if by_column:
                    i, j, x = cx[t], line, cx[t]
                    if not ra[i]:
                        continue
                else:
                    i, j, x = line, rx[t], rx[t]
                    if not ca[j]:
                        continue
                if m - step - 1 == tail:  # children in the tail: their exact count
                    per, k = _tail_per(a, ra, ca, i, j, m, f, rows, cols)
                    w = per / U
                    work += (1 << k) * k
                    kr[nc] = 0.0
                    kc[nc] = 0.0
                else:
                    rc, cc = _child(G, F, rsum, csum, ra, ca, rp, rx, cp, cx, i, j, R, C)
                    w = (rc if rc <= cc else cc) / U
                    work += rp[i + 1] - rp[i] + cp[j + 1] - cp[j]
                    kr[nc] = rc
                    kc[nc] = cc
                cand[nc] = x
                wts[nc] = w
                nc += 1
                if w > 0.0 and w < wmin:
                    wmin = w
            if wmin > 1.5:  # no child can be completed
                dead = True
                break
            if wmin < TWO_WORDS_FROM:
                return 3, start, rejected, work, 0
            nw = 1 if wmin >= ONE_WORD_FROM else 2
            if pos + nw > n_words:
                return 1, start, rejected, work, 0
            xh = words[pos]
            xl = words[pos + 1] if nw == 2 else 0
            pos += nw
            chosen, hi, lo = _pick(wts, nc, xh, xl, nw)
            if chosen < 0:  # the draw fell in the rejected rest
                dead = True
                break
            whi[st] = hi
            wlo[st] = lo
            wn[st] = nw
            st += 1
            if by_column:
                i, j = cand[chosen], line
            else:
                i, j = line, cand[chosen]
            R = kr[chosen]
            C = kc[chosen]
            U = R if R <= C else C
            _fix(i, j, match, ra, ca, rsum, csum, rp, rx, cp, cx)
        if dead:
            rejected += 1
            continue
        steps = st
        # alpha = c * per(tail) * product of 2**(62 nw) / width, in log2
        la = log2c + math.log2(tailper[0])
        for s in range(steps):
            if wn[s] == 2:
                la += 62.0 - math.log2(whi[s] + wlo[s] / TWO62)
            else:
                la += 62.0 - math.log2(whi[s])
        if la < 0.0:
            if pos >= n_words:
                return 1, start, rejected, work, 0
            d = 2.0 ** (62.0 + la)  # alpha's first 62 bits, nearly
            tol = d * 2.0**-36 + 1024.0  # the logs' error, and a word's rounding to a double
            w = words[pos]
            if w + tol < d:  # surely below: accepted
                return 0, pos + 1, rejected, work, steps
            if w > d + tol:  # surely above: rejected
                pos += 1
                rejected += 1
                continue
        return 4, pos, rejected, work, steps
