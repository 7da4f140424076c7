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

Trial. Draw a live node with probability about U(node)/B, then from it:
along the chosen line (the column, or row, with the fewest ones, lowest
number first; a column when R <= C), move to child e with probability
about U(child)/U(current), or reject the trial with what is left. A trial
that completes a matching M has been proposed with probability q(M) =
product of the step probabilities, which telescopes to about 1/B. It is
then accepted with probability c / q(M), c = (1 - 2**-20) / B, computed
exactly (big integers, or on its first word in floating point when that
word is surely apart from c / q(M)): every matching comes out of a trial
with probability q(M) * c / q(M) = c exactly, the same for all, so the
first accepted trial is uniform. Floating point only decides the step
probabilities, which are exact dyadic numbers (integer widths over 2**62
or 2**124); its errors are paid for by the margin 2**-20 and checked on
every accepted matching (c / q(M) > 1 raises, never biases).

Phases. A bigger frontier costs more to build and saves trials: the sampler
builds one of FRONTIER_FIRST live nodes, runs trials for PHASE_TRIALS times
its work, and while none is accepted builds one four times larger (up to
FRONTIER) and goes on with new words. Whether a phase runs depends only on
earlier rejections, never on the matching a trial would give, so the
first accepted trial of any phase is uniform.

Words. The trials use their own word stream: Philox4x64-10 (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", 2011; numpy.random.Philox)
keyed with two words of the judge's SHA-256 stream (docs/randomness.md);
sampler word k is the top 62 bits of output word k mod 4 of the block with
counter (k div 4 + 1, 0, 0, 0). A step whose smallest weight is at least
2**-30 uses one word, else two (124 bits); the acceptance of a completed
trial compares its probability with the next words, 62 bits at a time.

The frontier builder and the trial loop are plain Python on numpy arrays
(`_frontier`, `_trials`), compiled with numba for blocks of COMPILED_FROM
rows or more (judge/methods/matching_kernel.py); both give the same result,
bit for bit (test).

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
FRONTIER = 1 << 16
FRONTIER_SMALL = 16
# A phase runs trials for up to this many times its frontier's work before
# the next phase builds a frontier four times larger.
PHASE_TRIALS = 4

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


def _trials(a, G, F, rp, rx, cp, cx, words, pos, work_limit, match, whi, wlo, wn, tail, tailper,
            rsum0, csum0, ptr, pi, pj, lR, lC, lhi, llo, lch, lcl, fnw, log2c):
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
    drawn. Each step then moves along the node's line to
    child e with probability about U(e) / U(node), R and C carried from
    node to child. With at most `tail` rows left, a trial finishes exactly:
    the rest is counted (tailper[0]) and drawn uniformly; one row before,
    each child's weight is its exact count over U (docs/preference.md)."""
    m = a.shape[0]
    n_words = words.shape[0]
    n_live = lR.shape[0]
    rsum = np.zeros(m, np.int64)
    csum = np.zeros(m, np.int64)
    ra = np.zeros(m, np.bool_)
    ca = np.zeros(m, np.bool_)
    cand = np.zeros(m, np.int64)
    wts = np.zeros(m, np.float64)
    kr = np.zeros(m, np.float64)
    kc = np.zeros(m, np.float64)
    f = np.zeros(1 << tail, np.int64)
    rows = np.zeros(m, np.int64)
    cols = np.zeros(m, np.int64)
    rejected = 0
    work = 0
    while True:
        if work >= work_limit:
            return 2, pos, rejected, work, 0
        start = pos
        leaf = 0
        s0 = 0
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
            s0 = 1
        _reset(rsum0, csum0, ra, ca, rsum, csum, match, m)
        for t in range(ptr[leaf], ptr[leaf + 1]):
            _fix(pi[t], pj[t], match, ra, ca, rsum, csum, rp, rx, cp, cx)
        depth = ptr[leaf + 1] - ptr[leaf]
        work += m * 2
        R = lR[leaf]
        C = lC[leaf]
        dead = False
        tailper[0] = 1
        steps = s0 + m - depth
        for step in range(depth, m):
            if m - step <= tail:  # the exact tail: count the rest, draw it uniformly
                per, k = _tail_per(a, ra, ca, -1, -1, m, f, rows, cols)
                work += (1 << k) * k
                tailper[0] = per
                pos = _tail_draw(a, f, rows, cols, k, match, words, pos)
                if pos < 0:
                    return 1, start, rejected, work, 0
                steps = s0 + step - depth
                break
            by_column = R <= C
            U = R if by_column else C
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
            chosen = -1
            ch = 0
            cl = 0
            hi = 0
            lo = 0
            for t in range(nc):
                w = wts[t]
                if w <= 0.0:
                    continue
                y = w * SHRINK * TWO62
                hi = int(y)
                lo = int((y - hi) * TWO62) if nw == 2 else 0
                ch += hi
                cl += lo
                if cl >= 4611686018427387904:  # 2**62: carry
                    cl -= 4611686018427387904
                    ch += 1
                if xh < ch or (xh == ch and xl < cl):
                    chosen = t
                    break
            if chosen < 0:  # the draw fell in the rejected rest
                dead = True
                break
            whi[s0 + step - depth] = hi
            wlo[s0 + step - depth] = lo
            wn[s0 + step - depth] = nw
            if by_column:
                i, j = cand[chosen], line
            else:
                i, j = line, cand[chosen]
            R = kr[chosen]
            C = kc[chosen]
            _fix(i, j, match, ra, ca, rsum, csum, rp, rx, cp, cx)
        if dead:
            rejected += 1
            continue
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
    """(frontier builder, path writer, trial loop): compiled for big blocks
    (numba loaded on first need), else the Python ones."""
    if m < COMPILED_FROM and not _COMPILED:
        return _frontier, _paths, _trials
    if not _COMPILED:
        try:
            from judge.methods.matching_kernel import frontier, paths, trials
        except ImportError:  # pragma: no cover - numba is a dependency
            frontier, paths, trials = _frontier, _paths, _trials
        _COMPILED.append((frontier, paths, trials))
    return _COMPILED[0]


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
    lhi: np.ndarray  # their widths (step 0 of a trial) ...
    llo: np.ndarray
    lch: np.ndarray  # ... and cumulative widths, out of 2**(62 * nw)
    lcl: np.ndarray
    nw: int
    total: float  # the sum of the live nodes' bounds: per(block) <= total
    work: int


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
                 size: int, work_limit: int, build, paths) -> _Frontier:
    """Build the frontier of at most `size` live nodes (docs/preference.md,
    "The frontier") and the widths a trial draws its node with."""
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
    live = np.flatnonzero(leaf[:n])
    bounds = fU[live]
    total = math.fsum(bounds)  # correctly rounded: the same on every machine
    ratios = bounds / total  # IEEE division, element by element: as a step's w
    nw = 1 if ratios.min() >= ONE_WORD_FROM else 2
    if len(live) == 1 or ratios.min() < TWO_WORDS_FROM:  # the root alone: no node to draw
        root = np.zeros(1, np.int64)
        none = np.zeros(0, np.int32)
        return _Frontier(np.zeros(2, np.int64), none, none, fR[:1], fC[:1], root, root, root, root, 1,
                         float(fU[0]), work)
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
    lnode = live.astype(np.int64)
    ptr, pi, pj = paths(par, fi, fj, lnode)
    return _Frontier(ptr, pi, pj, fR[lnode], fC[lnode], lhi, llo, lch, lcl, nw, total, work)


