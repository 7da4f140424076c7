"""`judge compile`: the solver's kernels compiled into the judge's cache
(judge/methods/preference/solver/compiled.py), once after installing or
upgrading, so that no command ever waits for numba (docs/operating.md)."""

from __future__ import annotations

import time

import click


@click.command("compile")
@click.pass_context
def compile_kernels(ctx: click.Context) -> None:
    """Compile the preference solver's kernels into the data directory's cache (once after installing)."""
    from judge.cli import _config
    from judge.methods.preference.solver import compiled, kernel_build

    _config(ctx)  # the data directory (and an operator's NUMBA_CACHE_DIR)
    if compiled.allowed():
        click.echo(f"judge: the solver's kernels are compiled already ({compiled.cache_dir()})")
        return
    start = time.monotonic()
    if not kernel_build.build():
        click.echo(f"judge: another process is compiling the solver's kernels into {compiled.cache_dir()}", err=True)
        raise SystemExit(1)
    click.echo(f"judge: the solver's kernels compiled into {compiled.cache_dir()} in {time.monotonic() - start:.1f} s")
