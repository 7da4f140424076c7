"""The solver's hot loop, compiled: one optimal assignment with its dual
potentials, the tight moves and their strongly connected components, in
one call.

The solver's modules have the same computation without a JIT
(scipy's linear_sum_assignment, or its small-table Hungarian, then
potentials by Bellman-Ford in numpy and Tarjan in Python:
`_lsa` and `_tight_components_py`). The potentials differ (these are the
assignment's own duals, those the shortest distances of the moves), so the
tight moves may differ on pairs that are in no optimal assignment; the
blocks, and every table the solver counts or samples, are the same
(docs/preference.md, "How the best assignments are found and drawn"; the
tests check it). This one takes some 9 us at 36 powers, against 17 us
for scipy's linear_sum_assignment alone. Loaded only where the compiled
kernels may be (judge/methods/preference/solver/compiled.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_INF = np.int64(1) << np.int64(62)


@njit(cache=True)
def _assign(c):  # pragma: no cover - compiled; checked against scipy and the Python path
    """One minimum-cost assignment of the square table c (integers >= 0,
    below 2**53) and its dual potentials, in exact integers: the shortest
    augmenting path method of scipy's linear_sum_assignment (Crouse, "On
    implementing 2D rectangular assignment algorithms", 2016), started from
    the columns' minima (each column's first lowest row). Returns
    (col4row, u, v): c[i, j] - u[i] - v[j] >= 0 everywhere, 0 on every
    (i, col4row[i])."""
    n = c.shape[0]
    u = np.zeros(n, np.int64)
    v = np.empty(n, np.int64)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(n, -1, np.int64)
    at = np.zeros(n, np.int64)
    # Row by row, each column's running minimum as selects (no branch on
    # the costs: the loop is vectorised, where a column's scan down the
    # rows mispredicted).
    for j in range(n):
        v[j] = c[0, j]
    for i in range(1, n):
        for j in range(n):
            x = c[i, j]
            lower = x < v[j]
            v[j] = x if lower else v[j]
            at[j] = i if lower else at[j]
    for j in range(n):  # a column goes to its row when that row is free
        if col4row[at[j]] == -1:
            col4row[at[j]] = j
            row4col[j] = at[j]
    none = np.zeros(n, np.bool_)
    _augment(c, u, v, col4row, row4col, none, none)
    return col4row, u, v


@njit(cache=True)
def _augment(c, u, v, col4row, row4col, out_row, out_col):  # pragma: no cover - compiled
    """_assign's shortest augmenting paths: from potentials u, v feasible
    for c (c - u - v >= 0) and a matching col4row / row4col of cells at
    reduced cost 0, every free row matched (all updated in place). The
    rows and columns marked in out_row and out_col are taken out of the
    table (none matched: a row is never searched from, a column never
    reached), as if c were the table without them.

    Each step of the search relaxes every column from the row just reached
    and takes the nearest column not yet reached (a free one first among
    the nearest), as scipy's does; but it runs over all n columns in
    order, with selects where scipy's skips the reached ones and branches
    on each comparison: the costs' comparisons are what a CPU cannot
    predict, and these loops vectorise (a reached column is never
    relaxed: its distance is at most the search's, the new ones at least).
    At 36 powers this takes half of the time scipy's loop took on the
    round's tables. Which optimum and potentials come out does not change
    the result (assignment.py)."""
    n = c.shape[0]
    path = np.empty(n, np.int64)
    shortest = np.empty(n, np.int64)
    seen_row = np.zeros(n, np.bool_)
    reached = np.zeros(n, np.bool_)
    key = np.empty(n, np.int64)
    for cur in range(n):
        if col4row[cur] != -1 or out_row[cur]:
            continue
        for x in range(n):
            seen_row[x] = False
            reached[x] = out_col[x]  # (a column taken out: as if reached, never taken)
            shortest[x] = _INF
        minval = np.int64(0)
        i = cur
        sink = -1
        while sink == -1:  # Dijkstra over the columns, in reduced costs
            seen_row[i] = True
            base = u[i] - minval
            for j in range(n):
                r = c[i, j] - base - v[j]
                sj = shortest[j]
                shorter = r < sj
                shortest[j] = r if shorter else sj
                path[j] = i if shorter else path[j]
            # the nearest column not reached, a free one before a taken one
            # (every distance is finite here and below 2**56: twice it fits)
            lowest = _INF
            for j in range(n):
                k = _INF if reached[j] else 2 * shortest[j] + (row4col[j] >= 0)
                key[j] = k
                lowest = min(lowest, k)
            j = 0
            while key[j] != lowest:
                j += 1
            minval = shortest[j]
            reached[j] = True
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
        seen_row[cur] = False
        for i in range(n):  # (a row not seen adds 0; its column may be -1, read but not used)
            d = minval - shortest[col4row[i]]
            u[i] += d if seen_row[i] else 0
        u[cur] += minval
        for j in range(n):
            d = minval - shortest[j]
            v[j] -= d if reached[j] and not out_col[j] else 0
        j = sink
        while True:  # augment along the path back to cur
            i = path[j]
            row4col[j] = i
            k = col4row[i]
            col4row[i] = j
            j = k
            if i == cur:
                break


@njit(cache=True)
def assign(c):  # pragma: no cover - compiled
    """One minimum-cost assignment of c: col4row, and its cost."""
    col4row, _, _ = _assign(c)
    cost = np.int64(0)
    for i in range(c.shape[0]):
        cost += c[i, col4row[i]]
    return col4row, cost


# Status of the cost builders below: the faults costs.py names, in
# the order it names them.
OK, NEGATIVE, NOT_01, TOO_LARGE = 0, 1, 2, 3


@njit(cache=True)
def _costs(w, bonus, keep_rows, keep_cols, marked=False):  # pragma: no cover - compiled
    """costs._costs of the weights w (only the rows and columns
    with keep_rows and keep_cols) and, if it is not empty, the bonus table
    (w's shape): (status, c, n, K, maxw, M), status as above (c is then
    unusable). The scale is checked in exact integers, as _scale does.
    `marked` with an empty bonus table: the costs of a bonus table of 0s,
    from which the caller takes 1 at each of its bonus cells (a table of
    a few cells not written out)."""
    p, q = w.shape
    rows = np.empty(p, np.int64)
    cols = np.empty(q, np.int64)
    pp = 0
    for i in range(p):
        if keep_rows[i]:
            rows[pp] = i
            pp += 1
    qq = 0
    for j in range(q):
        if keep_cols[j]:
            cols[qq] = j
            qq += 1
    n = max(pp, qq)
    c = np.empty((n, n), np.int64)
    maxw = np.int64(1)
    # The checks as reductions (a minimum, an or), the costs row by row
    # with the padding apart: no branch per cell, and the loops vectorise.
    low = np.int64(0)
    for i in range(p):
        for j in range(q):
            low = min(low, w[i, j])
    if low < 0:
        return NEGATIVE, c, n, np.int64(0), maxw, np.int64(1)
    M = np.int64(n + 1 if marked else 1)
    if bonus.size:
        M = n + 1
        other = np.int64(0)  # a bit other than the last one: not 0 or 1
        for i in range(p):
            for j in range(q):
                other |= bonus[i, j] & ~np.int64(1)
        if other:
            return NOT_01, c, n, np.int64(0), maxw, M
    if pp == p and qq == q:  # (the whole table, as a round's: read in place, no index to follow)
        for i in range(p):
            for j in range(q):
                maxw = max(maxw, w[i, j])
    else:
        for x in range(pp):
            i = rows[x]
            for y in range(qq):
                maxw = max(maxw, w[i, cols[y]])
    # M * n * K * maxw + n < 2**53 (every cost exact in a float64: scipy's
    # domain), first roughly in floating point, then exactly in int64.
    if float(M) * n * (n * float(maxw) * maxw + 1) * maxw + n >= 2.0 ** 62:
        return TOO_LARGE, c, n, np.int64(0), maxw, M
    K = n * maxw * maxw + 1
    if M * n * K * maxw + n >= np.int64(1) << np.int64(53):
        return TOO_LARGE, c, n, K, maxw, M
    dummy = K * maxw * M + (1 if M > 1 else 0)
    whole = qq == q
    table = bonus.size > 0
    for x in range(n):
        if x < pp:
            i = rows[x]
            if whole:
                for y in range(qq):
                    v = w[i, y]
                    c[x, y] = K * (maxw - v) + v * v
                if table:
                    for y in range(qq):
                        c[x, y] = c[x, y] * M + 1 - bonus[i, y]
            else:
                for y in range(qq):
                    v = w[i, cols[y]]
                    c[x, y] = K * (maxw - v) + v * v
                if table:
                    for y in range(qq):
                        c[x, y] = c[x, y] * M + 1 - bonus[i, cols[y]]
            if M > 1 and not table:  # (marked)
                for y in range(qq):
                    c[x, y] = c[x, y] * M + 1
            for y in range(qq, n):
                c[x, y] = dummy
        else:
            for y in range(n):
                c[x, y] = dummy
    return OK, c, n, K, maxw, M


@njit(cache=True)
def _decode(cost, n, K, maxw, M):  # pragma: no cover - compiled
    """costs._decode: (total, sum of squares, bonus cells taken)."""
    base = cost // M
    missed = cost % M
    return n * maxw - base // K, base % K, (n - missed if M > 1 else 0)


@njit(cache=True)
def optimum(w, keep_rows, keep_cols):  # pragma: no cover - compiled
    """(status, total, sum of squares) of an optimal assignment of the
    weights w restricted to keep_rows and keep_cols, no bonus
    (assignment.optimum)."""
    status, c, n, K, maxw, M = _costs(w, np.zeros((0, 0), np.int64), keep_rows, keep_cols)
    if status:
        return status, np.int64(0), np.int64(0)
    total, squares, _ = _decode(assign(c)[1], n, K, maxw, M)
    return OK, total, squares


@njit(cache=True)
def analyse(w, bonus):  # pragma: no cover - compiled
    """tight_graph._analyse of the weights w and the bonus table (or
    an empty one): (status, sigma, total, squares, taken, rows, cols, starts,
    allowed), the optimum decoded and its blocks as _blocks packs them."""
    keep_rows = np.ones(w.shape[0], np.bool_)
    keep_cols = np.ones(w.shape[1], np.bool_)
    status, c, n, K, maxw, M = _costs(w, bonus, keep_rows, keep_cols)
    if status:
        none = np.zeros(0, np.int64)
        return status, none, np.int64(0), np.int64(0), np.int64(0), none, none, none, np.zeros(0, np.bool_)
    sigma, cost, tight, label = optimum_moves(c)
    total, squares, taken = _decode(cost, n, K, maxw, M)
    rows, cols, starts, allowed = _blocks(sigma, tight, label)
    return OK, sigma, total, squares, taken, rows, cols, starts, allowed


@njit(cache=True)
def _blocks(sigma, tight, label):  # pragma: no cover - compiled
    """The components of more than one player, packed: block b holds the
    players rows[starts[b]:starts[b + 1]] (increasing) and the powers cols[...]
    (their sigma, increasing); blocks in the order of their lowest player;
    allowed, each block's m x m tight pairs in turn (player x, power y: x may
    take y), flattened."""
    n = sigma.shape[0]
    size = np.zeros(n, np.int64)
    for i in range(n):
        size[label[i]] += 1
    block = np.full(n, -1, np.int64)  # a label's block number
    count = np.zeros(n + 1, np.int64)
    nb = 0
    for i in range(n):
        x = label[i]
        if size[x] > 1:
            if block[x] < 0:
                block[x] = nb
                nb += 1
            count[block[x] + 1] += 1
    starts = np.zeros(nb + 1, np.int64)
    for b in range(nb):
        starts[b + 1] = starts[b] + count[b + 1]
    rows = np.empty(starts[nb], np.int64)
    fill = starts[:nb].copy()
    for i in range(n):
        x = label[i]
        if size[x] > 1:
            rows[fill[block[x]]] = i
            fill[block[x]] += 1
    holder = np.empty(n, np.int64)
    for i in range(n):
        holder[sigma[i]] = i
    cols = np.empty(starts[nb], np.int64)
    cells = 0
    for b in range(nb):
        m = starts[b + 1] - starts[b]
        cells += m * m
        for x in range(starts[b], starts[b + 1]):
            cols[x] = sigma[rows[x]]
        cols[starts[b]:starts[b + 1]] = np.sort(cols[starts[b]:starts[b + 1]])
    allowed = np.empty(cells, np.bool_)
    k = 0
    for b in range(nb):
        for x in range(starts[b], starts[b + 1]):
            for y in range(starts[b], starts[b + 1]):
                allowed[k] = tight[rows[x], holder[cols[y]]]
                k += 1
    return rows, cols, starts, allowed


@njit(cache=True)
def optimum_moves(c):  # pragma: no cover - compiled; checked against the Python path
    """(sigma, cost, tight, label): sigma[i] player i's power in one
    minimum-cost assignment of c and its cost; tight[i, k] when player i may
    take player k's power at reduced cost 0 (the diagonal always); label[i]
    the strongly connected component of player i in the graph of tight
    moves."""
    sigma, u, v = _assign(c)
    cost, tight, label = _moves(c, sigma, u, v)
    return sigma, cost, tight, label


@njit(cache=True)
def _moves(c, sigma, u, v):  # pragma: no cover - compiled
    """optimum_moves' (cost, tight, label) of the optimal assignment sigma
    of c under its potentials u, v."""
    n = c.shape[0]
    cost = np.int64(0)
    for i in range(n):
        cost += c[i, sigma[i]]
    tight = np.empty((n, n), np.bool_)
    for i in range(n):
        ui = u[i]
        for k in range(n):
            j = sigma[k]
            tight[i, k] = c[i, j] - ui - v[j] == 0
    return cost, tight, _components(tight)


@njit(cache=True)
def _components(tight):  # pragma: no cover - compiled
    """Tarjan's strongly connected components of the moves (iterative)."""
    n = tight.shape[0]
    index = -np.ones(n, np.int64)
    low = np.zeros(n, np.int64)
    on_stack = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int64)
    sp = 0
    label = -np.ones(n, np.int64)
    counter = 0
    components = 0
    node = np.empty(n, np.int64)
    edge = np.empty(n, np.int64)
    for root in range(n):
        if index[root] >= 0:
            continue
        top = 0
        node[0] = root
        edge[0] = 0
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on_stack[root] = True
        while top >= 0:
            u = node[top]
            e = edge[top]
            advanced = False
            while e < n:
                w = e
                e += 1
                if w == u or not tight[u, w]:
                    continue
                if index[w] < 0:
                    edge[top] = e
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    on_stack[w] = True
                    top += 1
                    node[top] = w
                    edge[top] = 0
                    advanced = True
                    break
                elif on_stack[w]:
                    if index[w] < low[u]:
                        low[u] = index[w]
            if advanced:
                continue
            edge[top] = e
            if low[u] == index[u]:
                while True:
                    sp -= 1
                    w = stack[sp]
                    on_stack[w] = False
                    label[w] = components
                    if w == u:
                        break
                components += 1
            top -= 1
            if top >= 0:
                parent = node[top]
                if low[u] < low[parent]:
                    low[parent] = low[u]
    return label


