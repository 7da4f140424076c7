"""Where each method's result texts live, by method name.

Its own module, free of the store: `judge resolve --format text` renders
these without loading SQLAlchemy (judge.games uses the same table).
"""

from __future__ import annotations

# templates/results/<method>/{player,master}.txt.j2, forum.bbcode.j2, offline.txt.j2
RESULT_TEMPLATES = {"blind-auction": "results/blind-auction", "preference": "results/preference",
                    "random": "results/random"}
