"""Who may bid in a Blind Auction, and until when.

Until the deadline, every player. Once it has passed with players missing
(the game *waits* for its master), the bids in stand, and only a
replacement the master names then may still bid: until the master's
PROCESS, as a PlayDiplomacy GM lets a newcomer bid. A new deadline the
master sets then (SET DEADLINE) opens the auction again for the players
whose bids were not in when it closed (the replacement, a player who sent
nothing), and only for them; at it the judge resolves, or asks again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select

from judge.deadlines import format_time
from judge.store.models import Submission

UNTIL_PROCESS = "until the master processes the auction (PROCESS)"
BEFORE_PROCESS = "before the master processes the auction (PROCESS)"


def closed_at(game: Any) -> datetime | None:
    """When the deadline closed the bids in; None while the first deadline is ahead."""
    if game.bids_closed_at is not None:
        return game.bids_closed_at
    if game.state == "waiting":
        return game.deadline
    return None


def sent_before(session: Any, game: Any, player: Any, when: datetime) -> bool:
    """Whether the player had sent a list (valid or not) before `when`."""
    return session.scalars(select(Submission.id).where(
        Submission.game_id == game.id, Submission.player_id == player.id, Submission.received_at < when)
        .limit(1)).first() is not None


def late(session: Any, game: Any, player: Any) -> bool:
    """Whether the player may still bid after the auction closed: named
    after it (a replacement), or, once a new deadline reopened it, a player
    who had sent nothing by the close."""
    closed = closed_at(game)
    if closed is None:
        return False
    if player.joined_at is not None and player.joined_at >= closed:
        return True
    return game.state == "bidding" and not sent_before(session, game, player, closed)


def refusal(session: Any, game: Any, player: Any, now: datetime) -> str | None:
    """Why the player's bids are not taken now, or None."""
    closed = closed_at(game)
    if game.state == "waiting":
        if late(session, game, player):
            return None
        return (f"the deadline of ?{game.name} ({format_time(game.deadline)}) has passed; bids are closed"
                + (" and yours stand" if sent_before(session, game, player, closed) else ""))
    if game.state != "bidding":
        return f"the auction of ?{game.name} is not open for bids (it is {game.state})"
    if game.deadline and now >= game.deadline:
        return f"the deadline of ?{game.name} ({format_time(game.deadline)}) has passed; bids are closed"
    if closed is not None and sent_before(session, game, player, closed):
        return (f"the auction of ?{game.name} closed at {format_time(closed)} with your bids in, and they "
                f"stand: the new deadline, {format_time(game.deadline)}, is for the players whose bids were "
                "not in")
    return None


def until(game: Any) -> str:
    """Until when a player who may bid now may change their bids."""
    if game.state == "waiting":
        return UNTIL_PROCESS
    return f"until the deadline, {format_time(game.deadline)}"


def before(game: Any) -> str:
    """By when a player who may bid now must send a valid list."""
    if game.state == "waiting":
        return BEFORE_PROCESS
    return f"before {format_time(game.deadline)}"
