"""One perfect matching of a 0-1 block, drawn exactly uniformly, without counting.

The solver (judge/methods/preference/solver/assignment.py) counts a block's co-optimal
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
(judge/methods/preference/solver/sampler_kernel.py); both give the same result, bit for bit
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

from judge.methods.preference.solver import compiled
from judge.methods.preference.solver.sampler_exact_lines import _node_bounds
from judge.methods.preference.solver.sampler_frontier import _frontier, _paths
from judge.methods.preference.solver.sampler_steps import ONE_WORD_FROM, SHRINK, TWO62, TWO_WORDS_FROM, WORD_BITS
from judge.methods.preference.solver.sampler_trials import _trials
from judge.methods.preference.solver.sampler_words import _bernoulli, _Words

MARGIN = 2.0**-20  # c = (1 - MARGIN) / U(block): pays for rounding (see above)
# Rows from which the compiled trial loop is worth loading (as for the
# tight-pair kernel: judge/methods/preference/solver/linear_assignment.py,
# COMPILED_FROM).
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


_COMPILED: list = []


def _runner(m: int):
    """(frontier builder, path writer, node bounds, trial loop): compiled for
    big blocks (numba loaded on first need, where
    judge/methods/preference/solver/compiled.py allows), else the Python
    ones; the same results either way."""
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
    from judge.methods.preference.solver.sampler_kernel import frontier, node_bounds, paths, trials

    return frontier, paths, node_bounds, trials


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
