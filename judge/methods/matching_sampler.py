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

Trial. From the whole block: compute U of the current matrix and of each
child along the chosen line (the column, or row, with the fewest ones, lowest
number first), move to child e with probability about U(child)/U(current),
or reject the trial with what is left. A trial that completes a matching M
has been proposed with probability q(M) = product of the step
probabilities, which telescopes to about 1/U(block). It is then accepted
with probability c / q(M), c = (1 - 2**-20) / U(block), computed exactly
(big integers): every matching comes out of a trial with probability q(M) *
c / q(M) = c exactly, the same for all, so the first accepted trial is
uniform. Floating point only decides the step probabilities, which are
exact dyadic numbers (integer widths over 2**62 or 2**124); its errors are
paid for by the margin 2**-20 and checked on every accepted matching (c /
q(M) > 1 raises, never biases).

Words. The trials use their own word stream: Philox4x64-10 (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", 2011; numpy.random.Philox)
keyed with two words of the judge's SHA-256 stream (docs/randomness.md);
sampler word k is the top 62 bits of output word k mod 4 of the block with
counter (k div 4 + 1, 0, 0, 0). A step whose smallest weight is at least
2**-30 uses one word, else two (124 bits); the acceptance of a completed
trial compares its probability with the next words, 62 bits at a time.

The trial loop is plain Python on numpy arrays (`_trials`), compiled with
numba for blocks of COMPILED_FROM rows or more (judge/methods/
matching_kernel.py); both give the same result, bit for bit (test).

Pure: no I/O, no clock; the work is bounded by a count of operations, never
by time.
"""

from __future__ import annotations

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


def _child(a, G, F, rsum, csum, ra, ca, i, j, R, C, m):
    """min(R, C) of the matrix without row i and column j, from the current
    R and C; 0.0 when that matrix has an empty row or column."""
    rc = R / G[rsum[i]]
    for k in range(m):
        if k != i and ra[k] and a[k, j]:
            if rsum[k] == 1:
                return 0.0
            rc *= F[rsum[k]]
    cc = C / G[csum[j]]
    for x in range(m):
        if x != j and ca[x] and a[i, x]:
            if csum[x] == 1:
                return 0.0
            cc *= F[csum[x]]
    return rc if rc <= cc else cc


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


def _trials(a, G, F, words, pos, work_limit, match, whi, wlo, wn, tail, tailper):
    """Trials from words[pos] on, until one completes, the words run out or
    work_limit is reached. Returns (status, pos, rejected, work):
    0: a trial completed: match[row] = column; step s chose the width
       whi[s] * 2**62 + wlo[s] (two words, wn[s] == 2) or whi[s] (one word)
       out of 2**(62 * wn[s]); pos is after its words;
    1: the words ran out: pos is the start of the unfinished trial;
    2: work_limit reached (checked before each trial): pos is the next trial's;
    3: a step weight below TWO_WORDS_FROM.
    rejected: trials rejected in this call; work: operations (m per child).
    With at most `tail` rows left, a trial finishes exactly: the rest is
    counted (tailper[0]) and drawn uniformly; one row before, each child's
    weight is its exact count over U (docs/preference.md)."""
    m = a.shape[0]
    n_words = words.shape[0]
    rsum = np.zeros(m, np.int64)
    csum = np.zeros(m, np.int64)
    ra = np.zeros(m, np.bool_)
    ca = np.zeros(m, np.bool_)
    cand = np.zeros(m, np.int64)
    wts = np.zeros(m, np.float64)
    f = np.zeros(1 << tail, np.int64)
    rows = np.zeros(m, np.int64)
    cols = np.zeros(m, np.int64)
    rejected = 0
    work = 0
    while True:
        if work >= work_limit:
            return 2, pos, rejected, work, 0
        start = pos
        for i in range(m):
            ra[i] = True
            ca[i] = True
            match[i] = -1
            rsum[i] = 0
            csum[i] = 0
        for i in range(m):
            for j in range(m):
                if a[i, j]:
                    rsum[i] += 1
                    csum[j] += 1
        dead = False
        tailper[0] = 1
        steps = m
        for step in range(m):
            if m - step <= tail:  # the exact tail: count the rest, draw it uniformly
                per, k = _tail_per(a, ra, ca, -1, -1, m, f, rows, cols)
                work += (1 << k) * k
                tailper[0] = per
                pos = _tail_draw(a, f, rows, cols, k, match, words, pos)
                if pos < 0:
                    return 1, start, rejected, work, 0
                steps = step
                break
            R = 1.0
            for i in range(m):
                if ra[i]:
                    R *= G[rsum[i]]
            C = 1.0
            for j in range(m):
                if ca[j]:
                    C *= G[csum[j]]
            by_column = R <= C
            U = R if by_column else C
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
            nc = 0
            wmin = 2.0
            for x in range(m):
                if by_column:
                    i, j = x, line
                    if not ra[i]:
                        continue
                else:
                    i, j = line, x
                    if not ca[j]:
                        continue
                if not a[i, j]:
                    continue
                if m - step - 1 == tail:  # children in the tail: their exact count
                    per, k = _tail_per(a, ra, ca, i, j, m, f, rows, cols)
                    w = per / U
                    work += (1 << k) * k
                else:
                    w = _child(a, G, F, rsum, csum, ra, ca, i, j, R, C, m) / U
                work += m
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
                    chosen = cand[t]
                    break
            if chosen < 0:  # the draw fell in the rejected rest
                dead = True
                break
            whi[step] = hi
            wlo[step] = lo
            wn[step] = nw
            if by_column:
                i, j = chosen, line
            else:
                i, j = line, chosen
            match[i] = j
            ra[i] = False
            ca[j] = False
            for k in range(m):
                if ra[k] and a[k, j]:
                    rsum[k] -= 1
            for x in range(m):
                if ca[x] and a[i, x]:
                    csum[x] -= 1
        if dead:
            rejected += 1
            continue
        return 0, pos, rejected, work, steps


_COMPILED: list = []


def _runner(m: int):
    """The compiled trial loop for big blocks (numba loaded on first need),
    else the Python one."""
    if m < COMPILED_FROM and not _COMPILED:
        return _trials
    if not _COMPILED:
        try:
            from judge.methods.matching_kernel import trials as compiled
        except ImportError:  # pragma: no cover - numba is a dependency
            compiled = _trials
        _COMPILED.append(compiled)
    return _COMPILED[0]


# --------------------------------------------------------------------------
# Words and the exact acceptance
# --------------------------------------------------------------------------


class _Words:
    """Sampler words (module docstring): top 62 bits of Philox4x64-10."""

    def __init__(self, key: tuple[int, int]) -> None:
        self._gen = np.random.Philox(key=np.array(key, dtype=np.uint64))
        self.array = np.zeros(0, dtype=np.int64)
        self.more(1024)

    def more(self, at_least: int = 0) -> None:
        n = max(at_least, 2 * len(self.array), 1024)
        new = (self._gen.random_raw(n) >> np.uint64(2)).astype(np.int64)
        self.array = np.concatenate((self.array, new))

    def word(self, pos: int) -> int:
        while pos >= len(self.array):
            self.more()
        return int(self.array[pos])


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


def sample(allowed: Any, key: tuple[int, int], work_limit: int) -> Sampled:
    """One perfect matching of the square 0-1 table `allowed`, drawn exactly
    uniformly with the words of `key`. Raises TooHard past work_limit."""
    a = np.ascontiguousarray(np.asarray(allowed, dtype=np.uint8))
    m = a.shape[0]
    if a.shape != (m, m) or m == 0:
        raise ValueError("sample() takes a non-empty square table")
    G, F = _tables(m)
    top = bound(a)
    if top == 0.0:
        raise ValueError("the table has an empty row or column: no perfect matching")
    run = _runner(m)
    words = _Words(key)
    match = np.full(m, -1, dtype=np.int64)
    whi = np.zeros(m, dtype=np.int64)
    wlo = np.zeros(m, dtype=np.int64)
    wn = np.zeros(m, dtype=np.int64)
    tailper = np.ones(1, dtype=np.int64)
    # c / q(M) = (1 - MARGIN) * 2**bits / (U * product of widths), exactly
    scale = Fraction(1.0 - MARGIN) / Fraction(top)
    pos = trials = work = accepted = 0
    drawn: Sampled | None = None
    while True:
        limit = work_limit - work if drawn is None else drawn.work * 5 // 4 + m**3 * 64 - work
        status, pos, rejected, spent, steps = run(a, G, F, words.array, pos, max(limit, 0), match, whi, wlo, wn,
                                                  TAIL, tailper)
        trials += rejected
        work += spent
        if status == 1:
            words.more()
            continue
        if status != 0:
            if drawn is not None:  # the estimate stops; the draw stands
                break
            raise TooHard(work, "work" if status == 2 else "precision")
        trials += 1
        widths, bits = 1, 0
        for s in range(steps):
            widths *= (int(whi[s]) << WORD_BITS) + int(wlo[s]) if wn[s] == 2 else int(whi[s])
            bits += WORD_BITS * int(wn[s])
        alpha = scale * (int(tailper[0]) << bits) / widths  # the tail's draw had probability 1 / its count
        if alpha > 1:  # pragma: no cover - the margin covers every rounding (module docstring)
            raise AssertionError("sampler: proposal below its guaranteed minimum")
        ok, pos = _bernoulli(alpha, words, pos)
        if not ok:
            continue
        accepted += 1
        if drawn is None:
            drawn = Sampled(tuple(int(x) for x in match), top, 0.0, trials, pos, work)
        if accepted >= ESTIMATE_ACCEPTS:
            break
    # E[accepted per trial] = c * per(block): the estimate of per(block)
    estimate = accepted / (trials * float(scale))
    return Sampled(drawn.match, top, estimate, drawn.trials, drawn.words, drawn.work)
