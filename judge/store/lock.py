"""A game's lock, and the store's faults that are worth trying again (the
game driver's, judge/driver/).

Every change to a game is made in a transaction that first takes the game's
row lock: PostgreSQL's SELECT ... FOR UPDATE (other games are not held up);
SQLite's database write lock (SQLite has no row locks: a writer holds the
whole file), taken before the row is read, so that what is read is the
newest state and nobody writes in between. The row's version (games.version,
SQLAlchemy's version counter) is the second line of defence: a write made
from a read that another process has overtaken fails with StaleDataError
instead of overwriting the newer state, and the work is done again.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar

from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.orm.exc import StaleDataError

from judge.store.models import Game

log = logging.getLogger(__name__)

T = TypeVar("T")


# What this session's transaction holds already, each kept with that
# transaction (a later transaction of the session finds nothing held):
# SQLite's write lock, and the games lock_games locked, by id.
_WRITE_LOCKED = "judge.store.lock.write_locked"
_HELD = "judge.store.lock.held"


def write_lock(session: Session) -> None:
    """SQLite: take the database's write lock now (a statement that writes
    nothing still takes it), so that the rows read next are the newest and
    no other process can change them before this transaction ends; once a
    transaction (it holds the lock until it ends). PostgreSQL: nothing; rows
    are locked one by one (lock_game)."""
    tx = session.get_transaction()
    if tx is not None and session.info.get(_WRITE_LOCKED) is tx:
        return
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("UPDATE games SET id = id WHERE 0"))
        session.info[_WRITE_LOCKED] = session.get_transaction()


def lock_game(session: Session, game_id: int, *, wait: bool = True) -> Game | None:
    """The game's row, locked until the transaction ends and read afresh
    (also if this session had it already). `wait=False`: None if another
    transaction holds it (PostgreSQL's SKIP LOCKED; a timer tries again at
    the next pass). A game lock_games locked in this transaction is not
    read again: nobody else can have changed it since."""
    held = _held(session)
    if game_id in held:
        return held[game_id]
    write_lock(session)
    game = session.scalars(select(Game).where(Game.id == game_id).with_for_update(skip_locked=not wait)
                           .execution_options(populate_existing=True)).first()
    if game is not None and "players" in game.__dict__:
        session.expire(game, ["players"])  # read again with the lock held, when next asked
    return game


def lock_games(session: Session, game_ids: list[int]) -> list[Game]:
    """Several games' rows at once (the scheduler's group: one statement,
    not one per game), each locked until the transaction ends, read afresh
    with its players; those another transaction holds are skipped (SKIP
    LOCKED: lock_game then looks for them again, as it would have). In the
    order of their ids, and never waiting: no deadlock with another locker."""
    write_lock(session)
    games = list(session.scalars(
        select(Game).where(Game.id.in_(game_ids)).order_by(Game.id).with_for_update(skip_locked=True)
        .options(selectinload(Game.players)).execution_options(populate_existing=True)))
    held = _held(session)
    for game in games:
        held[game.id] = game  # (also kept alive: the identity map holds objects weakly)
    return games


def _held(session: Session) -> dict[int, Game]:
    tx = session.get_transaction()
    mine = session.info.get(_HELD)
    if mine is None or mine[0] is not tx:
        mine = session.info[_HELD] = (tx, {})
    return mine[1]


# SQLSTATEs of faults that a fresh try can get past: a serialization
# failure, a deadlock, a lock not available, the connection's classes
# (08: connection exception; 57P01-57P03: the server shut down or
# restarting, as pg_terminate_backend and a failover do).
_TRANSIENT_STATES = {"40001", "40P01", "55P03", "57P01", "57P02", "57P03"}
_TRANSIENT_SQLITE = ("database is locked", "database table is locked", "disk i/o error")


def is_transient(err: BaseException | None) -> bool:
    """Whether `err` (or what caused it) is a fault of the store's
    connection or of a race, not a bug: the work is worth doing again on a
    fresh connection."""
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, StaleDataError):
            return True  # another process wrote the game since it was read
        if isinstance(err, DBAPIError):
            if err.connection_invalidated:
                return True
            orig = err.orig
            state = getattr(orig, "sqlstate", None) or getattr(getattr(orig, "diag", None), "sqlstate", None)
            if state and (state in _TRANSIENT_STATES or state.startswith("08")):
                return True
            if any(s in str(orig).lower() for s in _TRANSIENT_SQLITE):
                return True
        if type(err).__module__.startswith("psycopg") and type(err).__name__ in ("OperationalError",
                                                                                  "InterfaceError"):
            return True  # psycopg's own, raised where SQLAlchemy did not wrap it
        err = err.__cause__ or err.__context__
        seen += 1
    return False


# A transient fault is tried again this many times, waiting a little longer
# each time (a restarting server takes seconds); after that the work is left
# as it is for the next pass, never set aside as a bug.
RETRIES = 6
BACKOFF = 0.1  # seconds, doubled after each try


def retrying(work: Callable[[], T], what: str, *, retries: int = RETRIES, backoff: float = BACKOFF,
             sleep: Callable[[float], None] = time.sleep) -> T:
    """work(), tried again after a transient fault of the store; the last
    transient fault, or any other error, is raised."""
    delay = backoff
    for attempt in range(retries + 1):
        try:
            return work()
        except Exception as err:
            if attempt == retries or not is_transient(err):
                raise
            log.warning("%s: %s; trying again in %.1f s", what, _short(err), delay)
            sleep(delay)
            delay = min(delay * 2, 5.0)
    raise AssertionError("unreachable")


def _short(err: BaseException) -> str:
    return " ".join(f"{type(err).__name__}: {err}".split())[:300]