@njit(cache=True)
def uncontested(w, floor):  # pragma: no cover - compiled; checked against the numpy version
    """The preference method's uncontested first choices (its
    `_uncontested`): row i's first group is the columns of its highest
    value, when that value is above floor[i]; (rows, columns) of the rows
    whose group is one column in no other row's group, in row order."""
    p, q = w.shape
    first = np.full(p, -1, np.int64)  # the single column of a row's group, -2 for a group of several
    claims = np.zeros(q, np.int64)
    for i in range(p):
        # (max and sums, not a branch per value: these loops vectorise)
        top = w[i, 0]
        for j in range(1, q):
            top = max(top, w[i, j])
        if top <= floor[i]:
            continue
        hits = 0
        for j in range(q):
            hit = w[i, j] == top
            claims[j] += hit
            hits += hit
        if hits > 1:
            first[i] = -2
        else:
            j = 0
            while w[i, j] != top:
                j += 1
            first[i] = j
    rows = np.empty(p, np.int64)
    cols = np.empty(p, np.int64)
    k = 0
    for i in range(p):
        if first[i] >= 0 and claims[first[i]] == 1:
            rows[k] = i
            cols[k] = first[i]
            k += 1
    return rows[:k], cols[:k]


@njit(cache=True)
def preference_round(w, floor):  # pragma: no cover - compiled; checked against the calls it joins
    """A preference round by default (judge/methods/preference/engine.py),
    in one call: `uncontested(w, floor)`, `analyse` of w with those cells
    as the bonus table (an empty one when there are none), and, when the
    optimum does not give every uncontested first choice (fewer bonus
    cells taken than there are), what `optimum` of w without their rows
    and columns gives (the seed's literal step's rest: the shortcut's
    comparison). Returns uncontested's (rows, cols), analyse's nine
    values, then (compared, status, total, squares) of that optimum
    (compared False: not needed; total and squares 0 where no row or no
    column is left), then what the round reads of the weights: each row's
    weight on its power in the optimum found (0 on a dummy), and the sum
    and the sum of squares of the uncontested cells' weights.

    That optimum is found from the round's own: the same costs without
    the rows and columns (each cost being the weight's, the best total
    comes first, the least squares next, whatever the table's size: see
    costs.py), the round's potentials (still feasible there) and its
    assignment where it kept its power, so that only the players whose
    power was taken out look for another (_augment). Its total and squares
    are those of `optimum` (unique; tests)."""
    uc_rows, uc_cols = uncontested(w, floor)
    nu = uc_rows.shape[0]
    p, q = w.shape
    # analyse(w, bonus), keeping the costs and the potentials; the bonus
    # table's cells taken off the costs of a table of 0s
    status, c, n, K, maxw, M = _costs(w, np.zeros((0, 0), np.int64), np.ones(p, np.bool_), np.ones(q, np.bool_),
                                      nu > 0)
    none = np.zeros(0, np.int64)
    if not status:
        for k in range(nu):
            c[uc_rows[k], uc_cols[k]] -= 1
    if status:
        return (uc_rows, uc_cols, status, none, np.int64(0), np.int64(0), np.int64(0), none, none, none,
                np.zeros(0, np.bool_), False, OK, np.int64(0), np.int64(0), none, np.int64(0), np.int64(0))
    sigma, u, v = _assign(c)
    cost, tight, label = _moves(c, sigma, u, v)
    total, squares, taken = _decode(cost, n, K, maxw, M)
    rows, cols, starts, allowed = _blocks(sigma, tight, label)
    compared = False
    cmp_total, cmp_squares = np.int64(0), np.int64(0)
    if nu and taken < nu:
        compared = True
        if nu < p and nu < q:
            # The round's own costs, potentials and assignment, with the
            # first choices' rows and columns taken out (_augment's masks:
            # no smaller table copied), every row that held one of them free.
            out_row = np.zeros(n, np.bool_)
            out_col = np.zeros(n, np.bool_)
            for k in range(nu):
                out_row[uc_rows[k]] = True
                out_col[uc_cols[k]] = True
            col4row = sigma.copy()
            row4col = np.empty(n, np.int64)
            for i in range(n):
                row4col[sigma[i]] = i
            for i in range(n):
                if out_row[i] or out_col[sigma[i]]:
                    row4col[sigma[i]] = -1
                    col4row[i] = -1
            u2 = u.copy()
            v2 = v.copy()
            _augment(c, u2, v2, col4row, row4col, out_row, out_col)
            m = n - nu
            cost2 = np.int64(0)
            for i in range(n):
                if not out_row[i]:
                    cost2 += c[i, col4row[i]]
            cmp_total, cmp_squares, _ = _decode(cost2, m, K, maxw, M)
    values = np.zeros(p, np.int64)
    for i in range(p):
        if sigma[i] < q:
            values[i] = w[i, sigma[i]]
    first_total = np.int64(0)
    first_squares = np.int64(0)
    for k in range(nu):
        x = w[uc_rows[k], uc_cols[k]]
        first_total += x
        first_squares += x * x
    return (uc_rows, uc_cols, OK, sigma, total, squares, taken, rows, cols, starts, allowed,
            compared, OK, cmp_total, cmp_squares, values, first_total, first_squares)
