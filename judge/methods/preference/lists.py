"""The preference method's `lists` capability (judge.methods.interface.Lists):
what the shell asks of the players' lists it stores, in this method's words."""

from __future__ import annotations

from typing import Any

from judge.methods.preference.eml_preference import describe, enter_pasted, list_rows, pasted_line, stored_list

__all__ = ["digest", "enter_pasted", "pasted_line", "shown"]


def shown(submission: Any) -> str:
    """A valid list as the master's LIST shows it."""
    return describe(stored_list(submission))


def digest(session: Any, game: Any) -> dict[str, Any]:
    """What the master's daily digest shows of the lists (gm/digest.txt.j2's
    `rows` and `describe`)."""
    return {"rows": list_rows(session, game), "describe": describe}
