"""Lark parsers built once per grammar, kept in a cache folder of the judge's.

Building the command grammar's LALR tables takes about 40 ms, paid by every
process that reads a mail (`judge deliver` without a daemon, once per mail).
Lark can keep what it built in a file (its `cache` option) and load it in a
few milliseconds. The file is a pickle: loading it runs whatever it holds, so
it is kept only in a folder of the judge's own (DATA/cache, made 0700), never
in the shared temporary folder Lark would pick by itself, and a folder that
another user could write to is not used.

`use(folder)` is called by the command line once its configuration is read;
until then (a test, `judge resolve`) every parser is built as before.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path
from typing import Any

_folder: Path | None = None


def use(folder: Path | None) -> None:
    """Keep built parsers in `folder` from now on (None: build every time)."""
    global _folder
    _folder = folder


def _owned(folder: Path) -> bool:
    """The folder exists (made here if need be) and is this user's alone to write."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def lark(text: str, name: str, **options: Any):
    """Lark(text, **options), loaded from the cache folder when it holds this
    grammar built with these options by this Lark and Python; else built, and
    kept there for the next process."""
    from lark import Lark, __version__

    folder = _folder
    if folder is None or not _owned(folder):
        return Lark(text, **options)
    described = repr(sorted((k, repr(v)) for k, v in options.items() if k != "transformer"))
    key = hashlib.sha256(f"{text}\0{described}\0{__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:16]
    path = folder / f"{name}-{key}.lark"
    if path.exists():
        # Lark checks the file's own hash of the grammar and options, and
        # builds the parser again from the text if the file is damaged.
        return Lark(text, cache=str(path), **options)
    # Written under a name of its own, then renamed: a process reading the
    # cache never meets half a file.
    partial = folder / f".{path.name}.{os.getpid()}"
    parser = Lark(text, cache=str(partial), **options)
    try:
        os.replace(partial, path)
    except OSError:
        pass  # not kept: the next process builds it again
    return parser