def frontier_sizes(m: int) -> list[int]:
    """The frontier's sizes (live nodes), phase by phase, for a block of m
    rows: FRONTIER_FIRST, four times more each phase, up to FRONTIER (the
    Python loop, below COMPILED_FROM rows: FRONTIER_SMALL alone)."""
    if m < COMPILED_FROM:
        return [FRONTIER_SMALL]
    sizes = [FRONTIER_FIRST]
    while sizes[-1] < FRONTIER:
        sizes.append(min(FRONTIER, 4 * sizes[-1]))
    return sizes


def sample(allowed: Any, key: tuple[int, int], work_limit: int) -> Sampled:
    """One perfect matching of the square 0-1 table `allowed`, drawn exactly
    uniformly with the words of `key`. Raises TooHard past work_limit.

    In phases: each builds a frontier (four times larger than the last),
    then runs trials from it for up to PHASE_TRIALS times the build's work
    (the last phase: up to work_limit); the first accepted trial is the
    draw. Each phase's trials use words no other phase uses, and whether a
    phase runs depends only on the earlier phases' rejections, never on the
    matching a trial would give: so every accepted trial, in whichever
    phase, is uniform (docs/preference.md, "The frontier")."""
    a = np.ascontiguousarray(np.asarray(allowed, dtype=np.uint8))
    m = a.shape[0]
    if a.shape != (m, m) or m == 0:
        raise ValueError("sample() takes a non-empty square table")
    G, F = _tables(m)
    top = bound(a)
    if top == 0.0:
        raise ValueError("the table has an empty row or column: no perfect matching")
    build, paths, run = _runner(m)
    rsum0 = a.sum(axis=1).astype(np.int64)
    csum0 = a.sum(axis=0).astype(np.int64)
    adj = _adjacency(a)
    words = _Words(key)
    match = np.full(m, -1, dtype=np.int64)
    whi = np.zeros(m + 1, dtype=np.int64)
    wlo = np.zeros(m + 1, dtype=np.int64)
    wn = np.zeros(m + 1, dtype=np.int64)
    tailper = np.ones(1, dtype=np.int64)
    pos = trials = work = 0
    sizes = frontier_sizes(m)
    for phase, size in enumerate(sizes):
        fr = _frontier_of(a, G, F, adj, rsum0, csum0, size, max(work_limit - work, 0), build, paths)
        work += fr.work
        last = phase == len(sizes) - 1 or len(fr.lR) < size  # no larger frontier to come
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
                                                     fr.pj, fr.lR, fr.lC, fr.lhi, fr.llo, fr.lch, fr.lcl, fr.nw,
                                                     log2c)
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
                                len(fr.lR))
            if accepted >= ESTIMATE_ACCEPTS:
                break
        trials += phase_trials
        if drawn is not None:
            # E[accepted per trial] = c * per(block): the estimate of per(block)
            estimate = accepted / (phase_trials * float(scale))
            return Sampled(drawn.match, drawn.bound, estimate, drawn.trials, drawn.words, drawn.work,
                           drawn.frontier)
        if work >= work_limit:
            break
    raise TooHard(work)
