"""The preference method's solver (docs/preference.md, "How the best
assignments are found and drawn"): the assignment of the best total, then
the lowest spread, drawn uniformly among all such. Pure: no I/O, no clock,
no randomness but the draw stream it is given.

Its entry point is assignment.py (`solve`, `optimum`, what they return and
the rule they follow); the other modules are how:

* costs.py: the weights checked and turned into one exact cost per cell;
* linear_assignment.py: one minimum-cost assignment (the Hungarian method,
  scipy's, or the compiled kernel);
* tight_graph.py: the tight moves of that optimum and the independent
  blocks they form;
* counting.py, with line_dp.py and line_dp_numpy.py: a block's co-optimal
  assignments counted and numbered;
* sampler.py, with sampler_steps.py, sampler_frontier.py,
  sampler_exact_lines.py, sampler_trials.py and sampler_words.py: a block
  too big to count drawn exactly uniformly, without a count;
* solver_kernel.py and sampler_kernel.py: the hot loops compiled with
  numba; compiled.py says when a process may load them and where their
  machine code is kept, kernel_build.py compiles them into that cache.

Nothing is imported here: every `judge` command imports compiled.py, which
needs neither numpy nor the solver. Names with a leading underscore are
the package's own, shared between its modules.
"""
