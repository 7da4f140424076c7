"""The sampler's frontier builder, node bounds and trial loop
(judge/methods/preference/solver/sampler_frontier.py,
sampler_exact_lines.py and sampler_trials.py, with the steps of
sampler_steps.py), compiled with numba: the same source, so the same
result bit for bit (IEEE doubles, no fast-math;
tests/test_matching_sampler.py checks it), some 100x faster. Loaded only
for blocks of sampler.COMPILED_FROM rows or more (numba costs a process
about 0.3 s to import), and in a `judge` command only from the judge's own
cache (judge/methods/preference/solver/compiled.py, whose stamp names
these four source files)."""

from __future__ import annotations

from numba import njit

from judge.methods.preference.solver import sampler_exact_lines, sampler_frontier, sampler_steps, sampler_trials

# Each function is compiled against the compiled versions of the helpers it
# calls by their global names, helpers first.
_compiled: dict = {}
# The small helpers of the inner loops are inlined into their callers.
_SMALL = {"_child", "_fix", "_line", "_reset", "_heap_better", "_find", "_pick", "_path_state"}
_FUNCTIONS = {**vars(sampler_steps), **vars(sampler_frontier), **vars(sampler_exact_lines), **vars(sampler_trials)}
for _name in ("_child", "_fix", "_line", "_reset", "_heap_better", "_find", "_pick", "_tail_per", "_tail_draw",
              "_node_state", "_path_state", "_frontier", "_paths", "_exact_part", "_exact_draw", "_exact_form",
              "_node_bounds", "_trials"):
    _source = _FUNCTIONS[_name]
    _compiled[_name] = njit(cache=True, error_model="numpy", inline="always" if _name in _SMALL else "never")(
        type(_source)(_source.__code__, {**_source.__globals__, **_compiled}, _source.__name__))
frontier = _compiled["_frontier"]
paths = _compiled["_paths"]
node_bounds = _compiled["_node_bounds"]
trials = _compiled["_trials"]
