"""Where each method's result texts live, by method name (each Method's
RESULTS, judge.methods.interface).

Its own module, free of the store: `judge resolve --format text` renders
these without loading SQLAlchemy (judge.games asks the game's Method).
"""

from __future__ import annotations

from typing import Any

from judge.methods import METHODS


def __getattr__(name: str) -> Any:
    # templates/results/<method>/{player,master}.txt.j2, forum.bbcode.j2, offline.txt.j2
    if name == "RESULT_TEMPLATES":
        return {n: m.RESULTS for n, m in METHODS.items() if m.RESULTS}
    raise AttributeError(name)
