"""Deadlines: at a game's deadline, resolve it, or ask its master about the
players who sent nothing (the master then ejects, replaces, or decides No
Preference for them, and sends PROCESS).

Each game's deadline work runs in a transaction and a failure domain of its
own (judge.failures): an error there sets that game aside as stuck, and the
other games go on.
"""

from __future__ import annotations

import traceback
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge.config import Config
from judge.failures import quarantine_game
from judge.games import missing_players, notify, resolve_game, set_state
from judge.store.models import Game


# A blind-random game's master hears once a day whom the protocol waits for.
BLIND_NOTICE_EVERY = timedelta(days=1)


# At its deadline a game of these methods starts as START would; an
# auction's deadline closes its bidding, so a forming auction waits for START.
STARTS_AT_DEADLINE = ("preference", "random", "blind-random")


def due_games(session: Session, now: datetime) -> list[int]:
    running = Game.state == "bidding"
    forming = (Game.state == "forming") & Game.method.in_(STARTS_AT_DEADLINE)
    return list(session.scalars(
        select(Game.id).where(running | forming, Game.deadline.is_not(None), Game.deadline <= now)
        .order_by(Game.deadline)
    ))


def due_blind_notices(session: Session, now: datetime) -> list[int]:
    """Running blind-random games whose master has not heard for a day."""
    since = now - BLIND_NOTICE_EVERY
    return list(session.scalars(
        select(Game.id).where(Game.method == "blind-random", Game.state.in_(("bidding", "waiting")),
                              Game.started_at <= since,
                              (Game.missing_notified_at.is_(None)) | (Game.missing_notified_at <= since))
        .order_by(Game.id)
    ))


def tick(sessions: sessionmaker[Session], config: Config, now: datetime) -> list[str]:
    """Handle every game whose deadline has passed; one transaction each."""
    with sessions() as s:
        work = [(handle_deadline, i) for i in due_games(s, now)]
        work += [(blind_notice, i) for i in due_blind_notices(s, now)]
    done = []
    for handle, game_id in work:
        try:
            with sessions.begin() as s:
                outcome = handle(s, config, game_id, now)
        except Exception:
            quarantine_game(sessions, config, now, game_id, traceback.format_exc())
            done.append(f"game {game_id}: stuck")
            continue
        if outcome:
            done.append(outcome)
    return done


def _start_at_deadline(s: Session, config: Config, game: Game, now: datetime) -> str:
    """A preference, random or blind-random game at its deadline starts as
    START would; if it cannot, its master is told why, once (the deadline is
    cleared: a new one, or START, goes on)."""
    from judge.commands import CommandRejected
    from judge.commands.eml_start import begin

    deadline = game.deadline
    try:
        done = begin(s, config, now, game)
    except CommandRejected as err:
        game.deadline = None
        notify(s, config, now, "gm/deadline_not_started.txt.j2", [game.gm_address], game=game, deadline=deadline,
               reason=str(err))
        return f"{game.name}: could not start at its deadline"
    notify(s, config, now, "gm/deadline_started.txt.j2", [game.gm_address], game=game, deadline=deadline,
           done=done)
    return f"{game.name}: started at its deadline"


def blind_notice(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    """The daily notice to a blind-random game's master: the protocol's step
    and whom it waits for."""
    from judge import blindmail

    game = s.scalars(select(Game).where(Game.id == game_id).with_for_update(skip_locked=True)).first()
    if game is None or game.state not in ("bidding", "waiting"):
        return None
    since = now - BLIND_NOTICE_EVERY
    if game.missing_notified_at is not None and game.missing_notified_at > since:
        return None  # another judge process got there first
    game.missing_notified_at = now
    step, waiting = blindmail.game_status(s, game)
    notify(s, config, now, "gm/blind_waiting.txt.j2", [game.gm_address], game=game, step=step, waiting=waiting)
    return f"{game.name}: the master was told whom the blinding protocol waits for"


def handle_deadline(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    game = s.scalars(select(Game).where(Game.id == game_id).with_for_update(skip_locked=True)).first()
    if game is None or game.deadline is None or game.deadline > now:
        return None  # another judge process got there first
    if game.state == "forming" and game.method in STARTS_AT_DEADLINE:
        return _start_at_deadline(s, config, game, now)
    if game.state != "bidding":
        return None
    if game.method == "blind-random":
        # The blinding protocol runs by mail between the players, the third
        # party and this judge: there is nothing to resolve at a deadline.
        # The master learns that it has not finished (once: the game waits).
        from judge import blindmail

        set_state(s, game, "waiting", now)
        game.missing_notified_at = now
        step, waiting = blindmail.game_status(s, game)
        notify(s, config, now, "gm/blind_deadline.txt.j2", [game.gm_address], game=game,
               third_party=game.params.get("third_party"), step=step, waiting=waiting)
        return f"{game.name}: the blinding protocol is still running"
    missing = missing_players(s, game)
    if missing:
        set_state(s, game, "waiting", now)
        game.missing_notified_at = now
        notify(s, config, now, "gm/missing.txt.j2", [game.gm_address], game=game, missing=missing)
        return f"{game.name}: waiting for the master ({len(missing)} missing)"
    resolve_game(s, config, game, now)
    return f"{game.name}: resolved"
