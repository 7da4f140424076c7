"""Where the shipped data folders (grammars, templates) are.

In a wheel they are copied into the package (see pyproject.toml); in a source
checkout or an editable install they sit at the top of the repository.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"judge data folder {name!r} not found next to {_PKG}")


# The defaults the configuration (judge.config) and the light modules that
# must not import it (templating, the methods' caches) share.
DEFAULT_DOCS_URL = ""


def default_data_dir() -> Path:
    """$JUDGE_DATA_DIR, else $XDG_DATA_HOME/judge, else ~/.local/share/judge."""
    if os.environ.get("JUDGE_DATA_DIR"):
        return Path(os.environ["JUDGE_DATA_DIR"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "judge"
