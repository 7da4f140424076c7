"""The counting DP of line_dp.py on numpy arrays, for blocks of many states
(judge/methods/preference/solver/counting.py chooses): each layer a sorted
array of coded states, merged in pieces; the same counts and the same
numbering."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.methods.preference.solver.line_dp import _closing, _LineDP, _SlotTypes, _StatesFloor, _TooBig


class _LineDPVec(_LineDP):
    """The same DP, vectorised with numpy for large state spaces.

    A state is coded as one integer, sum of used[t] * radix[t] with
    radix[t] = prod over u < t of (size[u] + 1); each layer is the sorted
    array of reachable codes. Counts are int64 when the product of the line
    degrees (a bound on every count) fits, else Python integers (object
    arrays). Gives exactly the same counts and unranking as _LineDP.
    """

    def __init__(self, allowed: list[list[bool]], n_real: int, types: _SlotTypes, limit: int):
        line_types, dummy_ok = self._table(allowed, n_real, types)
        m, slot_type, size, dummy, T = self.m, self.slot_type, self.size, self.dummy, self.ntypes
        radix = [1] * T
        for t in range(1, T):
            radix[t] = radix[t - 1] * (size[t - 1] + 1)
        if radix[-1] * (size[-1] + 1) >= 1 << 62:
            raise _TooBig  # codes would not fit in int64
        self.radix = radix
        bound = 1
        for l in range(n_real):
            bound *= sum(1 for s in range(m) if allowed[l][s] and not types.dummy[slot_type[s]]) + (
                1 if any(allowed[l][s] and types.dummy[slot_type[s]] for s in range(m)) else 0
            )
        dtype = np.int64 if bound < 1 << 62 else object
        closing = _closing(line_types, dummy_ok, T, n_real)
        floor = _StatesFloor(line_types, closing, size)
        size_a = np.array(size, dtype=np.int64)
        layers = [np.zeros(1, dtype=np.int64)]
        total = 1
        for k in range(n_real):
            room = limit - total  # states the next layers may still add
            if floor.passes(k, layers[-1].size, room):
                raise _TooBig  # certain before the work: the layers to come pass the limit
            nxt = _next_codes(layers[-1], line_types[k], closing[k], radix, size, room,
                              min(len(line_types[k]), k + 1))
            total += nxt.size
            layers.append(nxt)
        last = layers[n_real]
        ok = np.ones(last.size, dtype=bool)
        for t in range(T):
            if t not in dummy_ok:
                ok &= (last // radix[t]) % (size[t] + 1) == size_a[t]
        fl = [None] * (n_real + 1)
        fl[n_real] = ok.astype(np.int64).astype(dtype)
        for k in range(n_real - 1, -1, -1):
            codes = layers[k]
            child_codes = layers[k + 1]
            child_f = fl[k + 1]
            fk = np.zeros(codes.size, dtype=np.int64).astype(dtype)
            for t in line_types[k]:
                dig = (codes // radix[t]) % (size[t] + 1)
                mask = dig < size[t]
                if not mask.any():
                    continue
                want = codes[mask] + radix[t]
                pos = np.minimum(np.searchsorted(child_codes, want), max(child_codes.size - 1, 0))
                if child_codes.size == 0:
                    continue
                sub = child_f[pos]
                sub = np.where(child_codes[pos] == want, sub, 0).astype(dtype)  # a dropped state counts 0
                if not dummy[t]:
                    mult = size[t] - dig[mask]
                    sub = sub * (mult if dtype is not object else mult.astype(object))
                fk[mask] += sub
            fl[k] = fk
        self.layers = layers
        self.fl = fl
        self.states = total
        self.count = int(fl[0][0])

    # The state coded as one integer (see the class docstring).
    def _root(self) -> Any:
        return 0

    def _take(self, state: Any, t: int) -> Any:
        return state + self.radix[t]

    def _count_after(self, state: Any, k: int, t: int) -> int:
        code, child_codes = state + self.radix[t], self.layers[k + 1]
        pos = int(np.searchsorted(child_codes, code))
        found = pos < child_codes.size and int(child_codes[pos]) == code
        return int(self.fl[k + 1][pos]) if found else 0


# Candidate codes (8 bytes each) the numpy DP holds before merging them into
# the layer it builds: the layer itself never passes the state limit, the
# candidates (a layer times the types open to a line) would pass it many
# times over (36 types x 200,000 states: 58 MB, and as much again to sort).
_MERGE_CODES = 1 << 19


def _next_codes(codes: np.ndarray, types: list[int], close: list[int], radix: list[int], size: list[int],
                room: int, in_max: int) -> np.ndarray:
    """The numpy DP's next layer: the sorted distinct codes one more line
    reaches from `codes` (taking a free slot of one of its `types`), less
    those that leave a slot of a `close` type free. Raises _TooBig as soon
    as the layer certainly has more than `room` codes, with the same
    verdict as building it whole: every type's part is distinct by itself,
    a code is reached by at most `in_max` of the types (one per type it
    holds, and it holds at most k + 1 slots), and the merged parts only
    grow. Holds at most about _MERGE_CODES candidates besides the layer."""
    merged = np.zeros(0, dtype=np.int64)
    parts: list[np.ndarray] = []
    pending = edges = 0
    for seen, t in enumerate(types, 1):
        dig = (codes // radix[t]) % (size[t] + 1)
        part = codes[dig < size[t]]
        del dig
        part += radix[t]
        for c in close:
            part = part[(part // radix[c]) % (size[c] + 1) == size[c]]
        edges += part.size
        if part.size > room or -(-edges // min(seen, in_max)) > room:
            raise _TooBig
        if part.size:
            parts.append(part)
            pending += part.size
        if pending > _MERGE_CODES:
            merged = _merge_codes(merged, parts)
            parts, pending = [], 0
            if merged.size > room:
                raise _TooBig
    merged = _merge_codes(merged, parts)
    if merged.size > room:
        raise _TooBig
    return merged


def _merge_codes(merged: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
    """The sorted distinct codes of `merged` (sorted, distinct) and `parts`."""
    if not merged.size and len(parts) == 1:
        return parts[0]  # sorted and distinct already: codes + one radix, filtered
    if not parts:
        return merged
    out = np.concatenate([merged, *parts])
    out.sort()
    if out.size > 1:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out
