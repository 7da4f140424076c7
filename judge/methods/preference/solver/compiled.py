"""The solver's compiled kernels (numba): when a process may use them, and
where their machine code is kept.

numba compiles a kernel at its first call and keeps the machine code in an
on-disk cache: some 20 s of CPU for the solver's
(judge/methods/preference/solver/solver_kernel.py) and the sampler's
(judge/methods/preference/solver/sampler_kernel.py), most of it the
sampler's, on this project's machine; loading them from the cache takes
some 0.3 s, numba's import included. By default numba keeps that cache beside the sources, in
site-packages, and where site-packages is read-only (a container, a system
package) in the user's home or nowhere: every process compiled again. Every
kernel has the same code in Python beside it, with the same results (tests),
only slower; so a judge never makes anybody wait for a compile:

* The `judge` commands (`use`, from judge/cli.py) keep the cache in a folder
  the judge owns, `<data dir>/cache/numba` (numba's NUMBA_CACHE_DIR; an
  operator's own NUMBA_CACHE_DIR is kept), and load the kernels only when
  that cache holds all of them: a stamp written after a complete build
  names numba's version, Python's, the kernels' sources and the CPU numba
  compiled for, what numba's own cache index checks. Otherwise the solver
  runs the Python code: a realistic 36-power game takes about 1 ms instead
  of 0.2 ms, a block too big to count seconds instead of a fraction of one.
  `judge deliver`, which may resolve a game that fills up, never compiles.
* A command that resolves one game and exits (`judge resolve`, `judge
  deliver` without a daemon) loads only the sampler's kernels, for a block
  too big to count: loading numba costs a process some 0.3 s, more than the
  solver's kernel saves on any game it counts (scipy's assignment is
  cheaper to import); `judge serve` (`use(..., daemon=True)`) loads both.
* `build` (judge/methods/preference/solver/kernel_build.py) compiles every
  kernel into the cache and writes the stamp: `judge compile` (once after
  installing or upgrading: docs/operating.md), and `judge serve` at its
  start, in a child process at the lowest priority, when the stamp is
  missing or stale (`start_build`); the daemon uses the kernels once that
  child is done.
* A process that never called `use` (the library, the tests, the benches)
  compiles at first need, into numba's own cache, as before.

Nothing here imports numba unless the stamp is there to check: `judge
deliver` imports numba only to load a kernel.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

# The sources numba compiles the kernels from (its cache index checks each
# source's time and size; the constants compiled into them are defined in
# these files too: tests/test_compiled_kernels.py checks both).
_SOURCES = ("solver_kernel.py", "sampler_kernel.py", "sampler_steps.py", "sampler_frontier.py",
            "sampler_exact_lines.py", "sampler_trials.py")
STAMP = "judge-kernels.json"

# used: False (compile at first need, numba's own cache), or True with the
# data directory of `use` (None: the default one) or the folder itself;
# daemon: the solver's kernel wanted too; ready: the stamp was found good
# (None: not looked at yet).
_state: dict = {"used": False, "data_dir": None, "folder": None, "daemon": False, "ready": None}
KERNELS = ("solver", "sampler")  # solver_kernel.py; sampler_kernel.py


def use(data_dir: Path | None = None, *, folder: Path | None = None, daemon: bool = False) -> None:
    """A `judge` command's process: the kernels only from the judge's cache,
    `<data_dir>/cache/numba` (None: the default data directory), or
    `folder`; an environment's NUMBA_CACHE_DIR wins over both. `daemon`: a
    long-running process, which also wants the solver's kernel. Nothing is
    read or imported until the solver needs a kernel."""
    _state.update(used=True, data_dir=data_dir, folder=folder, daemon=daemon, ready=None)


@contextlib.contextmanager
def used(data_dir: Path | None = None, **kwargs):
    """`use` for the time of a block (a command), then as before: the
    policy, NUMBA_CACHE_DIR and numba's cache folder. A `judge` command run
    inside another program (click's test runner) leaves it unchanged."""
    state, env = dict(_state), os.environ.get("NUMBA_CACHE_DIR")
    use(data_dir, **kwargs)
    try:
        yield
    finally:
        _state.clear()
        _state.update(state)
        if env is None:
            os.environ.pop("NUMBA_CACHE_DIR", None)
        else:
            os.environ["NUMBA_CACHE_DIR"] = env
        if "numba" in sys.modules:  # (numba's default: "", beside the sources)
            sys.modules["numba"].config.CACHE_DIR = env or ""


def cache_dir() -> Path | None:
    """The judge's kernel cache of this process (None without `use`). Tells
    numba too (NUMBA_CACHE_DIR, also for the child processes)."""
    if not _state["used"]:
        return None
    if os.environ.get("NUMBA_CACHE_DIR"):
        folder = Path(os.environ["NUMBA_CACHE_DIR"])
    elif _state["folder"] is not None:
        folder = Path(_state["folder"])
    else:
        data_dir = _state["data_dir"]
        if data_dir is None:
            from judge.resources import default_data_dir

            data_dir = default_data_dir()
        folder = Path(data_dir).expanduser() / "cache" / "numba"
    folder = folder.absolute()
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    if "numba" in sys.modules:  # numba read NUMBA_CACHE_DIR at its import
        sys.modules["numba"].config.CACHE_DIR = str(folder)
    return folder


def allowed(kernel: str = "sampler") -> bool:
    """May the solver load (and call) this compiled kernel ("solver" or
    "sampler") now? Always without `use`; with it, when the judge's cache
    holds them all (its stamp read once, and again after `refresh`), and
    the solver's kernel only in a daemon."""
    if not _state["used"]:
        return True
    if kernel == "solver" and not _state["daemon"]:
        return False
    if _state["ready"] is None:
        _state["ready"] = _stamp_matches(cache_dir())
    return _state["ready"]


def refresh() -> None:
    """Read the stamp again at the next need (a build has ended)."""
    if _state["ready"] is False:
        _state["ready"] = None


def _sources() -> dict[str, list[int]]:
    here = Path(__file__).resolve().parent
    out = {}
    for name in _SOURCES:
        st = (here / name).stat()
        out[str(here / name)] = [st.st_mtime_ns, st.st_size]
    return out


def _numba_key() -> dict[str, object]:
    """numba's version and what its cache index keys machine code on
    (target, CPU name and features: NUMBA_CPU_NAME and NUMBA_CPU_FEATURES
    included). Imports numba."""
    import numba
    from numba.core.registry import cpu_target

    return {"numba": numba.__version__, "target": list(cpu_target.target_context.codegen().magic_tuple())}


def _stamp(key: dict[str, object]) -> dict[str, object]:
    return {"python": sys.version, "sources": _sources(), **key}


def _stamp_matches(folder: Path) -> bool:
    import json

    try:
        stamp = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return False
    if stamp.get("python") != sys.version or stamp.get("sources") != _sources():
        return False  # known without importing numba
    return stamp == _stamp(_numba_key())
