"""One perfect matching of a 0-1 block, drawn exactly uniformly, without counting.

The solver (judge/methods/exact_assignment.py) counts a block's co-optimal
assignments and draws a number below the count whenever the counting fits its
bounds. Counting perfect matchings is #P-hard, and some lists ("anything but
X": every player brackets all powers but a different one) give blocks no
counting method handles at 36 powers. Those blocks are drawn by this module,
which needs no count. docs/preference.md ("Blocks too big to count") has the
proof of uniformity; in short:

Bound. For a 0-1 matrix A with row sums r_i and column sums c_j, let
g(r) = (r + ln(r)/2 + e - 1) / e for r >= 1 (Huber and Law, "Fast
approximation of the permanent for very dense problems", SODA 2008), R(A) =
product of g(r_i), C(A) = product of g(c_j), and U(A) = 0 if A has an empty
row or column, else min(R(A), C(A)). Bregman's theorem in Huber and Law's
form: per(A) <= U(A); and, the property the sampler rests on, expanding R
along any column j (C along any row i) never sums to more than the bound:
sum over i with a_ij = 1 of R(A minus row i, column j) <= R(A). So if
R(A) <= C(A) and the sampler expands A along a column, the children's U sum
to at most U(A) (each child's U is at most its R); otherwise it expands along
a row, and likewise with C. U of the empty matrix is 1.

Frontier. The number of trials is about (the trials' bound) / per(block),
and U(block) alone can be 10**7 times per(block) on sparse blocks (4-6 ones
a row at 50 rows). So the sampler first expands the tree of partial
matchings best-first: from the root (the block), the live node with the
largest bound is replaced by its children along the line a trial would
take there (dead children, U = 0, dropped; from the tail's first row on, a
node's bound is its exact count and it is not expanded), until enough
nodes are live. The live nodes split the block's matchings (each extends
exactly one node's path) and each bounds its own, so their sum B bounds
per(block); B <= U(block), and in practice far below it where the slack
is (dead ends, uneven lines): 90-140x at 50 sparse rows.

Exact lines. Most of U's slack on sparse blocks lies in the sparse lines
(a row of 2 ones counts g(2) = 1.5 ways, where its choice is often forced):
a node's bound may instead count a set S of its sparsest rows exactly,
V = sum over the ways mu of matching S of C(the rest without mu's columns),
at least the node's count since each C bounds its part; C of the rest is a
product over the columns, so V is that product times a weighted count of
S's matchings, a DP over the columns per group of S's rows that share
columns (_exact_part); likewise with columns exact and R. A node's bound is
the least of U and these two (_node_bounds); a node whose bound is 0 has no
perfect matching and is dropped. At 49 sparse rows the frontier's sum
falls some 60 times.

Trial. Draw a live node with probability about bound(node)/B, then from it:
if its bound counts lines exactly, draw how they are matched with
probability about C(rest)/V (the DP, backwards: _exact_draw), and measure
the next step against C(rest) (its children's U sum to at most U(rest) <=
C(rest)); then along the chosen line (the column, or row, with the fewest
ones, lowest number first; a column when R <= C), move to child e with
probability about U(child)/U(current), or reject the trial with what is
left. A trial that completes a matching M has been proposed with
probability q(M) = product of the step probabilities, which telescopes to
about 1/B. It is then accepted with probability c / q(M), c = (1 - 2**-20)
/ B, computed exactly (big integers, or on its first word in floating
point when that word is surely apart from c / q(M)): every matching comes
out of a trial with probability q(M) * c / q(M) = c exactly, the same for
all, so the first accepted trial is uniform. Floating point only decides
the step probabilities, which are exact dyadic numbers (integer widths
over 2**62 or 2**124); its errors are paid for by the margin 2**-20 and
checked on every accepted matching (c / q(M) > 1 raises, never biases).

Phases. A bigger frontier costs more to build and saves trials: the sampler
builds one of FRONTIER_FIRST live nodes bounded by U alone (most blocks need
few trials), runs trials for PHASE_TRIALS times its work, and while none is
accepted builds one of FRONTIER_EXACT nodes with exact lines, then four
times larger each phase (up to FRONTIER), going on with new words. Whether a phase runs depends only on
earlier rejections, never on the matching a trial would give, so the
first accepted trial of any phase is uniform.

Words. The trials use their own word stream: Philox4x64-10 (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", 2011; numpy.random.Philox)
keyed with two words of the judge's SHA-256 stream (docs/randomness.md);
sampler word k is the top 62 bits of output word k mod 4 of the block with
counter (k div 4 + 1, 0, 0, 0). A step whose smallest weight is at least
2**-30 uses one word, else two (124 bits); the acceptance of a completed
trial compares its probability with the next words, 62 bits at a time.

The frontier builder, the node bounds and the trial loop are plain Python
on numpy arrays (`_frontier`, `_node_bounds`, `_trials`), compiled with
numba for blocks of COMPILED_FROM rows or more
(judge/methods/matching_kernel.py); both give the same result, bit for bit
(test).

Pure: no I/O, no clock; the work is bounded by a count of operations, never
by time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

from judge.methods import compiled

MARGIN = 2.0**-20  # c = (1 - MARGIN) / U(block): pays for rounding (see above)
SHRINK = 1.0 - 2.0**-36  # step widths are floor(w * SHRINK * 2**62 per word)
ONE_WORD_FROM = 2.0**-30  # a step with a smaller weight draws 124 bits
TWO_WORDS_FROM = 2.0**-90  # below this a step would be too coarse: refused
TWO62 = float(1 << 62)
WORD_BITS = 62
# Rows from which the compiled trial loop is worth loading (as for the
# tight-pair kernel: judge/methods/exact_assignment.py, COMPILED_FROM).
COMPILED_FROM = 12
# Rows left from which a trial finishes exactly (a subset DP over 2**TAIL
# column sets): removes the bound's slack where it is worst, in the last
# sparse rows; at most 20 (counts stay below 2**63).
TAIL = 12
# Extra trials after the accepted one, to estimate the count: until this many
# accepted in all, or a quarter of the draw's work more (the bounds are
# rigorous; the estimate is only a guide, and the draw must stay quick).
ESTIMATE_ACCEPTS = 32
# Live nodes of the frontier the trials start from (docs/preference.md, "The
# frontier"): its bound, the sum of theirs, sets the number of trials. The
# first phase's frontier, the largest, and the Python loop's (small blocks).
FRONTIER_FIRST = 1 << 14
FRONTIER_EXACT = 1 << 12  # the first phase with exact lines (below)
FRONTIER = 1 << 16
FRONTIER_SMALL = 16
# A phase runs trials for up to this many times its frontier's work before
# the next phase builds a frontier four times larger.
PHASE_TRIALS = 4
# The bound at a frontier node may be exact in some of its sparsest lines
# (docs/preference.md, "The bound at a frontier node"): at most EXACT_LINES
# lines of at most EXACT_DEGREE ones each, in groups (lines linked by a shared
# line of the other side) of at most EXACT_GROUP lines, whose DP costs
# 2**EXACT_GROUP states a line. On sparse blocks the bound's slack is in those
# lines: at 49 sparse rows the frontier's sum falls 50-60 times.
EXACT_LINES = 12
EXACT_GROUP = 6
EXACT_DEGREE = 4

__all__ = ["Sampled", "TooHard", "bound", "sample"]


class TooHard(Exception):
    """The block's trials passed their work limit (or needed more precision
    than 124 bits a step): the caller refuses clearly, never guesses."""

    def __init__(self, work: int, reason: str = "work") -> None:
        super().__init__(f"exact draw passed its {reason} limit after {work} units of work")
        self.work = work
        self.reason = reason


@dataclass(frozen=True)
class Sampled:
    match: tuple[int, ...]  # row -> column of the drawn perfect matching
    bound: float  # U(block): per(block) <= bound
    estimate: float  # estimated per(block), from the trials' acceptance rate
    trials: int  # trials run up to the accepted one
    words: int  # sampler words used up to the accepted one
    work: int  # operation count, up to the accepted one
    frontier: int = 1  # live nodes of the frontier the trials started from
    phase: int = 0  # the phase (phases()) whose trial was accepted


# --------------------------------------------------------------------------
# The bound's factors
# --------------------------------------------------------------------------

_TABLES: list[tuple[np.ndarray, np.ndarray]] = []


def _tables(m: int) -> tuple[np.ndarray, np.ndarray]:
    """G[r] = g(r) (G[0] = 1/e, unused: an empty line makes U zero) and
    F[r] = G[r-1] / G[r], as doubles for r <= m. Computed with 40-digit
    decimals (correctly rounded), then rounded to doubles: the same numbers
    on every machine, whatever its libm."""
    if _TABLES and len(_TABLES[0][0]) > m:
        return _TABLES[0]
    size = max(m + 1, 257)
    with localcontext() as ctx:
        ctx.prec = 40
        e = Decimal(1).exp()
        g = [1 / e] + [(r + Decimal(r).ln() / 2 + e - 1) / e for r in range(1, size)]
    G = np.array([float(x) for x in g], dtype=np.float64)
    F = np.zeros(size, dtype=np.float64)
    for r in range(1, size):
        F[r] = G[r - 1] / G[r]
    _TABLES[:] = [(G, F)]
    return G, F


def bound(a: np.ndarray) -> float:
    """U(A) of the module docstring (rows, then columns, in index order)."""
    m = a.shape[0]
    G, _ = _tables(m)
    rs, cs = a.sum(axis=1).tolist(), a.sum(axis=0).tolist()
    if min(rs, default=1) == 0 or min(cs, default=1) == 0:
        return 0.0
    R = 1.0
    for r in rs:
        R *= float(G[r])
    C = 1.0
    for c in cs:
        C *= float(G[c])
    return R if R <= C else C


# --------------------------------------------------------------------------
# The trial loop (compiled as is by judge/methods/matching_kernel.py)
# --------------------------------------------------------------------------


def _child(G, F, rsum, csum, ra, ca, rp, rx, cp, cx, i, j, R, C):
    """R and C of the matrix without row i and column j, from the current R
    and C (the lines through i and j lose one each, F[r] = G[r-1] / G[r]);
    (0.0, 0.0) when that matrix has an empty row or column."""
    rc = R / G[rsum[i]]
    for t in range(cp[j], cp[j + 1]):
        k = cx[t]
        if k != i and ra[k]:
            if rsum[k] == 1:
                return 0.0, 0.0
            rc *= F[rsum[k]]
    cc = C / G[csum[j]]
    for t in range(rp[i], rp[i + 1]):
        x = rx[t]
        if x != j and ca[x]:
            if csum[x] == 1:
                return 0.0, 0.0
            cc *= F[csum[x]]
    return rc, cc


def _fix(i, j, match, ra, ca, rsum, csum, rp, rx, cp, cx):
    """Row i takes column j: both leave, and the lines through them lose one."""
    match[i] = j
    ra[i] = False
    ca[j] = False
    for t in range(cp[j], cp[j + 1]):
        if ra[cx[t]]:
            rsum[cx[t]] -= 1
    for t in range(rp[i], rp[i + 1]):
        if ca[rx[t]]:
            csum[rx[t]] -= 1


def _line(rsum, csum, ra, ca, by_column, m):
    """The column (by_column) or row left with the fewest ones, lowest number
    first: the line a node is expanded along."""
    line = -1
    fewest = m + 1
    for x in range(m):
        if by_column:
            if ca[x] and csum[x] < fewest:
                fewest = csum[x]
                line = x
        elif ra[x] and rsum[x] < fewest:
            fewest = rsum[x]
            line = x
    return line


def _tail_per(a, ra, ca, skip_i, skip_j, m, f, rows, cols):
    """The number of perfect matchings of the active rows and columns,
    without row skip_i and column skip_j (-1: none): the subset DP over the
    columns, f[S] = ways the first popcount(S) rows fill the columns S.
    Leaves rows/cols (their numbers) and f filled for _tail_draw. Returns
    (per, k)."""
    k = 0
    for i in range(m):
        if ra[i] and i != skip_i:
            rows[k] = i
            k += 1
    kc = 0
    for j in range(m):
        if ca[j] and j != skip_j:
            cols[kc] = j
            kc += 1
    full = (1 << k) - 1
    for S in range(full + 1):
        f[S] = 0
    f[0] = 1
    for S in range(full):
        v = f[S]
        if v == 0:
            continue
        t = 0
        x = S
        while x:
            x &= x - 1
            t += 1
        r = rows[t]
        for c in range(k):
            if not (S >> c) & 1 and a[r, cols[c]]:
                f[S | (1 << c)] += v
    return f[full], k


def _tail_draw(a, f, rows, cols, k, match, words, pos):
    """A uniform perfect matching of the rows and columns _tail_per left in
    f (exact: each row's column drawn with weight f[S without it] by
    rejection on 62-bit words). Returns the next pos, or -1 if the words ran
    out."""
    n_words = words.shape[0]
    S = (1 << k) - 1
    for t in range(k - 1, -1, -1):
        total = f[S]
        limit = (4611686018427387904 // total) * total
        while True:
            if pos >= n_words:
                return -1
            w = words[pos]
            pos += 1
            if w < limit:
                break
        r = w % total
        r_row = rows[t]
        for c in range(k):
            if (S >> c) & 1 and a[r_row, cols[c]]:
                sub = f[S & ~(1 << c)]
                if r < sub:
                    match[r_row] = cols[c]
                    S &= ~(1 << c)
                    break
                r -= sub
    return pos


def _reset(rsum0, csum0, ra, ca, rsum, csum, match, m):
    """The trial state at the root: every line, the root's line sums."""
    for x in range(m):
        ra[x] = True
        ca[x] = True
        match[x] = -1
        rsum[x] = rsum0[x]
        csum[x] = csum0[x]


