"""What the game driver (judge/driver/) gives a method, and what a method
gives back: the whole of the shell a method may import.

A method that keeps its own state (LUI, PT3, Payola: judge.methods.interface
.LiveMethod) is a set of pure functions of a `GameView`, a snapshot of its
game as plain data, read under the game's lock; each returns an `Outcome`:
the new state, the next tick, the events for the audit trail, the mails to
queue, the reply to the line. The driver stores all of it in the
transaction that took the lock, or none of it (boardgame.io's Master: one
game-agnostic loop, the game as pure functions). A method never writes to
the store or the outbox, and reads no clock: the times it needs are
arguments (`at`, `now`), its randomness a seed the driver hands in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    from judge.variants import PowerList

# Keys of games.params that are the judge's own settings (SET REMINDERS),
# not the method's: a method's params_from never sees them.
JUDGE_PARAMS = frozenset({"reminders"})


@dataclass(frozen=True)
class PlayerView:
    """One row of a game's players (players, observers, take-over requests)."""

    id: int
    address: str
    name: str
    status: str  # active | ejected | replaced | observer | takeover
    power: str | None
    joined_at: datetime


@dataclass(frozen=True)
class GameView:
    """A game as its method reads it: the row, its players and the method's
    stored state, taken under the game's lock."""

    id: int
    name: str
    method: str
    variant: str
    powers: tuple[Mapping[str, str], ...]  # [{"name", "letter"}]
    params: Mapping[str, Any]  # games.params: the method's settings and the judge's (JUDGE_PARAMS)
    state: str  # forming | bidding | waiting | resolved | stuck
    deadline: datetime | None
    next_tick: datetime | None
    started_at: datetime | None
    gm_address: str
    method_state: Mapping[str, Any] | None
    players: tuple[PlayerView, ...]
    commitment: str | None = None
    # The secret behind the commitment (judge.commitment): a method puts it
    # in its last results only, when the game is over.
    secret: str | None = None
    version: int = 0

    @property
    def raw_params(self) -> dict[str, Any]:
        """The method's own settings (games.params less the judge's)."""
        return {k: v for k, v in self.params.items() if k not in JUDGE_PARAMS}

    @property
    def judge_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if k in JUDGE_PARAMS}

    def with_params(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """games.params with the method's settings `raw` and the judge's as they are."""
        return {**self.judge_params, **raw}

    @property
    def active(self) -> list[PlayerView]:
        return [p for p in self.players if p.status == "active"]

    @property
    def observers(self) -> list[PlayerView]:
        return [p for p in self.players if p.status == "observer"]

    def find_player(self, who: str) -> PlayerView | None:
        """A player named by address or by name (case ignored), active first."""
        key = who.strip().strip("<>").casefold()
        ordered = sorted(self.players, key=lambda p: p.status != "active")
        return (next((p for p in ordered if p.address.casefold() == key), None)
                or next((p for p in ordered if p.name.casefold() == key), None))

    def player_at(self, address: str) -> PlayerView | None:
        key = address.strip().strip("<>").casefold()
        return next((p for p in self.players if p.address.casefold() == key), None)

    @property
    def power_list(self) -> PowerList:
        from judge.variants import make_power_list

        return make_power_list([dict(p) for p in self.powers])


@dataclass(frozen=True)
class Actor:
    """Who sent a mail's line: its game's master, a player, or neither."""

    role: str | None  # "master", "player", or None
    player: PlayerView | None = None
    # The master entered the line in this player's name (FOR player).
    for_player: bool = False

    @property
    def master(self) -> bool:
        return self.role == "master"

    @property
    def may_send(self) -> bool:
        """The GM, or a player still in the game (an ejected or replaced one may not)."""
        return self.master or (self.role == "player" and self.player is not None and self.player.status == "active")


@dataclass(frozen=True)
class Mail:
    """A mail to queue: `template` (under templates/) rendered with
    `context`, the game and the judge's docs_url."""

    to: tuple[str, ...]
    template: str
    context: Mapping[str, Any]
    kind: str = "notice"  # notice | result (outbox.kind)
    private: bool = False  # never posted to a forum topic
    attachments: tuple[tuple[str, bytes, str], ...] = ()  # (file name, bytes, MIME type)


@dataclass(frozen=True)
class Seed:
    """The randomness a method's hook may use: the game's committed seed (its
    secret and the players' ENTROPY lines, judge.commitment), or a fresh one
    for a game without a secret; `entropy`: those lines as (player, text),
    which the last results reveal with the secret."""

    value: bytes
    entropy: tuple[tuple[str, str], ...] = ()


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()  # an Outcome field left as it is in the store


@dataclass
class Outcome:
    """What a method's hook asks the driver to do, all in one transaction."""

    # A mail line's answer: ("done" | "rejected", message); for begin and
    # roster_changed, ("done", what the master's reply says).
    reply: tuple[str, str] | None = None
    # The reply shows what only the sender may read (a balance): it goes to
    # the sender's registered address, never to a Reply-To.
    private_reply: bool = False
    method_state: Any = KEEP  # games.method_state (JSON-ready)
    next_tick: Any = KEEP  # datetime | None
    deadline: Any = KEEP  # datetime | None
    state: str | None = None  # the game's new life-cycle state (bidding, resolved)
    params: Mapping[str, Any] | None = None  # the new games.params
    powers: Mapping[str, str] | None = None  # player address -> power (players.power)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (audit kind, data)
    mails: list[Mail] = field(default_factory=list)
    record: Mapping[str, Any] | None = None  # {"seed", "input", "result", "reveal"}: the final record
    log: str | None = None  # the operator's log line
    tell_observers: bool = False  # the game started: its observers hear it

    def event(self, kind: str, **data: Any) -> None:
        self.events.append((kind, data))

    def mail(self, to: list[str] | tuple[str, ...], template: str, *, kind: str = "notice", private: bool = False,
             attachments: tuple[tuple[str, bytes, str], ...] = (), **context: Any) -> None:
        self.mails.append(Mail(tuple(to), template, context, kind, private, attachments))

    def merge(self, later: Outcome) -> Outcome:
        """This outcome followed by `later` (whose stored fields win)."""
        for name in ("method_state", "next_tick", "deadline"):
            if getattr(later, name) is not KEEP:
                setattr(self, name, getattr(later, name))
        for name in ("state", "params", "powers", "record", "log", "reply"):
            if getattr(later, name) is not None:
                setattr(self, name, getattr(later, name))
        self.private_reply = self.private_reply or later.private_reply
        self.tell_observers = self.tell_observers or later.tell_observers
        self.events += later.events
        self.mails += later.mails
        return self


class Refusal(Exception):
    """A method refuses what it was asked (START of a game it cannot start):
    the message tells the sender why and what to send."""


def done(message: str, **fields: Any) -> Outcome:
    return Outcome(reply=("done", message), **fields)


def rejected(message: str, **fields: Any) -> Outcome:
    return Outcome(reply=("rejected", message), **fields)


def template_words(path: str, strip: str | None = None) -> tuple[Callable[[], Any], Callable[..., str]]:
    """templates/<path>, a module of macros: (words, w). words() is its
    module, loaded when first asked, once; w(name, **kw) is its macro
    `name` as text, stripped of `strip` (white space by default)."""
    from functools import cache

    @cache
    def words() -> Any:
        from judge.templating import environment

        return environment().get_template(path).module

    def w(name: str, /, **kw: Any) -> str:
        # Positional-only: a macro may take an argument called `name` (LUI's
        # no_such_player did, and SET GARNETS for a player not signed on
        # crashed with a TypeError).
        return str(getattr(words(), name)(**kw)).strip(strip)

    return words, w


def render(template: str, **context: Any) -> str:
    """A template (under templates/) as text: a piece a method puts in a
    mail's context (a forum post, a position)."""
    from judge.templating import render as _render

    return _render(template, **context)


def format_time(when: datetime | None) -> str:
    """A time as every mail of the judge shows it (UTC)."""
    from judge.deadlines import format_time as _format

    return _format(when)
