"""The preference method's compiled code, as the shell asks it of a method
with a cache of its own (judge.methods.registry.CACHES): the solver's numba
kernels kept in the data directory's cache
(judge/methods/preference/solver/compiled.py says when a process uses them,
solver/kernel_build.py how they are built). Light: every `judge` command
imports it; numba is imported only to build or load a kernel."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from judge.methods.preference.solver import compiled

WHAT = "the solver's kernels"


def used(data_dir: Path | None = None, *, daemon: bool = False) -> contextlib.AbstractContextManager:
    """For a command's time: the kernels from `<data_dir>/cache` only."""
    return compiled.used(data_dir, daemon=daemon)


def use(data_dir: Path | None = None, *, daemon: bool = False) -> None:
    """For the rest of the process (a command that read its configuration)."""
    compiled.use(data_dir, daemon=daemon)


def building_in_background() -> contextlib.AbstractContextManager:
    """Around `judge serve`'s loop: a missing or stale cache built in a
    child process at the lowest priority."""
    from judge.methods.preference.solver import kernel_build

    return kernel_build.building_in_background()


def compile_now() -> tuple[bool, str]:
    """`judge compile`: (done, what to tell the operator)."""
    from judge.methods.preference.solver import kernel_build

    if compiled.allowed():
        return True, f"{WHAT} are compiled already ({compiled.cache_dir()})"
    start = time.monotonic()
    if not kernel_build.build():
        return False, f"another process is compiling {WHAT} into {compiled.cache_dir()}"
    return True, f"{WHAT} compiled into {compiled.cache_dir()} in {time.monotonic() - start:.1f} s"
