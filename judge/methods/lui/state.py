"""The Lowest Unique Integer game's data (engine.py's state machine reads and
writes it): the state, the players, bids and seats, and the events a move
makes for the shell to word and mail. Pure and immutable. engine.py
names all of it, as before the split (issue 26).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from judge.methods.lui.commands import Command
from judge.methods.lui.settings import Settings
from judge.methods.lui.tiebreak import Tiebreak

NAME = "lui"
GM = None  # the actor of the GM's commands

PREGAME, AUCTION, EC, GIFTS, FINISHED = "pregame", "auction", "ec", "gifts", "finished"


class GameError(ValueError):
    """A game that cannot be set up, or time asked to run backwards."""


# --------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Player:
    name: str
    chips: int  # held: starting + bought - paid for seats won (standing bids are not paid yet)
    garnets: int
    priority: int
    bought: int = 0  # chips bought
    fees: int = 0  # garnets paid as bid fees after fee_after_hours
    tol: int = 0
    board_mail: bool = True
    out: bool = False  # ejected by the GM: keeps what they hold, takes no further part


@dataclass(frozen=True)
class RosterChange:
    """The GM's EJECT (`new` None) or REPLACE (`new` took over `old`'s seat)."""

    at: float
    old: str
    new: str | None = None


@dataclass(frozen=True)
class Standing:
    seat: str
    player: str
    amount: int
    placed_at: float
    ends_at: float


@dataclass(frozen=True)
class WonSeat:
    seat: str
    player: str
    amount: int
    at: float
    garnets: int  # the prize as paid (the table may have changed since)
    priority: int


@dataclass(frozen=True)
class PregameBid:
    player: str
    seat: str
    amount: int
    at: float


@dataclass(frozen=True)
class BidRecord:
    """A valid bid, for the final results' history."""

    at: float
    player: str
    seat: str
    amount: int
    fee: int = 0
    pregame: bool = False
    outcome: str = "standing"  # standing, outbid, won, cancelled
    outcome_at: float | None = None


@dataclass(frozen=True)
class Gift:
    at: float
    giver: str
    to: str


@dataclass(frozen=True)
class State:
    settings: Settings
    players: tuple[Player, ...]  # the roster, in its order
    start: tuple[Player, ...]  # the players as the game began
    previous_priority: tuple[tuple[tuple[str, int], ...], ...] = ()  # earlier rounds' standings, latest first
    phase: str = PREGAME
    clock: float = 0.0
    pregame_bids: tuple[PregameBid, ...] = ()
    standing: tuple[Standing, ...] = ()  # in seat order
    won: tuple[WonSeat, ...] = ()  # in seat order
    history: tuple[BidRecord, ...] = ()
    last_bid_at: float = 0.0
    fee_announced: bool = False
    ended_at: float | None = None
    end_reason: str | None = None  # all-won, quiet, day-15
    winner: str | None = None
    winning_seat: str | None = None
    tol_awarded: tuple[tuple[str, int], ...] = ()  # at the end, before any gift
    tiebreak: Tiebreak | None = None
    ec_candidates: tuple[str, ...] = ()
    ec_chooser: str | None = None  # the winner, or None: the GM
    ec_deadline: float | None = None
    ec_overdue: bool = False
    ec: str | None = None
    ec_by: str | None = None  # rule, winner, gm
    gifts: tuple[Gift, ...] = ()
    gift_deadline: float | None = None
    gifts_overdue: bool = False
    finished_at: float | None = None
    roster_changes: tuple[RosterChange, ...] = ()

    def player(self, name: str) -> Player:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    def has_player(self, name: object) -> bool:
        return any(p.name == name for p in self.players)

    def is_in(self, name: object) -> bool:
        """A player still in the game (not ejected)."""
        return any(p.name == name and not p.out for p in self.players)

    def standing_on(self, seat: str) -> Standing | None:
        return next((s for s in self.standing if s.seat == seat), None)

    def won_seat(self, seat: str) -> WonSeat | None:
        return next((w for w in self.won if w.seat == seat), None)

    def committed(self, name: str) -> int:
        """Chips in `name`'s standing bids."""
        return sum(s.amount for s in self.standing if s.player == name)

    def chips_left(self, name: str) -> int:
        """Chips `name` may still bid (held, less standing bids)."""
        return self.player(name).chips - self.committed(name)

    @property
    def over(self) -> bool:
        return self.phase in (EC, GIFTS, FINISHED)


