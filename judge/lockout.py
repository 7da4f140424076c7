"""Wrong passwords: a back-off, then a lock (issue 9: password brute force).

A password is tried only through attempt() (or try_password()). The count
of wrong tries in a row belongs to what the password protects, the game's
master password or one player's, never to the sender's address: a guesser
who writes from a new address for every guess is counted all the same.

- After `password_backoff_after` wrong tries in a row, each further try
  waits: within the back-off (`password_backoff_seconds`, doubling with each
  wrong try) a try is refused without the password being checked, and is
  not counted (so a flood of mails neither learns anything nor hastens the
  lock).
- After `password_lock_after` wrong tries the password is locked: refused
  even when right, until the master lifts a player's lock (UNLOCK player)
  or a moderator lifts any (`judge unlock GAME [PLAYER]`, unlock()).
- A right password clears the count.

The master is mailed when a back-off starts and when a lock happens; the
moderators too when the master's own password is locked (only they can
lift that). Time is the caller's `now` (the injected clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from judge import audit, passwords
from judge.config import Config
from judge.deadlines import format_time
from judge.store.models import Game, Player

# Past this the back-off stops doubling: with the default ten tries the lock
# comes long before, and a huge password_lock_after must not overflow a date.
_MAX_DELAY = timedelta(days=1)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    refusal: str = ""  # why not, for the sender's reply


class _Counter:
    """The master's counters (Game.gm_*) or one player's (Player.*), read
    and written alike."""

    def __init__(self, game: Game, player: Player | None) -> None:
        self.game, self.player = game, player
        self._row: Any = game if player is None else player
        self._prefix = "gm_" if player is None else ""

    def _get(self, name: str) -> Any:
        return getattr(self._row, self._prefix + name)

    @property
    def failures(self) -> int:
        return self._get("failures") or 0  # None on a row not yet flushed

    @property
    def backoff_until(self) -> datetime | None:
        return self._get("backoff_until")

    @property
    def locked(self) -> bool:
        return bool(self._get("locked"))

    def set(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self._row, self._prefix + name, value)

    @property
    def who(self) -> str:
        return "master" if self.player is None else self.player.address


def _delay(config: Config, failures: int) -> timedelta:
    doublings = min(failures - config.password_backoff_after, 40)
    return min(timedelta(seconds=config.password_backoff_seconds * 2 ** doublings), _MAX_DELAY)


def _right(game: Game, player: Player | None, password: str) -> bool:
    if player is None:
        return passwords.check_password(password, game.gm_password)
    if player.password_is_token:
        # A replacement's token is mailed in capitals from an alphabet with
        # no look-alikes (eml_eject.py): accept it typed in any case.
        password = password.upper()
    return passwords.check_password(password, player.password)


def attempt(session: Session, config: Config, now: datetime, game: Game, player: Player | None,
            password: str) -> Verdict:
    """Try `password` for the master of `game` (player None) or for
    `player`, under the rules above; the refusal says why and until when."""
    c = _Counter(game, player)
    what = f"master password for ?{game.name}" if player is None else f"password for ?{game.name}"
    if c.locked:
        return Verdict(False, _locked_text(game, player, what))
    if c.backoff_until is not None and now < c.backoff_until:
        return Verdict(False, f"{c.failures} wrong tries of the {what} in a row: this one was not checked. "
                              f"Try again after {format_time(c.backoff_until)}")
    if _right(game, player, password):
        if c.failures or c.backoff_until is not None:
            c.set(failures=0, backoff_until=None)
        return Verdict(True)
    failures = c.failures + 1
    c.set(failures=failures)
    if failures >= config.password_lock_after:
        c.set(locked=True, backoff_until=None)
        audit.record(session, now, "state", game_id=game.id, password_of=c.who, new="password locked",
                     failures=failures)
        _tell(session, config, now, c, failures, locked=True)
        return Verdict(False, f"wrong {what}. {_locked_text(game, player, what)}")
    if failures >= config.password_backoff_after:
        until = now + _delay(config, failures)
        c.set(backoff_until=until)
        audit.record(session, now, "state", game_id=game.id, password_of=c.who, new="password back-off",
                     failures=failures, until=until.isoformat())
        if failures == config.password_backoff_after:
            _tell(session, config, now, c, failures, until=until)
        return Verdict(False, f"wrong {what} ({failures} wrong in a row): the next try is not checked "
                              f"before {format_time(until)}")
    hint = ". Ask the master if you forgot it" if player is not None else ""
    return Verdict(False, f"wrong {what}{hint}")


def try_password(session: Session, config: Config, now: datetime, game: Game, player: Player | None,
                 password: str) -> bool:
    """attempt(), as a yes or no (the mail runner's check of a mail over
    the flood cap: judge.mailrunner)."""
    return attempt(session, config, now, game, player, password).ok


def unlock(session: Session, game: Game, player: Player | None, now: datetime) -> str:
    """Lift the lock and the back-off of the master's password (player None)
    or of `player`'s, and clear the count; says what there was to lift.
    Called by UNLOCK (the master, for a player) and `judge unlock`."""
    c = _Counter(game, player)
    if c.locked:
        was = f"it was locked after {c.failures} wrong tries"
    elif c.backoff_until is not None and now < c.backoff_until:
        was = f"it was in a back-off until {format_time(c.backoff_until)} after {c.failures} wrong tries"
    else:
        was = "it was not locked"
    c.set(failures=0, backoff_until=None, locked=False)
    audit.record(session, now, "state", game_id=game.id, password_of=c.who, new="password unlocked")
    return f"the {'master password' if player is None else 'password'} is unlocked ({was})"


def _locked_text(game: Game, player: Player | None, what: str) -> str:
    if player is None:
        return (f"The {what} is locked after too many wrong tries: not even the right one is accepted until a "
                f"moderator of this judge lifts the lock (judge unlock {game.name})")
    return (f"The {what} is locked after too many wrong tries: not even the right one is accepted until the "
            f"master sends UNLOCK {player.address}")


def _tell(session: Session, config: Config, now: datetime, c: _Counter, failures: int, *,
          locked: bool = False, until: datetime | None = None) -> None:
    """The master's notice (and the moderators', for the master's lock)."""
    from judge.games import notify  # games imports the whole resolution stack

    to = [c.game.gm_address]
    if locked and c.player is None:
        to += [m for m in config.moderators if m.casefold() != c.game.gm_address.casefold()]
    notify(session, config, now, "gm/password_alarm.txt.j2", to, game=c.game, player=c.player,
           failures=failures, locked=locked, until=until, lock_after=config.password_lock_after,
           moderators=bool(config.moderators))