def _node_state(node, par, fi, fj, rsum0, csum0, ra, ca, rsum, csum, match, rp, rx, cp, cx, m):
    """Set the state to frontier node `node`'s: the root's, then the pairs
    on the path up from the node fixed (a row still to be fixed higher up
    may lose ones on the way: it leaves, so they are never read). Returns
    the node's depth (pairs fixed)."""
    _reset(rsum0, csum0, ra, ca, rsum, csum, match, m)
    depth = 0
    v = node
    while v > 0:
        _fix(fi[v], fj[v], match, ra, ca, rsum, csum, rp, rx, cp, cx)
        depth += 1
        v = par[v]
    return depth


def _path_state(t, ptr, pi, pj, rsum0, csum0, ra, ca, rsum, csum, match, rp, rx, cp, cx, m):
    """Set the state to live node t's (_node_state, from its path as _paths
    wrote it: pi, pj[ptr[t]:ptr[t + 1]], from the root down). Returns
    the node's depth."""
    _reset(rsum0, csum0, ra, ca, rsum, csum, match, m)
    for p in range(ptr[t], ptr[t + 1]):
        _fix(pi[p], pj[p], match, ra, ca, rsum, csum, rp, rx, cp, cx)
    return ptr[t + 1] - ptr[t]


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


def _find(uf, x):
    """The root of x's group (union-find, no path compression: groups stay
    small)."""
    while uf[x] != x:
        x = uf[x]
    return x


