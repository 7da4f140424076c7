"""The master's notices of a forming game: a mail for each player who joins
and each preference list that comes (nJudge's habit, the default), or one
digest a day (SET NOTICES DAILY): a 36-player game would otherwise mail its
master some seventy notices before it starts.

A held notice sets the game's tick (games.next_tick) a day ahead, if none
is set; the scheduler fires it and the method's tick sends the digest of
what came since the last one (the audit trail says when that was). The
last player's SIGNON, and everything once the game runs, are mailed at
once: they ask the master to act.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from judge import audit
from judge.store.models import Event, Submission

DIGEST_EVERY = timedelta(hours=24)
MODES = ("each", "daily")


def daily(game: Any) -> bool:
    return (game.params or {}).get("notices") == "daily"


def held(session: Any, now: datetime, game: Any) -> bool:
    """Whether a notice to the master waits for the daily digest (the tick
    is then set for it); False: mail it now."""
    if not daily(game) or game.state != "forming":
        return False
    if game.next_tick is None:
        game.next_tick = now + DIGEST_EVERY
    return True


def mark(session: Any, now: datetime, game: Any, why: str) -> None:
    """From `now` on, what comes is for the next digest (SET NOTICES DAILY,
    and each digest sent)."""
    audit.record(session, now, "digest", game_id=game.id, why=why)


def last_digest(session: Any, game: Any) -> datetime:
    at = session.scalars(select(Event.at).where(Event.game_id == game.id, Event.kind == "digest")
                         .order_by(Event.id.desc()).limit(1)).first()
    return at or game.created_at


def send_digest(session: Any, config: Any, now: datetime, game: Any) -> str | None:
    """The digest of what came since the last one, to the master; the
    operator's log line, or None if there is none to send."""
    from judge.games import active_players, notify, power_list, seats
    from judge.methods import method_of
    from judge.methods.interface import lists_of

    game.next_tick = None
    if game.state != "forming":
        return None
    since = last_digest(session, game)
    joined = [p for p in active_players(game) if p.joined_at is not None and p.joined_at >= since]
    changed = set(session.scalars(select(Submission.player_id).where(
        Submission.game_id == game.id, Submission.received_at >= since)))
    if not joined and not changed:
        return None
    lists: dict[str, Any] = {"rows": [], "describe": None}
    if (capability := lists_of(method_of(game))) is not None:
        lists = capability.digest(session, game)
    audit.record(session, now, "digest", game_id=game.id, why="sent", since=since.isoformat(),
                 joined=len(joined), lists=len(changed))
    notify(session, config, now, "gm/digest.txt.j2", [game.gm_address], game=game, since=since, joined=joined,
           changed=changed, seats=seats(game), players=len(active_players(game)), powers=power_list(game),
           **lists)
    return f"{game.name}: the master's daily digest"
