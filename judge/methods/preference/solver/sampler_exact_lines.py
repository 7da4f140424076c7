"""The bound at a frontier node with some of its sparsest lines counted
exactly (docs/preference.md, "The bound at a frontier node"): the DP over
each group of such lines that gives the bound, the draw of how those lines
are matched that a trial from the node starts with, and each live node's
least bound. Compiled as is by sampler_kernel.py."""

from __future__ import annotations

from judge.methods.preference.solver.sampler_steps import ONE_WORD_FROM, TWO_WORDS_FROM, _path_state, _pick


def _find(uf, x):
    """The root of x's group (union-find, no path compression: groups stay
    small)."""
    while uf[x] != x:
        x = uf[x]
    return x


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