def _pick(wts, n, xh, xl, nw):
    """A step's choice among options 0 .. n - 1 of weights wts (those <= 0
    have no width), by the draw xh (, xl): each option's width is its weight
    times SHRINK out of 2**(62 * nw), cut to nw words, and the option chosen
    is the first whose cumulative width passes the draw. Returns (chosen,
    hi, lo): chosen -1 when the draw fell in the rejected rest; hi, lo the
    width of the last option measured (the chosen one's)."""
    chosen = -1
    ch = 0
    cl = 0
    hi = 0
    lo = 0
    for o in range(n):
        v = wts[o]
        if v <= 0.0:
            continue
        y = v * SHRINK * TWO62
        hi = int(y)
        lo = int((y - hi) * TWO62) if nw == 2 else 0
        ch += hi
        cl += lo
        if cl >= 4611686018427387904:  # 2**62: carry
            cl -= 4611686018427387904
            ch += 1
        if xh < ch or (xh == ch and xl < cl):
            chosen = o
            break
    return chosen, hi, lo


def _exact_part(lp, lx, la, lsum, oa, osum, G, k_max, group, degree, m, xi, tab):
    """The exact-lines bound of the current state (docs/preference.md, "The
    bound at a frontier node"), for one side: the lines are rows (lp, lx,
    la, lsum = rp, rx, ra, rsum; the other side columns) or columns. S is
    the set of at most k_max active lines with at most `degree` ones, taken
    fewest ones first (lowest number on ties), a line left out when it would
    make its group (lines linked by a shared other-side line) pass `group`
    lines. The bound is
        V = sum over the ways mu of matching S of C(rest without mu's lines)
          = prod over other-side lines x left with cnt[x] > 0 of G[cnt[x]]
            * prod over the groups of F_group,
    cnt[x] being x's ones outside S, F_group a weighted count of the group's
    matchings (each other-side line x it takes weighs 1 / G[cnt[x]], or 1
    when cnt[x] == 0: then x must be taken), by a DP over the group's
    other-side lines, lowest number first (state: the group's lines matched
    so far). The DP's tables stay in tab, and their layout in xi, for
    _exact_draw. Returns (V, groups, work); V < 0: no line qualifies;
    V == 0: no perfect matching."""
    sel, uf, usz, own, comp, rts, cnt, xat = xi[0], xi[1], xi[2], xi[3], xi[4], xi[5], xi[6], xi[7]
    cl, clp, cj, cjp, adjm, toff = xi[8], xi[9], xi[10], xi[11], xi[12], xi[13]
    # the candidates, fewest ones first, lowest number on ties (a counting sort)
    for d in range(degree + 2):
        rts[d] = 0
    for i in range(m):
        own[i] = -1
        if la[i] and lsum[i] <= degree:
            rts[lsum[i] + 1] += 1
    for d in range(1, degree + 2):
        rts[d] += rts[d - 1]
    nq = rts[degree + 1]
    for i in range(m):
        if la[i] and lsum[i] <= degree:
            xat[rts[lsum[i]]] = i
            rts[lsum[i]] += 1
    work = 2 * m
    ns = 0
    for q in range(nq):
        if ns >= k_max:
            break
        i = xat[q]
        uf[i] = i
        tot = 1
        nr = 0
        for t in range(lp[i], lp[i + 1]):  # the groups it would join
            x = lx[t]
            if oa[x] and own[x] >= 0:
                r = _find(uf, own[x])
                new = True
                for z in range(nr):
                    if rts[z] == r:
                        new = False
                if new:
                    rts[nr] = r
                    nr += 1
                    tot += usz[r]
        work += lp[i + 1] - lp[i]
        if tot > group:
            continue
        sel[ns] = i
        ns += 1
        usz[i] = tot
        for z in range(nr):
            uf[rts[z]] = i
        for t in range(lp[i], lp[i + 1]):
            x = lx[t]
            if oa[x] and own[x] < 0:
                own[x] = i
    if ns == 0:
        return -1.0, 0, work
    for x in range(m):
        if oa[x]:
            cnt[x] = osum[x]
    for s in range(ns):
        i = sel[s]
        for t in range(lp[i], lp[i + 1]):
            if oa[lx[t]]:
                cnt[lx[t]] -= 1
    V = 1.0
    for x in range(m):
        if oa[x] and cnt[x] > 0:
            V *= G[cnt[x]]
    # groups: numbered in the order of their first line in S; each group's
    # lines in selection order, its other-side lines lowest number first
    nc = 0
    for s in range(ns):
        r = _find(uf, sel[s])
        if usz[r] > 0:  # a root not numbered yet: usz[r] becomes -(group + 1)
            usz[r] = -(nc + 1)
            nc += 1
        comp[s] = -usz[r] - 1
    for c in range(nc + 1):
        clp[c] = 0
        cjp[c] = 0
    for s in range(ns):
        clp[comp[s] + 1] += 1
    for x in range(m):
        if oa[x] and own[x] >= 0:
            cjp[-usz[_find(uf, own[x])]] += 1
    for c in range(nc):
        clp[c + 1] += clp[c]
        cjp[c + 1] += cjp[c]
    for s in range(ns):
        c = comp[s]
        cl[clp[c]] = sel[s]
        clp[c] += 1
    for x in range(m):
        if oa[x] and own[x] >= 0:
            c = -usz[_find(uf, own[x])] - 1
            cj[cjp[c]] = x
            adjm[cjp[c]] = 0
            cjp[c] += 1
    for c in range(nc, 0, -1):  # the counting sort moved each start to the next group's
        clp[c] = clp[c - 1]
        cjp[c] = cjp[c - 1]
    clp[0] = 0
    cjp[0] = 0
    for c in range(nc):
        for u in range(cjp[c], cjp[c + 1]):
            comp[cj[u]] = u  # other-side line -> its place
        for p in range(clp[c], clp[c + 1]):
            i = cl[p]
            for t in range(lp[i], lp[i + 1]):
                if oa[lx[t]]:
                    adjm[comp[lx[t]]] |= 1 << (p - clp[c])
    off = 0
    for c in range(nc):
        size = 1 << (clp[c + 1] - clp[c])
        toff[c] = off
        for s in range(size):
            tab[off + s] = 0.0
        tab[off] = 1.0
        for u in range(cjp[c + 1] - cjp[c]):
            x = cj[cjp[c] + u]
            am = adjm[cjp[c] + u]
            free = cnt[x] > 0
            w = 1.0 / G[cnt[x]] if free else 1.0
            base = off + u * size
            for s in range(size):
                b = s & am
                acc = 0.0
                while b:
                    low = b & -b
                    acc += tab[base + (s ^ low)]
                    b ^= low
                    work += 1
                tab[base + size + s] = (tab[base + s] if free else 0.0) + acc * w
            work += size
        off += (cjp[c + 1] - cjp[c] + 1) * size
        V *= tab[off - 1]  # the last table's full state: F of the group
    toff[nc] = off
    return V, nc, work