def new_game(settings: Settings, players: Sequence[str], *, garnets: Mapping[str, int] | None = None,
             priority: Mapping[str, int] | None = None,
             previous_priority: Sequence[Mapping[str, int]] = ()) -> State:
    """A game at the start of its pregame (clock -settings.pregame_hours).
    garnets and priority: each player's at the start (from earlier games of
    the season; 0 if not given); previous_priority: the standings of earlier
    rounds, the latest first, for the priority tiebreak."""
    names = list(players)
    if not names:
        raise GameError("a game needs players")
    for n in names:
        if not isinstance(n, str) or not n or n != n.strip() or any(ch.isspace() for ch in n):
            raise GameError(f"a player's name is one word, not {n!r}")
    if len(set(names)) != len(names):
        raise GameError("a player is named twice: " + ", ".join(sorted({n for n in names if names.count(n) > 1})))
    garnets, priority = dict(garnets or {}), dict(priority or {})
    for label, table in (("garnets", garnets), ("priority", priority)):
        unknown = sorted(set(table) - set(names))
        if unknown:
            who = "is not a player" if len(unknown) == 1 else "are not players"
            raise GameError(f"{label} given for {', '.join(map(str, unknown))}, who {who}")
        for n, v in table.items():
            if not isinstance(v, int) or isinstance(v, bool) or (label == "garnets" and v < 0):
                sign = " (not negative)" if label == "garnets" else ""
                raise GameError(f"{n}'s {label} must be a whole number{sign}, not {v!r}")
    roster = tuple(Player(n, settings.starting_chips, garnets.get(n, 0), priority.get(n, 0)) for n in names)
    previous = tuple(tuple((str(k), int(v)) for k, v in dict(s).items()) for s in previous_priority)
    return State(settings=settings, players=roster, start=roster, previous_priority=previous,
                 clock=-float(settings.pregame_hours))


# --------------------------------------------------------------------------
# Events: who must be told what (the shell words and mails them)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    at: float


@dataclass(frozen=True)
class Rejected(Event):
    """To `player` (None: the GM). Nothing changed."""

    player: str | None
    rule: str  # "1"-"4", garnet, seat, player, phase, gm, buy, prize, ec, tol
    message: str
    command: Command | None = None


@dataclass(frozen=True)
class PregameBidTaken(Event):
    """To the player: the bid is stored, to be processed when the pregame ends."""

    player: str
    seat: str
    amount: int
    replaced: PregameBid | None


@dataclass(frozen=True)
class AuctionOpened(Event):
    """To all: the pregame bids were processed in `order`."""

    order: tuple[str, ...]


@dataclass(frozen=True)
class BidPlaced(Event):
    """To the bidder."""

    player: str
    seat: str
    amount: int
    ends_at: float
    fee: int
    pregame: bool


@dataclass(frozen=True)
class Outbid(Event):
    """To `player`, at once."""

    player: str
    seat: str
    amount: int
    by: str
    new_amount: int


@dataclass(frozen=True)
class BoardChanged(Event):
    """The board, to `recipients` (players who did not SET BOARD MAIL OFF)."""

    recipients: tuple[str, ...]


@dataclass(frozen=True)
class BoardShown(Event):
    """BOARD: the board to `player` (None: the GM)."""

    player: str | None


@dataclass(frozen=True)
class BoardMailSet(Event):
    player: str
    on: bool


@dataclass(frozen=True)
class ChipsBought(Event):
    """To the buyer only."""

    player: str
    count: int
    cost: int
    chips: int
    garnets: int


@dataclass(frozen=True)
class PrizeSet(Event):
    """To the GM."""

    seat: str
    garnets: int
    priority: int


@dataclass(frozen=True)
class GmWarning(Event):
    message: str


@dataclass(frozen=True)
class SeatWon(Event):
    """To all: the timer of `player`'s bid ran out."""

    player: str
    seat: str
    amount: int
    garnets: int
    priority: int


@dataclass(frozen=True)
class FeeStarts(Event):
    """To all: from now on every new bid costs `fee` garnets."""

    fee: int


@dataclass(frozen=True)
class BidsCancelled(Event):
    """To all: the 15-day limit; these standing bids are void."""

    bids: tuple[Standing, ...]


@dataclass(frozen=True)
class GameOver(Event):
    """To all: the auction is over. `chooser` chooses the EC among
    `ec_candidates` by `ec_deadline` (None: the GM chooses) when there are
    several."""

    reason: str  # all-won, quiet, day-15
    winner: str | None
    seat: str | None
    amount: int | None
    tol: tuple[tuple[str, int], ...]
    ec_candidates: tuple[str, ...]
    chooser: str | None
    ec_deadline: float | None


@dataclass(frozen=True)
class EcDecided(Event):
    ec: str
    by: str  # rule, winner, gm


@dataclass(frozen=True)
class EcOverdue(Event):
    """To the GM: the winner did not choose in time; the GM chooses."""

    candidates: tuple[str, ...]


@dataclass(frozen=True)
class GiftsDue(Event):
    """To all: who must give how many ToL, and who may receive one."""

    owed: tuple[tuple[str, int], ...]
    eligible: tuple[str, ...]


@dataclass(frozen=True)
class TolGiven(Event):
    giver: str
    to: str


@dataclass(frozen=True)
class GiftsOverdue(Event):
    """To the GM: these players still owe gifts."""

    owed: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PlayerEjected(Event):
    """To all: the GM ejected `player`; their standing bids (or pregame bid)
    are cancelled; what they hold stays theirs."""

    player: str
    cancelled: tuple[Standing, ...]
    pregame_bid: PregameBid | None


@dataclass(frozen=True)
class PlayerReplaced(Event):
    """To all: `new` took over `old`'s seat: everything `old` held and did
    is now under `new`'s name."""

    old: str
    new: str


@dataclass(frozen=True)
class GameFinished(Event):
    """To all: the final standings (the shell reads them from the state).
    `kept`: extra ToL that nobody could receive (nobody eligible was left)."""

    kept: tuple[tuple[str, int], ...]


