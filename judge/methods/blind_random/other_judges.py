"""What the shell asks of blind-random's protocol with other judges (its
Method's THIRD_PARTIES; judge.methods.interface): which mail lines one judge
sends another, and this judge's runs as the third party of other judges'
games, which have no row in `games`, for `judge games` and `judge log`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judge import audit
from judge.methods.blind_random.models import BlindRun
from judge.methods.blind_random.runs import tp_runs, tp_status
from judge.methods.blind_random.syntax import judge_to_judge

__all__ = ["judge_to_judge", "run_events", "run_line", "runs"]


def runs(session: Session) -> list[dict[str, Any]]:
    """This judge's runs as the third party, newest first."""
    query = select(BlindRun).where(BlindRun.role == "third-party").order_by(BlindRun.id.desc())
    return [{"game": r.game, "role": "third party", "gm": r.gm, "started": r.created_at.isoformat(),
             "state": tp_status(r)} for r in session.scalars(query)]


def run_line(row: dict[str, Any]) -> str:
    return f"{row['game']:<16} third party of {row['gm']}'s game, round started {row['started'][:16]}: {row['state']}"


def run_events(session: Session, game: str) -> list[dict[str, Any]] | None:
    """Every event of this judge's runs as the third party of `game` (a game
    of another judge), oldest run first; None if it has none."""
    found = tp_runs(session, game.lstrip("?"), finished=True)
    if not found:
        return None
    return [e for r in reversed(found) for e in audit.run_events(session, r.id, r.created_at)]