def _exact_draw(G, xi, tab, nc, words, pos, whi, wlo, wn, st, pairs, wts):
    """Draw the ways S is matched (the tables of _exact_part): each group's
    other-side lines from the last, each either left to the rest (weight
    f[u][s] / f[u + 1][s], when it may be) or taken by a line t of the
    state s (f[u][s - t] * w / f[u + 1][s]); a choice with one possible
    option takes no word (its factor is 1), the others are steps as in
    _trials (widths recorded from whi[st] on). pairs[k] = (exact line,
    other-side line) for k < the count returned. Returns (pos, st, count):
    pos -1: the words ran out; -2: the draw fell in a step's rejected rest;
    -3: a weight below TWO_WORDS_FROM."""
    cnt, cl, clp, cj, cjp, adjm, toff = xi[6], xi[8], xi[9], xi[10], xi[11], xi[12], xi[13]
    n_words = words.shape[0]
    npairs = 0
    for c in range(nc):
        kc = clp[c + 1] - clp[c]
        size = 1 << kc
        s = size - 1
        for u in range(cjp[c + 1] - cjp[c] - 1, -1, -1):
            x = cj[cjp[c] + u]
            am = adjm[cjp[c] + u]
            free = cnt[x] > 0
            w = 1.0 / G[cnt[x]] if free else 1.0
            base = toff[c] + u * size
            cur = tab[base + size + s]
            nopt = 0
            wmin = 2.0
            only = -1
            for o in range(kc + 1):  # option 0: x left; option t + 1: line t takes x
                if o == 0:
                    v = tab[base + s] / cur if free else 0.0
                elif (s & am) >> (o - 1) & 1:
                    v = tab[base + (s ^ (1 << (o - 1)))] * w / cur
                else:
                    v = 0.0
                wts[o] = v
                if v > 0.0:
                    nopt += 1
                    only = o
                    if v < wmin:
                        wmin = v
            if nopt == 0:  # pragma: no cover - a reached state has a way on
                return -2, st, npairs
            chosen = only
            if nopt > 1:
                if wmin < TWO_WORDS_FROM:
                    return -3, st, npairs
                nw = 1 if wmin >= ONE_WORD_FROM else 2
                if pos + nw > n_words:
                    return -1, st, npairs
                xh = words[pos]
                xl = words[pos + 1] if nw == 2 else 0
                pos += nw
                chosen, hi, lo = _pick(wts, kc + 1, xh, xl, nw)
                if chosen < 0:
                    return -2, st, npairs
                whi[st] = hi
                wlo[st] = lo
                wn[st] = nw
                st += 1
            if chosen > 0:
                pairs[npairs, 0] = cl[clp[c] + chosen - 1]
                pairs[npairs, 1] = x
                npairs += 1
                s ^= 1 << (chosen - 1)
    return pos, st, npairs


