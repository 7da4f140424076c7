"""Where the shipped data folders (grammars, templates) are.

In a wheel they are copied into the package (see pyproject.toml); in a source
checkout or an editable install they sit at the top of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"judge data folder {name!r} not found next to {_PKG}")
