"""The solver's compiled kernels (numba): when a process may use them, and
where their machine code is kept.

numba compiles a kernel at its first call and keeps the machine code in an
on-disk cache: 2 s for the solver's kernel (judge/methods/tight_kernel.py)
and 17 s for the sampler's (judge/methods/matching_kernel.py) on this
project's machine; loading them from the cache takes some 0.3 s, numba's
import included. By default numba keeps that cache beside the sources, in
site-packages, and where site-packages is read-only (a container, a system
package) in the user's home, or nowhere: every process compiled again.
Every kernel has the same code in Python beside it, with the same results
bit for bit (tests), only slower; so a judge never makes anybody wait for a
compile:

* The `judge` commands (`use`, from judge/cli.py) keep the cache in a folder
  the judge owns, `<data dir>/cache/numba` (numba's NUMBA_CACHE_DIR; an
  operator's own NUMBA_CACHE_DIR is kept), and load the kernels only when
  that cache holds all of them: a stamp written after a complete build
  names numba's version, Python's, the kernels' sources and the CPU numba
  compiled for, as numba's own cache index does. Otherwise the solver runs
  the Python code: a realistic 36-power game takes about 1 ms instead of
  0.15 ms, a block too big to count seconds instead of a fraction of one.
  `judge deliver`, which may resolve a game that fills up, never compiles.
* `build` compiles every kernel into the cache and writes the stamp:
  `judge compile` (once after installing or upgrading: docs/operating.md),
  and `judge serve` at its start, in a child process at the lowest
  priority, when the stamp is missing or stale (`start_build`); the daemon
  uses the kernels once that child is done.
* A process that never called `use` (the library, the tests, the benches)
  compiles at first need, into numba's own cache, as before.

No code here runs on import: `judge deliver` imports numba only when it
loads a kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The modules that hold compiled kernels, and the sources numba compiles
# them from (numba's cache index checks each source's time and size).
KERNELS = ("judge.methods.tight_kernel", "judge.methods.matching_kernel")
_SOURCES = ("tight_kernel.py", "matching_kernel.py", "matching_sampler.py")
STAMP = "judge-kernels.json"
_LOCK = "judge-kernels.lock"

# policy: None (compile at first need, numba's own cache) or the cache
# folder of `use`; ready: the stamp was found good (None: not looked at yet).
_state: dict = {"policy": None, "ready": None}


def use(data_dir: Path | None) -> None:
    """A `judge` command's process: the kernels only from the judge's cache,
    `<data_dir>/cache/numba` (None: the default data directory; an
    environment's NUMBA_CACHE_DIR wins)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        _use_folder(Path(os.environ["NUMBA_CACHE_DIR"]))
        return
    if data_dir is None:
        from judge.config import default_data_dir

        data_dir = default_data_dir()
    _use_folder(Path(data_dir).expanduser() / "cache" / "numba")


def _use_folder(folder: Path) -> None:
    """The judge's cache is `folder`: for numba (NUMBA_CACHE_DIR, read at its
    import, or its configuration if it is imported) and the child processes."""
    folder = folder.absolute()
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    if "numba" in sys.modules:
        sys.modules["numba"].config.CACHE_DIR = str(folder)
    _state.update(policy=folder, ready=None)


def cache_dir() -> Path | None:
    """The judge's kernel cache of this process (None: numba's own)."""
    return _state["policy"]


def allowed() -> bool:
    """May the solver load (and call) the compiled kernels now? Always
    without `use`; with it, when the cache holds them all (read once, and
    again after `refresh`)."""
    if _state["policy"] is None:
        return True
    if _state["ready"] is None:
        _state["ready"] = _stamp_matches(_state["policy"])
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
    """numba's version and what its cache index keys the machine code on
    (target, CPU name and features: NUMBA_CPU_NAME and NUMBA_CPU_FEATURES
    included). Imports numba."""
    import numba
    from numba.core.registry import cpu_target

    return {"numba": numba.__version__, "target": list(cpu_target.target_context.codegen().magic_tuple())}


def _stamp(key: dict[str, object]) -> dict[str, object]:
    return {"python": sys.version, "sources": _sources(), **key}


def _stamp_matches(folder: Path) -> bool:
    try:
        stamp = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return False
    if stamp.get("python") != sys.version or stamp.get("sources") != _sources():
        return False  # known without importing numba
    return stamp == _stamp(_numba_key())


def build() -> bool:
    """Compile every kernel into the judge's cache (see `use`) and write the
    stamp. False when another process is building the same cache now (it
    writes the stamp)."""
    import fcntl

    folder = _state["policy"]
    if folder is None:
        raise RuntimeError("compiled.build needs the judge's cache folder (compiled.use)")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / _LOCK, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        (folder / STAMP).unlink(missing_ok=True)
        _warm()
        tmp = folder / (STAMP + ".tmp")
        tmp.write_text(json.dumps(_stamp(_numba_key()), indent=1) + "\n")
        tmp.replace(folder / STAMP)
    _state["ready"] = None
    return True


def _warm() -> None:
    """Solve through the compiled kernels, as a judge does, so that numba
    compiles (or loads) each with the argument types the solver passes: an
    optimum, a tied block and a block too big to count, of COMPILED_FROM
    rows or more. A test checks that no later solve adds a signature."""
    import numpy as np

    from judge.methods import exact_assignment, matching_sampler, tight_kernel

    exact_assignment._KERNEL[:] = [tight_kernel]
    matching_sampler._COMPILED[:] = [matching_sampler.compiled_runner()]
    n = max(exact_assignment.COMPILED_FROM, matching_sampler.COMPILED_FROM) + 2
    w = np.zeros((n, n), dtype=np.int64)
    exact_assignment.optimum(w)
    exact_assignment.solve(w)  # one block of n, counted
    exact_assignment.solve(w, count_limit=1)  # the same, sampled


def start_build() -> subprocess.Popen | None:
    """`judge serve`'s start: build the judge's cache in a child process at
    the lowest priority when it is not good (None: it is, or no cache
    folder is set). The caller calls `refresh` once the child has ended."""
    folder = _state["policy"]
    if folder is None or allowed():
        return None
    return subprocess.Popen([sys.executable, "-m", "judge.methods.compiled", str(folder)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


if __name__ == "__main__":  # the child of start_build: python -m judge.methods.compiled FOLDER
    os.nice(19)  # the daemon and its mail first
    _use_folder(Path(sys.argv[1]))
    build()