def _exact_form(form, rp, rx, cp, cx, ra, ca, rsum, csum, G, xk, xg, xd, m, xi, tab):
    """_exact_part with rows exact (form 1: the rest bounded by C) or
    columns exact (form 2: by R)."""
    if form == 1:
        return _exact_part(rp, rx, ra, rsum, ca, csum, G, xk, xg, xd, m, xi, tab)
    return _exact_part(cp, cx, ca, csum, ra, rsum, G, xk, xg, xd, m, xi, tab)


def _node_bounds(G, rp, rx, cp, cx, rsum0, csum0, tail, ptr, pi, pj, lU, xk, xg, xd, lb, lform, ra, ca, rsum, csum,
                 match, xi, tab):
    """Each live node's bound (docs/preference.md, "The bound at a frontier
    node"): the least of U (lU, form 0), the rows-exact bound (form 1) and
    the columns-exact bound (form 2), ties to the lower form; U alone where
    the node is counted exactly (the tail) or no line qualifies. Returns
    the work."""
    m = rsum0.shape[0]
    work = 0
    fewest = m  # a line loses at most one one per pair fixed: below the node's depth, none qualifies
    for x in range(m):
        if rsum0[x] < fewest:
            fewest = rsum0[x]
        if csum0[x] < fewest:
            fewest = csum0[x]
    for t in range(lU.shape[0]):
        lb[t] = lU[t]
        lform[t] = 0
        depth = ptr[t + 1] - ptr[t]
        if m - depth <= tail or xk == 0 or fewest - depth > xd:
            continue
        _path_state(t, ptr, pi, pj, rsum0, csum0, ra, ca, rsum, csum, match, rp, rx, cp, cx, m)
        work += 2 * m
        for form in range(1, 3):
            V, nc, wk = _exact_form(form, rp, rx, cp, cx, ra, ca, rsum, csum, G, xk, xg, xd, m, xi, tab)
            work += wk
            if V >= 0.0 and V < lb[t]:
                lb[t] = V
                lform[t] = form
    return work


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


