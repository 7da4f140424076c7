"""The sampler's trial loop (judge/methods/matching_sampler.py, `_trials`),
compiled with numba: the same source, so the same result bit for bit (IEEE
doubles, no fast-math; tests/test_matching_sampler.py checks it), some 100x
faster. Loaded only for blocks of matching_sampler.COMPILED_FROM rows or
more: numba costs a process about 0.27 s to import."""

from __future__ import annotations

from numba import njit

from judge.methods import matching_sampler

_helpers = {name: njit(cache=True)(getattr(matching_sampler, name)) for name in ("_child", "_tail_per", "_tail_draw")}
# _trials calls its helpers by their global names: compile it against the compiled ones.
_source = matching_sampler._trials
trials = njit(cache=True)(type(_source)(_source.__code__, {**_source.__globals__, **_helpers}, _source.__name__))
