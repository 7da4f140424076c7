"""The solver's kernels compiled into the judge's cache
(judge/methods/preference/solver/compiled.py says where it is and when a
process may load from it): `judge compile` builds it in its own process;
`judge serve` at its start, when the stamp is missing or stale, in a child
process at the lowest priority (`python -m
judge.methods.preference.solver.kernel_build FOLDER`), and uses the
kernels once that child is done."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from judge.methods.preference.solver import compiled

_LOCK = "judge-kernels.lock"


def build() -> bool:
    """Compile every kernel into the judge's cache (see `use`) and write the
    stamp. False when another process is building the same cache now (it
    writes the stamp)."""
    import fcntl
    import json

    folder = compiled.cache_dir()
    if folder is None:
        raise RuntimeError("kernel_build.build needs the judge's cache folder (compiled.use)")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / _LOCK, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        (folder / compiled.STAMP).unlink(missing_ok=True)
        _warm()
        tmp = folder / (compiled.STAMP + ".tmp")
        tmp.write_text(json.dumps(compiled._stamp(compiled._numba_key()), indent=1) + "\n")
        tmp.replace(folder / compiled.STAMP)
    compiled._state["ready"] = None  # the new stamp is read at the next need
    return True


def _warm() -> None:
    """Solve through the compiled kernels, as a judge does, so that numba
    compiles (or loads) each with the argument types the solver passes: an
    optimum, a tied block counted and the same block sampled (too big to
    count), of COMPILED_FROM rows or more, and a preference round's
    uncontested first choices. A test checks that no later solve adds a
    signature."""
    import numpy as np

    from judge.methods.preference import engine
    from judge.methods.preference.solver import assignment, linear_assignment, sampler, solver_kernel

    linear_assignment._KERNEL[:] = [solver_kernel]
    sampler._COMPILED[:] = [sampler.compiled_runner()]
    n = max(linear_assignment.COMPILED_FROM, sampler.COMPILED_FROM) + 2
    w = np.zeros((n, n), dtype=np.int64)
    assignment.optimum(w)
    assignment.solve(w)  # one block of n, counted
    assignment.solve(w, count_limit=1)  # the same, sampled
    engine._uncontested(w, [0] * n, n, solver_kernel)
    # a preference round by default: its one compiled call (preference_round), on the engine's own tables
    from judge.rng import DrawStream
    from judge.variants import make_power_list

    powers = make_power_list([f"Power{k:02d}" for k in range(n)])
    engine.resolve(powers, engine.Params(), {f"p{k:02d}": engine.Preference() for k in range(n)}, DrawStream(b"warm"))


def start_build():
    """`judge serve`'s start: build the judge's cache in a child process at
    the lowest priority when it is not good. Returns the child (a
    subprocess.Popen), or None: the cache is good, or `use` was not called.
    The caller calls `refresh` once the child has ended."""
    import subprocess

    folder = compiled.cache_dir()
    if folder is None or compiled.allowed() or os.environ.get("JUDGE_KERNEL_BUILD", "").lower() in ("0", "off", "no"):
        # JUDGE_KERNEL_BUILD=off: no build at start (an operator who runs
        # `judge compile` at install; the test suite's many short daemons).
        return None
    return subprocess.Popen([sys.executable, "-m", "judge.methods.preference.solver.kernel_build", str(folder)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@contextlib.contextmanager
def building_in_background():
    """Around `judge serve`'s loop: the build of start_build, if one is
    needed, in a child process; a thread waits for it and lets the solver
    use the kernels once it has written the stamp; the child is stopped
    (SIGTERM) if the daemon stops first."""
    import logging
    import threading

    log = logging.getLogger(__name__)
    child = start_build()
    if child is None:
        yield
        return
    log.info("judge: compiling the solver's kernels into %s in the background (pid %d)", compiled.cache_dir(),
             child.pid)

    def wait() -> None:
        _, err = child.communicate()
        compiled.refresh()
        if child.returncode == 0:
            log.info("judge: the solver's kernels are compiled (%s)", compiled.cache_dir())
        elif child.returncode > 0:  # (< 0: stopped with the daemon)
            log.warning("judge: compiling the solver's kernels failed (the solver runs without them): %s",
                        (err or b"").decode(errors="replace").strip()[-2000:])

    waiter = threading.Thread(target=wait, name="kernel-build", daemon=True)
    waiter.start()
    try:
        yield
    finally:
        if child.poll() is None:
            child.terminate()
        waiter.join(timeout=10)


if __name__ == "__main__":  # the child of start_build: python -m judge.methods.preference.solver.kernel_build FOLDER
    os.nice(19)  # the daemon and its mail first
    compiled.use(folder=Path(sys.argv[1]))
    build()