_COMPILED: list = []


def _runner(m: int):
    """(frontier builder, path writer, node bounds, trial loop): compiled for
    big blocks (numba loaded on first need, where judge/methods/compiled.py
    allows), else the Python ones; the same results either way."""
    if _COMPILED:
        return _COMPILED[0]
    if m < COMPILED_FROM or not compiled.allowed("sampler"):
        return _frontier, _paths, _node_bounds, _trials
    try:
        _COMPILED.append(compiled_runner())
    except ImportError:  # pragma: no cover - numba is a dependency
        _COMPILED.append((_frontier, _paths, _node_bounds, _trials))
    return _COMPILED[0]


def compiled_runner() -> tuple:
    """The compiled (frontier builder, path writer, node bounds, trial loop)."""
    from judge.methods.matching_kernel import frontier, node_bounds, paths, trials

    return frontier, paths, node_bounds, trials


# --------------------------------------------------------------------------
# Words and the exact acceptance
# --------------------------------------------------------------------------


class _Words:
    """Sampler words (module docstring): top 62 bits of Philox4x64-10. Word
    k (absolute) is array[k - base]: the words before a trial that is still
    running are dropped as more are made, so a long draw holds a chunk of
    words, not all it used."""

    CHUNK = 1 << 16

    def __init__(self, key: tuple[int, int]) -> None:
        self._gen = np.random.Philox(key=np.array(key, dtype=np.uint64))
        self.array = np.zeros(0, dtype=np.int64)
        self.base = 0
        self.more()

    def more(self, keep_from: int | None = None) -> None:
        """Make CHUNK more words; drop those before word keep_from."""
        if keep_from is not None and keep_from > self.base:
            self.array = self.array[keep_from - self.base:]
            self.base = keep_from
        new = (self._gen.random_raw(self.CHUNK) >> np.uint64(2)).astype(np.int64)
        self.array = np.concatenate((self.array, new))

    def word(self, pos: int) -> int:
        while pos - self.base >= len(self.array):
            self.more()
        return int(self.array[pos - self.base])


def _bernoulli(p: Fraction, words: _Words, pos: int) -> tuple[bool, int]:
    """True with probability exactly p (0 <= p <= 1): the uniform number
    0.w1 w2 ... (62-bit words) is below p. Returns (outcome, next pos)."""
    num, den = p.numerator, p.denominator
    while True:
        digit, num = divmod(num << WORD_BITS, den)  # next 62 bits of p
        w = words.word(pos)
        pos += 1
        if w != digit:
            return w < digit, pos
        if num == 0:  # p ends here; the uniform number does not: it is above
            return False, pos


@dataclass(frozen=True)
class _Frontier:
    """The frontier's nodes as the trial loop takes them."""
    ptr: np.ndarray  # live node t's path from the root: pi, pj[ptr[t]:ptr[t + 1]]
    pi: np.ndarray
    pj: np.ndarray
    lR: np.ndarray  # R and C at each live node
    lC: np.ndarray
    lb: np.ndarray  # each live node's bound (_node_bounds) ...
    lform: np.ndarray  # ... and its form: 0 U, 1 exact rows, 2 exact columns
    lhi: np.ndarray  # their widths (step 0 of a trial) ...
    llo: np.ndarray
    lch: np.ndarray  # ... and cumulative widths, out of 2**(62 * nw)
    lcl: np.ndarray
    nw: int
    total: float  # the sum of the live nodes' bounds: per(block) <= total
    work: int
    exhausted: bool  # every live node is counted exactly (the tail): no larger frontier can do better


