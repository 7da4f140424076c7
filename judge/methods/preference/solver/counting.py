"""A block's co-optimal assignments counted and numbered (judge/methods/
preference/solver/assignment.py, "Canonical order inside a block" and
"Blocks too big to count"): which DP counts it (a listing for a few lines,
the tuple DP, the numpy DP), in which order (the players', the powers',
then a frontier order of either), and the block's r-th assignment; a block
no order counts within the state limit is left to the sampler, with a
lower bound on its count."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judge.methods.preference.solver.line_dp import _LineDP, _slot_types, _SlotTypes, _TooBig
from judge.methods.preference.solver.line_dp_numpy import _LineDPVec
from judge.methods.preference.solver.tight_graph import _Analysis, _RawBlock


def _line_dp(table: list[list[bool]], n_real: int, types: _SlotTypes, limit: int,
             listed: bool = True) -> _LineDP | _ListedDP:
    """The counting DP, numpy's when the states fit in int64 codes. The
    Python one keeps a tuple of T counts per state and builds up to T of
    them per state and line, so its state limit shrinks with T**2: at 100
    powers a block with 100 distinct types would otherwise take minutes and
    gigabytes before giving up (issue 12's bound: 10 s, 1 GB). A block of a
    few lines whose DP cannot pass the limit is listed instead (`listed`)."""
    if listed and len(table) <= _LISTED_UP_TO and types.bound <= limit:  # (its states cannot pass the limit)
        listed = _ListedDP.of(table, n_real, types)
        if listed is not None:
            return listed
    if _VEC_FROM < types.bound < 1 << 62:
        return _LineDPVec(table, n_real, types, limit)
    T = len(types.size)
    return _LineDP(table, n_real, types, min(limit, _TUPLE_CELLS // (T * T)) if T > 20 else limit)


class _ListedDP:
    """The counting DP's count and numbering of a block of a few lines, by
    listing its matchings: most tied blocks of real lists have 2 to 5
    players and a handful of assignments, where the DP's set-up costs more
    than the listing (some 15 us a block). The listing walks the lines in
    order and each line's slots in increasing order, a dummy slot once (the
    first free one, as unrank takes it), and keeps the matchings that the
    dummy lines can complete: exactly unrank's order, so the same count
    and numbering (tests/test_counting_replay.py)."""

    def __init__(self, matchings: list[tuple[int, ...]]):
        self.matchings = matchings
        self.count = len(matchings)
        self.states = len(matchings)

    @classmethod
    def of(cls, table: list[list[bool]], n_real: int, types: _SlotTypes) -> _ListedDP | None:
        """The listing, or None past _LISTED_MATCHINGS matchings."""
        return cls.listing(table, n_real, [types.dummy[t] for t in types.slot_type])

    @classmethod
    def listing(cls, table: list[list[bool]], n_real: int, dummy: list[bool]) -> _ListedDP | None:
        """of(), from each slot's dummy flag."""
        m = len(table)
        rest = table[n_real] if n_real < m else None  # the dummy lines' slots (all alike)
        used = [False] * m
        line: list[int] = []
        out: list[tuple[int, ...]] = []

        def walk(k: int) -> bool:
            if k == n_real:
                if rest is None or all(used[s] or rest[s] for s in range(m)):
                    out.append(tuple(line))
                return len(out) <= _LISTED_MATCHINGS
            row = table[k]
            dummy_seen = False
            for s in range(m):
                if not row[s] or used[s]:
                    continue
                if dummy[s]:
                    if dummy_seen:
                        continue
                    dummy_seen = True
                used[s] = True
                line.append(s)
                ok = walk(k + 1)
                line.pop()
                used[s] = False
                if not ok:
                    return False
            return True

        return cls(out) if walk(0) else None

    def unrank(self, r: int) -> list[int]:
        if not 0 <= r < self.count:
            raise ValueError("rank out of range")
        return list(self.matchings[r])


class _AllOpen:
    """The count and numbering of a block of m players and m powers, none
    a dummy, where every player may take every power (80% of the tied
    blocks of realistic lists at 36 powers: players who bracket the same
    powers): m! assignments, numbered as the counting DP in order "players"
    numbers them (and _ListedDP lists them), lexicographically, without
    its set-up (tests/test_counting_replay.py)."""

    def __init__(self, m: int):
        self.m = m
        self.count = math.factorial(m)
        self.states = m + 1  # the counting DP's: one state per line taken

    def unrank(self, r: int) -> list[int]:
        if not 0 <= r < self.count:
            raise ValueError("rank out of range")
        free = list(range(self.m))
        out = []
        for k in range(self.m - 1, -1, -1):
            x, r = divmod(r, math.factorial(k))
            out.append(free.pop(x))
        return out


