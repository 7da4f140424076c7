"""The counting DP of a block (judge/methods/preference/solver/assignment.py,
"Canonical order inside a block"): the perfect matchings of a 0-1 table
counted line by line, a state being how many slots of each type are taken,
and numbered in the canonical order (unrank); the slots merged into types;
the floor on the states to come that lets a try give up as soon as passing
its state limit is certain. States as tuples; line_dp_numpy.py has the
same DP on numpy arrays."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class _TooBig(Exception):
    """The counting DP passed its state limit."""


class _LineDP:
    """Perfect matchings of a 0-1 table, counted and unranked by lines.

    `allowed[l][s]`: line l may take slot s. Lines 0..n_real-1 are real and
    taken in this order; the remaining lines are dummies, indistinguishable,
    all with the same pattern: they take whatever slots are left. Slots with
    slot_dummy[s] are dummies too: a real line taking one "gets nothing",
    whichever dummy slot it is. Slots are merged into types (same pattern,
    same dummy flag); the state is how many slots of each type are used.
    Counts are counts of distinct sets of real (line, slot) pairs.
    """

    def _table(self, allowed: list[list[bool]], n_real: int, types: _SlotTypes) -> tuple[list[list[int]], set[int]]:
        """The table and its slot types kept; returns each real line's slot
        types and the types a dummy line may take (both DPs start so)."""
        m = len(allowed)
        self.m, self.n_real, self.allowed = m, n_real, allowed
        self.slot_type, self.size, self.dummy = types.slot_type, types.size, types.dummy
        self.ntypes = len(types.size)
        slot_type = types.slot_type
        line_types = [sorted({slot_type[s] for s in range(m) if allowed[l][s]}) for l in range(n_real)]
        dummy_ok = {slot_type[s] for s in range(m) if allowed[n_real][s]} if n_real < m else set()
        return line_types, dummy_ok

    def __init__(self, allowed: list[list[bool]], n_real: int, types: _SlotTypes, limit: int):
        line_types, dummy_ok = self._table(allowed, n_real, types)
        size, dummy, T = self.size, self.dummy, self.ntypes

        closing = _closing(line_types, dummy_ok, T, n_real)
        floor = _StatesFloor(line_types, closing, size)

        # Layered DP: forward over reachable states, then counts backwards.
        # It gives up (_TooBig) once its states (all layers together) pass
        # `limit`, and as soon as that is certain: when the layers to come
        # must pass it (_StatesFloor), or when the layer being built does.
        layers: list[list[tuple[int, ...]]] = [[(0,) * T]]
        total = 1
        for k in range(n_real):
            room = limit - total  # states the next layers may still add
            if floor.passes(k, len(layers[-1]), room):
                raise _TooBig
            nxt: dict[tuple[int, ...], None] = {}
            types = line_types[k]
            close = closing[k]  # a state that leaves a slot no later line can take is dropped
            for st in layers[-1]:
                for t in types:
                    u = st[t]
                    if u < size[t]:
                        new = st[:t] + (u + 1,) + st[t + 1:]
                        if not close or all(new[c] == size[c] for c in close):
                            nxt[new] = None
                if len(nxt) > room:
                    raise _TooBig
            total += len(nxt)
            layers.append(list(nxt))
        f: dict[tuple[int, ...], int] = {}
        for st in layers[n_real]:
            ok = all(st[t] == size[t] or t in dummy_ok for t in range(T))
            f[st] = 1 if ok else 0
        for k in range(n_real - 1, -1, -1):
            types = line_types[k]
            for st in layers[k]:
                val = 0
                for t in types:
                    u = st[t]
                    if u < size[t]:
                        sub = f.get(st[:t] + (u + 1,) + st[t + 1:], 0)
                        if sub:
                            val += sub if dummy[t] else (size[t] - u) * sub
                f[st] = val
        self.f = f
        self.states = total
        self.count = f[(0,) * T]

    def unrank(self, r: int) -> list[int]:
        """The slot of each real line in the r-th matching (canonical order:
        lexicographic by the slot of line 0, line 1, ...; dummy slots count
        as one option, after every real slot)."""
        if not 0 <= r < self.count:
            raise ValueError("rank out of range")
        state = self._root()
        used = [False] * self.m
        out = []
        slot_type, dummy = self.slot_type, self.dummy
        for k in range(self.n_real):
            row = self.allowed[k]
            dummy_seen = False
            chosen = -1
            cache: dict[int, int] = {}
            for s in range(self.m):
                if not row[s] or used[s]:
                    continue
                t = slot_type[s]
                if dummy[t]:
                    if dummy_seen:
                        continue
                    dummy_seen = True
                c = cache.get(t)
                if c is None:
                    c = cache[t] = self._count_after(state, k, t)
                if r < c:
                    chosen = s
                    state = self._take(state, t)
                    break
                r -= c
            assert chosen >= 0, "unranking ran out of options"
            used[chosen] = True
            out.append(chosen)
        return out

    # The state after lines 0..k-1: how many slots of each type are used.
    def _root(self) -> Any:
        return (0,) * self.ntypes

    def _take(self, state: Any, t: int) -> Any:
        return state[:t] + (state[t] + 1,) + state[t + 1:]

    def _count_after(self, state: Any, k: int, t: int) -> int:
        """Matchings of the remaining lines once line k takes a slot of type t."""
        return self.f.get(self._take(state, t), 0)


class _StatesFloor:
    """A lower bound on the counting DP's states to come, to give up on a
    try before its work when it is certain to pass the state limit (the
    verdict is the same: a try that fits is never stopped).

    After line k, a state uses k slots. Line k takes one of its free types
    in every state of layer k: out of its types, a state of k slots has at
    most `full` of them full (the smallest ones that the lines before could
    have filled), so at least len(types) - full ways out; a state of layer
    k + 1 is reached from at most min(len(types), k + 1) states of layer k
    (one per type it holds). Hence |layer k+1| >= |layer k| * out / in,
    when line k closes no slot type (else no bound: the layers to come are
    not bounded past it)."""

    def __init__(self, line_types: list[list[int]], closing: list[list[int]], size: list[int]):
        lines = [0] * len(size)  # lines so far open to each type
        steps: list[tuple[int, int] | None] = []
        for k, types in enumerate(line_types):
            if closing[k] or not types:
                steps.append(None)
            else:
                full = used = 0
                for v in sorted(size[t] for t in types if lines[t] >= size[t]):
                    if used + v > k:
                        break
                    used += v
                    full += 1
                steps.append((len(types) - full, min(len(types), k + 1)))
            for t in types:
                lines[t] += 1
        self.steps = steps

    def passes(self, k: int, states: int, room: int) -> bool:
        """True when the layers after layer k (`states` states) certainly
        hold more than `room` states together."""
        acc = 0
        for j in range(k, len(self.steps)):
            step = self.steps[j]
            if step is None:
                return False
            states = -(-states * step[0] // step[1])
            if not states:
                return False
            acc += states
            if acc > room:
                return True
        return False


def _closing(line_types: list[list[int]], dummy_ok: set[int], T: int, n_real: int) -> list[list[int]]:
    """closing[k]: the slot types (not open to the dummy lines) whose last
    real line is k: after line k every slot of them must be taken, and a
    state that leaves one free can never complete. Dropping such states
    changes no count (theirs is 0); it keeps the DP small when slots are
    open to a few consecutive lines only."""
    last = [-1] * T
    for k in range(n_real):
        for t in line_types[k]:
            last[t] = k
    closing: list[list[int]] = [[] for _ in range(n_real)]
    for t in range(T):
        if t not in dummy_ok and last[t] >= 0:
            closing[last[t]].append(t)
    return closing


@dataclass
class _SlotTypes:
    slot_type: list[int]  # type of each slot
    size: list[int]  # slots per type
    dummy: list[bool]  # type made of dummy slots

    @property
    def bound(self) -> int:
        """Product of (type size + 1): a bound on the DP's state space."""
        return math.prod(v + 1 for v in self.size)


def _slot_types(patterns: Sequence[tuple], slot_dummy: list[bool]) -> _SlotTypes:
    """Merge slots with the same pattern (lines open to them) and dummy flag;
    types are numbered by their first slot."""
    keys: dict[tuple, int] = {}
    slot_type = []
    size: list[int] = []
    dummy: list[bool] = []
    for pat, dm in zip(patterns, slot_dummy):
        key = (dm, pat)
        t = keys.get(key)
        if t is None:
            t = keys[key] = len(size)
            size.append(0)
            dummy.append(dm)
        size[t] += 1
        slot_type.append(t)
    return _SlotTypes(slot_type, size, dummy)