def _adjacency(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each row's columns (rp, rx) and each column's rows (cp, cx), in
    increasing order (compressed sparse rows and columns)."""
    m = a.shape[0]
    rows, cols = np.nonzero(a)
    rp = np.zeros(m + 1, np.int64)
    rp[1:] = np.cumsum(a.sum(axis=1))
    cp = np.zeros(m + 1, np.int64)
    cp[1:] = np.cumsum(a.sum(axis=0))
    by_col = np.lexsort((rows, cols))
    return rp, cols.astype(np.int64), cp, rows[by_col].astype(np.int64)


def _frontier_of(a: np.ndarray, G: np.ndarray, F: np.ndarray, adj: tuple, rsum0: np.ndarray, csum0: np.ndarray,
                 size: int, work_limit: int, run: tuple, exact: bool = True) -> _Frontier:
    """Build the frontier of at most `size` live nodes (docs/preference.md,
    "The frontier"), each node's bound (with `exact`, the least of its
    forms: _node_bounds, and a node whose bound is 0 has no perfect matching
    and is dropped; else U) and the widths a trial draws its node with."""
    build, paths, node_bounds = run[0], run[1], run[2]
    m = a.shape[0]
    cap = 2 * size + 2 * m + 2
    par, fi, fj, heap = (np.zeros(cap, np.int64) for _ in range(4))
    fU, fR, fC = (np.zeros(cap, np.float64) for _ in range(3))
    leaf = np.zeros(cap, np.bool_)
    scratch = (np.zeros(m, np.bool_), np.zeros(m, np.bool_), np.zeros(m, np.int64), np.zeros(m, np.int64),
               np.full(m, -1, np.int64), np.zeros(1 << TAIL, np.int64), np.zeros(m, np.int64),
               np.zeros(m, np.int64))
    n, work = build(a, G, F, *adj, rsum0, csum0, TAIL, size, work_limit, par, fi, fj, fU, fR, fC, leaf, heap,
                    *scratch)
    xi = np.zeros((14, m + EXACT_DEGREE + 2), np.int64)
    tab = np.zeros((2 * m + 2) << EXACT_GROUP, np.float64)

    def bounded(lnode):
        ptr, pi, pj = paths(par, fi, fj, lnode)
        lb = np.zeros(len(lnode), np.float64)
        lform = np.zeros(len(lnode), np.int64)
        spent = node_bounds(G, *adj, rsum0, csum0, TAIL, ptr, pi, pj, fU[lnode], EXACT_LINES if exact else 0,
                            EXACT_GROUP, EXACT_DEGREE, lb, lform, *scratch[:5], xi, tab)
        return ptr, pi, pj, lb, lform, spent

    lnode = np.flatnonzero(leaf[:n]).astype(np.int64)
    ptr, pi, pj, lb, lform, spent = bounded(lnode)
    # (fewer live nodes than `size` need not mean this: on sparse blocks the
    # node arrays may fill with inner nodes first)
    exhausted = bool((m - np.diff(ptr) <= TAIL).all())
    work += spent
    if not lb.all():  # nodes without a perfect matching: dropped
        keep = lb > 0.0
        lnode, lb, lform = lnode[keep], lb[keep], lform[keep]
        ptr, pi, pj = paths(par, fi, fj, lnode)
    total = math.fsum(lb)  # correctly rounded: the same on every machine
    ratios = lb / total  # IEEE division, element by element: as a step's w
    nw = 1 if ratios.min() >= ONE_WORD_FROM else 2
    if len(lnode) == 1 or ratios.min() < TWO_WORDS_FROM:  # one node, or the root alone: no node to draw
        if len(lnode) > 1:
            lnode = np.zeros(1, np.int64)
            ptr, pi, pj, lb, lform, spent = bounded(lnode)
            work += spent
        one = np.zeros(1, np.int64)
        return _Frontier(ptr, pi, pj, fR[lnode], fC[lnode], lb, lform, one, one, one, one, 1, float(lb[0]), work,
                         exhausted)
    # widths as a trial's step computes them (_trials), summed exactly
    y = ratios * SHRINK * TWO62
    hi = np.floor(y)
    if nw == 1:  # below 2**62 in all: int64 sums are exact
        lhi = hi.astype(np.int64)
        llo = np.zeros_like(lhi)
        lch = np.cumsum(lhi)
        lcl = np.zeros_like(lhi)
    else:
        lhi = hi.astype(np.int64)
        llo = np.floor((y - hi) * TWO62).astype(np.int64)
        cum = np.cumsum([(int(h) << WORD_BITS) + int(lo) for h, lo in zip(lhi, llo)], dtype=object)
        lch = np.array([c >> WORD_BITS for c in cum], dtype=np.int64)
        lcl = np.array([c & ((1 << WORD_BITS) - 1) for c in cum], dtype=np.int64)
    return _Frontier(ptr, pi, pj, fR[lnode], fC[lnode], lb, lform, lhi, llo, lch, lcl, nw, total, work, exhausted)


def phases(m: int) -> list[tuple[int, bool]]:
    """The phases for a block of m rows: the frontier's size (live nodes)
    and whether its nodes' bounds may be exact in some lines
    (_node_bounds). First FRONTIER_FIRST nodes bounded by U alone (most
    blocks need few trials, and the exact lines cost some 10 us a node),
    then FRONTIER_EXACT nodes with exact lines, four times more each phase
    up to FRONTIER (the Python loop, below COMPILED_FROM rows:
    FRONTIER_SMALL, exact lines)."""
    if m < COMPILED_FROM:
        return [(FRONTIER_SMALL, True)]
    out = [(FRONTIER_FIRST, False), (FRONTIER_EXACT, True)]
    while out[-1][0] < FRONTIER:
        out.append((min(FRONTIER, 4 * out[-1][0]), True))
    return out


def sample(allowed: Any, key: tuple[int, int], work_limit: int) -> Sampled:
    """One perfect matching of the square 0-1 table `allowed`, drawn exactly
    uniformly with the words of `key`. Raises TooHard past work_limit.

    In phases (phases()): each builds a frontier (the first bounded by U
    alone, then smaller with exact lines, then four times larger each
    phase), then runs trials from it for up to PHASE_TRIALS times the
    build's work (the last phase, or one whose nodes are all counted
    exactly: up to work_limit); the first accepted trial is the draw. Each
    phase's trials use words no other phase uses, and whether a phase runs
    depends only on the earlier phases' rejections, never on the matching a
    trial would give: so every accepted trial, in whichever phase, is
    uniform (docs/preference.md, "The frontier")."""
    a = np.ascontiguousarray(np.asarray(allowed, dtype=np.uint8))
    m = a.shape[0]
    if a.shape != (m, m) or m == 0:
        raise ValueError("sample() takes a non-empty square table")
    G, F = _tables(m)
    top = bound(a)
    if top == 0.0:
        raise ValueError("the table has an empty row or column: no perfect matching")
    runner = _runner(m)
    run = runner[3]
    rsum0 = a.sum(axis=1).astype(np.int64)
    csum0 = a.sum(axis=0).astype(np.int64)
    adj = _adjacency(a)
    words = _Words(key)
    match = np.full(m, -1, dtype=np.int64)
    whi = np.zeros(2 * m + 2, dtype=np.int64)  # a node, its exact lines' choices, a step a row
    wlo = np.zeros(2 * m + 2, dtype=np.int64)
    wn = np.zeros(2 * m + 2, dtype=np.int64)
    tailper = np.ones(1, dtype=np.int64)
    pos = trials = work = 0
    plan = phases(m)
    for phase, (size, exact) in enumerate(plan):
        fr = _frontier_of(a, G, F, adj, rsum0, csum0, size, max(work_limit - work, 0), runner, exact)
        work += fr.work
        last = phase == len(plan) - 1 or fr.exhausted  # no larger frontier to come
        # c / q(M) = (1 - MARGIN) * 2**bits / (total * product of widths), exactly
        scale = Fraction(1.0 - MARGIN) / Fraction(fr.total)
        log2c = math.log2(1.0 - MARGIN) - math.log2(fr.total)
        phase_end = work_limit if last else min(work_limit, work + PHASE_TRIALS * fr.work)
        phase_trials = accepted = 0
        drawn: Sampled | None = None
        while True:
            limit = phase_end - work if drawn is None else drawn.work * 5 // 4 + m**3 * 64 - work
            status, at, rejected, spent, steps = run(a, G, F, *adj, words.array, pos - words.base, max(limit, 0),
                                                     match, whi, wlo, wn, TAIL, tailper, rsum0, csum0, fr.ptr, fr.pi,
                                                     fr.pj, fr.lR, fr.lC, fr.lform, fr.lhi, fr.llo, fr.lch, fr.lcl,
                                                     fr.nw, log2c, EXACT_LINES, EXACT_GROUP, EXACT_DEGREE)
            pos = words.base + at  # the words' absolute number
            phase_trials += rejected
            work += spent
            if status == 1:
                words.more(keep_from=pos)
                continue
            if status not in (0, 4):
                if drawn is not None or status == 2:  # the estimate stops, or the phase ends
                    break
                raise TooHard(work, "precision")
            phase_trials += 1
            widths, bits = 1, 0
            for s in range(steps):
                widths *= (int(whi[s]) << WORD_BITS) + int(wlo[s]) if wn[s] == 2 else int(whi[s])
                bits += WORD_BITS * int(wn[s])
            alpha = scale * (int(tailper[0]) << bits) / widths  # the tail's draw had probability 1 / its count
            if alpha > 1:  # pragma: no cover - the margin covers every rounding (module docstring)
                raise AssertionError("sampler: proposal below its guaranteed minimum")
            if status == 4:  # the trial loop could not decide: exactly, from the same word
                ok, pos = _bernoulli(alpha, words, pos)
                if not ok:
                    continue
            accepted += 1
            if drawn is None:
                # per(block) <= the frontier's total (up to the bounds' rounding) <= U(block)
                high = min(top, fr.total * (1 + 2.0**-30))
                drawn = Sampled(tuple(int(x) for x in match), high, 0.0, trials + phase_trials, pos, work,
                                len(fr.lR), phase)
            if accepted >= ESTIMATE_ACCEPTS:
                break
        trials += phase_trials
        if drawn is not None:
            # E[accepted per trial] = c * per(block): the estimate of per(block)
            estimate = accepted / (phase_trials * float(scale))
            return Sampled(drawn.match, drawn.bound, estimate, drawn.trials, drawn.words, drawn.work,
                           drawn.frontier, drawn.phase)
        if work >= work_limit:
            break
    raise TooHard(work)
