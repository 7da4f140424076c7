"""How a trial of the exact sampler (judge/methods/preference/solver/
sampler.py) moves, and the frontier builder with it: the state it carries
(the rows and columns left, their line sums, R and C), a step's choice
among weighted options drawn from 62-bit words, and the exact tail (the
last rows counted and drawn by a subset DP). Plain Python on numpy arrays,
compiled as is by sampler_kernel.py, which compiles the values of the
constants below that they read into its machine code."""

from __future__ import annotations

SHRINK = 1.0 - 2.0**-36  # step widths are floor(w * SHRINK * 2**62 per word)
ONE_WORD_FROM = 2.0**-30  # a step with a smaller weight draws 124 bits
TWO_WORDS_FROM = 2.0**-90  # below this a step would be too coarse: refused
TWO62 = float(1 << 62)
WORD_BITS = 62


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