# Blocks of at most this many lines, with at most this many matchings, are
# counted by listing them (_ListedDP).
_LISTED_UP_TO = 5
_LISTED_MATCHINGS = 64

# Tuple-DP work allowed to blocks of more than 20 slot types (states x T**2).
_TUPLE_CELLS = 40_000_000

# State-space bound (product of type sizes + 1) above which the numpy DP is used.
_VEC_FROM = 2048


@dataclass
class _Counted:
    raw: _RawBlock
    real_rows: list[int]
    real_cols: list[int]
    count: int
    exact: bool
    order: str  # "players", "powers", "players-frontier", "powers-frontier", "sampled" or "fixed"
    dp: _LineDP | _ListedDP | None
    lines: list[int] | None = None  # a frontier order: local line of each DP line


def _count_block(raw: _RawBlock, p: int, q: int, limit: int) -> _Counted:
    if raw.rows[-1] < p and raw.cols[-1] < q:  # (increasing: no dummy, all real)
        real_rows, real_cols = raw.rows, raw.cols
    else:
        real_rows = [r for r in raw.rows if r < p]
        real_cols = [c for c in raw.cols if c < q]
    if not real_rows or not real_cols:
        return _Counted(raw, real_rows, real_cols, 1, True, "fixed", None)
    a = raw.allowed
    m = len(a)
    if len(real_rows) == m == len(real_cols) and m + 1 <= limit and all(map(all, a)):
        # Every player may take every power: both orders' types are one
        # type of m slots (the same bound, so order "players"), its DP
        # fits in m + 1 states, and counts m! in lexicographic order.
        return _Counted(raw, real_rows, real_cols, math.factorial(m), True, "players", _AllOpen(m))
    if len(real_rows) == m == len(real_cols) and m <= _LISTED_UP_TO:
        # A few players and powers, none a dummy: the first try below lists
        # them when its type bound allows; the bounds without _slot_types
        # (each type, a distinct pattern: no dummy flag to tell them apart).
        by_players_bound = math.prod([k + 1 for k in Counter(zip(*a)).values()])
        by_powers_bound = math.prod([k + 1 for k in Counter(map(tuple, a)).values()])
        order, table = ("powers", [list(col) for col in zip(*a)]) if by_powers_bound < by_players_bound \
            else ("players", a)
        if min(by_players_bound, by_powers_bound) <= limit:
            listed = _ListedDP.listing(table, m, [False] * m)
            if listed is not None:
                return _Counted(raw, real_rows, real_cols, listed.count, True, order, listed)
    col_dummy = [c >= q for c in raw.cols]
    row_dummy = [r >= p for r in raw.rows]
    at = [list(col) for col in zip(*a)]
    by_players = _slot_types([tuple(x) for x in at], col_dummy)  # power types
    by_powers = _slot_types([tuple(x) for x in a], row_dummy)  # player types
    tries = [("players", a, len(real_rows), by_players), ("powers", at, len(real_cols), by_powers)]
    if by_powers.bound < by_players.bound:
        tries.reverse()
    for order, table, n_real, types in tries:
        try:
            dp = _line_dp(table, n_real, types, limit)
        except _TooBig:
            continue
        return _Counted(raw, real_rows, real_cols, dp.count, True, order, dp)
    # The same lines in an order that keeps few slots half-used (sparse blocks
    # whose players come in an unlucky numbering): any fixed numbering of
    # the assignments serves a uniform draw, and the order is recorded.
    fronts = [(_frontier_order(table, n_real), order, table, n_real) for order, table, n_real, _ in tries]
    for (lines, _), order, table, n_real in sorted(fronts, key=lambda f: f[0][1]):  # the narrower first
        table = [table[x] for x in lines] + table[n_real:]
        types = _slot_types([tuple(x) for x in zip(*table)], col_dummy if order == "players" else row_dummy)
        if types.bound > limit and _states_bound(table, range(n_real), limit) > limit:
            continue  # certainly too big: not worth the try
        try:
            dp = _line_dp(table, n_real, types, limit)
        except _TooBig:
            continue
        return _Counted(raw, real_rows, real_cols, dp.count, True, order + "-frontier", dp, lines)
    # Too big to count: drawn by the sampler (solve). Until then the count is
    # a lower bound: Gibson's, per(A) >= sigma(A) - 2m + 2 for a fully
    # indecomposable 0-1 matrix, or Hall's below; matchings differing only
    # among dummies are one assignment.
    # Marshall Hall (1948): a 0-1 matrix with a perfect matching and at least
    # t ones in every row (or column) has at least t! of them.
    ones = sum(map(sum, a))
    t = max(min(map(sum, a)), min(map(sum, at)))
    lb = max(2, -(-max(ones - 2 * m + 2, math.factorial(t)) // math.factorial(_dummies(raw, p, q))))
    return _Counted(raw, real_rows, real_cols, lb, False, "sampled", None)


def _dummies(raw: _RawBlock, p: int, q: int) -> int:
    """Dummy players or dummy powers in the block (a block has one kind)."""
    return max(sum(c >= q for c in raw.cols), sum(r >= p for r in raw.rows))


def _block_pairs(cb: _Counted, local: list[int], p: int, q: int) -> dict[int, int | None]:
    """Real player -> power (or None) for the block, from the unranked lines."""
    raw = cb.raw
    if cb.order == "players" and cb.lines is None and raw.rows[-1] < p and raw.cols[-1] < q:
        # (no dummy: each line's player takes its slot's power, in the same order)
        cols = raw.cols
        return dict(zip(raw.rows, [cols[s] for s in local]))
    out: dict[int, int | None] = dict.fromkeys(cb.real_rows)
    lines = cb.lines or range(len(local))
    if cb.order.startswith(("players", "sampled")):
        for k, s in zip(lines, local):
            c = raw.cols[s]
            out[raw.rows[k]] = c if c < q else None
    else:  # "powers": lines are the real columns
        for k, s in zip(lines, local):
            r = raw.rows[s]
            if r < p:
                out[r] = raw.cols[k]
    return out


def _states_bound(table: list[list[bool]], order: Sequence[int], cap: int) -> int:
    """A bound on the counting DP's states with the real lines in `order`:
    after k lines, every closed slot (no later line may take it) is taken
    and the rest of the k taken slots lie among the open ones, so at most
    C(open, k - closed) states; summed over k, stopped past `cap`. A
    frontier order is not tried when this bound and its type bound both
    pass the limit. (The players' and powers' own orders are always tried,
    as before: a block counted in them before is counted alike, so a
    result recorded earlier replays.)"""
    m = len(table)
    left = [sum(table[x][s] for x in order) for s in range(m)]
    touched = [False] * m
    opened = closed = 0
    total = 1
    for k, x in enumerate(order, 1):
        for s in range(m):
            if table[x][s]:
                if not touched[s]:
                    touched[s] = True
                    opened += 1
                left[s] -= 1
                if left[s] == 0:
                    opened -= 1
                    closed += 1
        total += math.comb(opened, k - closed) if 0 <= k - closed <= opened else 0
        if total > cap:
            break
    return total


def _frontier_order(table: list[list[bool]], n_real: int) -> tuple[list[int], int]:
    """A fixed order of the real lines that keeps few slots "open" (taken
    up by an earlier line's options and still open to a later line): next
    comes the line that leaves the fewest open slots, the lowest number on
    ties. Returns (order, the most slots ever open). The counting DP's
    states grow with the open slots, not with the block."""
    m = len(table)
    a = np.array(table[:n_real], dtype=np.int64).reshape(n_real, m)
    left = a.sum(axis=0)  # real lines still to come, per slot
    touched = np.zeros(m, dtype=bool)
    done = np.zeros(n_real, dtype=bool)
    open_now = 0
    widest = 0
    order: list[int] = []
    for _ in range(n_real):
        # each line changes the open slots by those it opens less those it closes
        delta = a @ ((~touched).astype(np.int64) - (left == 1))
        delta[done] = 2 * m + 1
        best = int(np.argmin(delta))  # the lowest number among the fewest
        done[best] = True
        order.append(best)
        touched |= a[best].astype(bool)
        left -= a[best]
        open_now += int(delta[best])
        widest = max(widest, open_now)
    return order, widest


def _counted_blocks(an: _Analysis, limit: int) -> list[_Counted]:
    """Blocks with more than one distinct outcome (all have a real player),
    in block order: by lowest player number."""
    counted = [_count_block(raw, an.p, an.q, limit) for raw in an.blocks]
    counted = [cb for cb in counted if cb.count > 1]
    if len(counted) > 1:
        counted.sort(key=lambda cb: cb.real_rows[0])
    return counted


def _unrank_block(cb: _Counted, r: int, p: int, q: int) -> dict[int, int | None]:
    assert cb.dp is not None
    return _block_pairs(cb, cb.dp.unrank(r), p, q)
