"""What every mail command gets, and how it says no.

One module per command (eml_*.py) registers a handler for its syntax node.
A handler returns the text of its "done" line, or raises CommandRejected with
the reason the sender reads; any other exception is a bug (the runner
quarantines the mail and apologises).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, TypeVar

from sqlalchemy.orm import Session

from judge.config import Config
from judge.mail.inbound import InboundMail
from judge.store.models import Game, Player
from judge.syntax import nodes


@dataclass
class BidLines:
    """A mail's bid lines and its sender's own No Preference, gathered by the
    mail runner until its commands end, then handed to the game's method
    (its `bidding` capability, judge.methods.interface.Bidding) as one list."""

    entries: list[Any] = field(default_factory=list)  # the grammar's bid entries (power, amount)
    no_preference_lines: list[int] = field(default_factory=list)
    # How lines posted the forums' way were read ("line 4 read as Germany 20").
    readings: list[str] = field(default_factory=list)


class CommandRejected(Exception):
    """An expected refusal: the message tells the sender why and what to send."""


@dataclass
class Context:
    session: Session
    config: Config
    now: datetime
    mail: InboundMail
    inbound: Any  # the mail's InboundRow (judge.mailrunner): commands use its id
    game: Game | None = None
    role: str | None = None  # "player" or "master" once signed on
    player: Player | None = None
    submission: BidLines = field(default_factory=BidLines)
    submission_lines: list[int] = field(default_factory=list)
    stop: bool = False  # SIGNOFF seen, or a failed SIGNON: later lines are not run
    named_game: Game | None = None  # the game a SIGNON named, even if it failed (for the game's log)
    acting_master: bool = False  # after FOR player: the master enters that player's lines
    # Work to do once all the mail's lines have run (e.g. telling a player
    # what the master entered for them), in the same transaction.
    after: list[Callable[[], None]] = field(default_factory=list)
    # The lines the master entered after FOR, per player id: (game, player,
    # [{line, text, status, message}]), filled by the mail runner.
    entered: dict[int, tuple[Game, Player, list[dict[str, Any]]]] = field(default_factory=dict)
    # A line's answer shows a power of a blind game: the reply goes to this
    # registered address only, never to a Reply-To (docs/security.md).
    reveal_to: str | None = None
    # The third-party run of the blinding protocol a line was for (it has
    # no game on this judge): its log (`judge log`) finds the line by it.
    blind_run_id: int | None = None
    # What a game's method gathers from the mail's lines until the mail
    # ends (judge.driver.hooks), per game id; and the games whose end of
    # mail is already queued in `after`.
    scratch: dict[int, dict[str, Any]] = field(default_factory=dict)
    mail_ends: set[int] = field(default_factory=set)

    @property
    def log_game_id(self) -> int | None:
        game = self.game or self.named_game
        return game.id if game else None

    @property
    def sent_at(self) -> datetime:
        """When the sender sent this mail: its Date, but never later than
        the judge stored it (a forged future Date gains nothing); the time
        it was stored if it has no Date. Submissions are ordered by it, so a
        replayed older mail never replaces a newer list."""
        stored = self.inbound.received_at
        date = self.mail.date
        if date is None or date > stored:
            return stored
        return date

    @property
    def sender(self) -> str:
        assert self.mail.sender is not None
        return self.mail.sender

    def require_game(self) -> Game:
        if self.game is None:
            raise CommandRejected("no game yet: begin with SIGNON ?game password (or CREATE ?game password)")
        return self.game

    def require_master(self) -> Game:
        game = self.require_game()
        if self.role != "master":
            raise CommandRejected(f"only the master of ?{game.name} may do this: "
                                  f"sign on with SIGNON M{game.name} gmpassword")
        return game

    def require_master_in(self, states: tuple[str, ...], refusal: str) -> Game:
        """The master's game, if it is in one of `states`; else `refusal`."""
        game = self.require_master()
        if game.state not in states:
            raise CommandRejected(f"{refusal} (?{game.name} is {game.state})")
        return game

    def require_player(self) -> Player:
        self.require_game()
        if self.role != "player" or self.player is None:
            raise CommandRejected("only a player may do this: sign on with SIGNON ?game password")
        return self.player


N = TypeVar("N", bound=nodes.Node)
Handler = Callable[[Context, N], str]
HANDLERS: dict[type, Handler] = {}


def handles(node_type: type[N]) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[node_type] = fn
        return fn

    return register
