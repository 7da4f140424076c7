"""`judge compile`: the methods' compiled code (the preference solver's
kernels) built into the judge's cache in the data directory, once after
installing or upgrading, so that no command ever waits for a compiler
(docs/operating.md). Each method with such code says how in its
judge.methods.registry.CACHES module."""

from __future__ import annotations

import click


@click.command("compile")
@click.pass_context
def compile_kernels(ctx: click.Context) -> None:
    """Compile the preference solver's kernels into the data directory's cache (once after installing)."""
    from judge.cli import _config
    from judge.methods.registry import caches

    _config(ctx)  # the data directory (and an operator's NUMBA_CACHE_DIR)
    failed = False
    for cache in caches():
        done, said = cache.compile_now()
        click.echo(f"judge: {said}", err=not done)
        failed |= not done
    if failed:
        raise SystemExit(1)
