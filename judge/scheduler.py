"""Deadlines: at a game's deadline, resolve it, or ask its master about the
players who sent nothing (the master then ejects, replaces, or decides No
Preference for them, and sends PROCESS)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge.config import Config
from judge.games import missing_players, notify, resolve_game, set_state
from judge.store.models import Game


def due_games(session: Session, now: datetime) -> list[int]:
    return list(session.scalars(
        select(Game.id).where(Game.state == "bidding", Game.deadline.is_not(None), Game.deadline <= now)
        .order_by(Game.deadline)
    ))


def tick(sessions: sessionmaker[Session], config: Config, now: datetime) -> list[str]:
    """Handle every game whose deadline has passed; one transaction each."""
    done = []
    with sessions() as s:
        ids = due_games(s, now)
    for game_id in ids:
        with sessions.begin() as s:
            game = s.scalars(select(Game).where(Game.id == game_id).with_for_update(skip_locked=True)).first()
            if game is None or game.state != "bidding" or game.deadline is None or game.deadline > now:
                continue  # another judge process got there first
            missing = missing_players(s, game)
            if missing:
                set_state(s, game, "waiting", now)
                game.missing_notified_at = now
                notify(s, config, now, "gm/missing.txt.j2", [game.gm_address], game=game, missing=missing)
                done.append(f"{game.name}: waiting for the master ({len(missing)} missing)")
            else:
                resolve_game(s, config, game, now)
                done.append(f"{game.name}: resolved")
    return done
