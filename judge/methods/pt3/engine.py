"""Payola Tic-Tac-Toe by mail: the pure engine (docs/pt3.md, "By mail").

state + command -> state and events (`apply`), state + clock -> state and
events (`tick`), and the next time the engine wants the clock
(`next_tick`). No I/O, no clock of its own: every time is an argument (an
aware datetime). Money is `Decimal`, never float: balances and bids are
decimals with at most `places` places, so every debit is exact.

Rules, as the seed gives them and where it is silent as chosen here:

- Season k places X's mark when k is odd, O's when it is even (X first).
- Both players bid, sealed, for the right to choose the empty square the
  mark goes on; a bid names the amount and the square. A player may replace
  a bid until the season resolves: when both bids are in, or at the
  season's deadline, whichever comes first.
- The higher bid chooses; a tie goes to O; only the winner pays.
- A missing bid at the deadline is no bid: any bid sent (0 included) beats
  it. With no bid from either, the mark goes on the first empty square in
  reading order and nobody pays (the game cannot stall).
- X wins with three X in a row; otherwise O wins, when the board is full.
  Three O in a row end nothing (the seed: O wins only when X fails).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

from judge.syntax.nodes import MethodCommand as Command

NAME = "pt3"
GM = "GM"  # the actor of the GM's commands
SIDES = ("X", "O")
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
ROWS = "ABC"
MAX_PLACES = 6
MAX_SEASON_HOURS = 24 * 60
# Balances stay below 10^12 with at most 6 places: 18 digits, so every
# debit is exact in Decimal's default 28-digit context (bids never exceed
# the balance).
MAX_BALANCE = Decimal(10) ** 12


class ParamError(ValueError):
    """Settings the game cannot start with."""


class GameError(ValueError):
    """A game that cannot be made (players)."""


def square_name(index: int) -> str:
    return f"{ROWS[index // 3]}{index % 3 + 1}"


def mark_of(season: int) -> str:
    return "X" if season % 2 == 1 else "O"


def x_line(board: str) -> tuple[int, ...] | None:
    return next((line for line in LINES if all(board[i] == "X" for i in line)), None)


def amount(text: str) -> Decimal:
    """A decimal as written ("3.25", "10", ".5"); ParamError if it is none."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation as err:
        raise ParamError(f"{text!r} is not an amount (write it like 12.50)") from err
    if not value.is_finite():
        raise ParamError(f"{text!r} is not an amount (write it like 12.50)")
    return value


def places_of(value: Decimal) -> int:
    """The decimal places `value` needs, read from its own digits: not
    through normalize(), which rounds to the context's 28 digits, so that
    99.9999999999999999999999999999999 came out as 100 with no places and a
    2-place game took it (issue 26)."""
    _, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int) or not any(digits):
        return 0  # zero, written with any number of zeros
    zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return max(0, -(exponent + zeros))


def money(value: Decimal, places: int) -> str:
    """An amount with the game's places: 3.5 -> "3.50" (an amount too long
    for that, like a refused bid of 40 digits, as written)."""
    try:
        return str(value.quantize(Decimal(1).scaleb(-places)))
    except InvalidOperation:
        return str(value)


# --------------------------------------------------------------------------
# The GM's settings (games.params)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    balance_x: str = "100"
    balance_o: str = "100"
    places: int = 2  # decimal places of bids and balances
    season_hours: int = 48  # each season's deadline, from the season's start
    advice: bool = False  # ADVICE by mail allowed
    x_player: str | None = None  # the address the GM made X; None: the first to sign on

    def as_dict(self) -> dict[str, Any]:
        return {"balance_x": self.balance_x, "balance_o": self.balance_o, "places": self.places,
                "season_hours": self.season_hours, "advice": self.advice, "x_player": self.x_player}

    def balances(self) -> dict[str, Decimal]:
        return {"X": amount(self.balance_x), "O": amount(self.balance_o)}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    raw = dict(raw or {})
    unknown = set(raw) - set(Params().as_dict())
    if unknown:
        raise ParamError(f"unknown settings: {', '.join(sorted(unknown))}")
    p = Params(**raw)
    try:
        places = int(p.places)
        hours = int(p.season_hours)
    except (TypeError, ValueError) as err:
        raise ParamError("places and season_hours are whole numbers") from err
    if not 0 <= places <= MAX_PLACES:
        raise ParamError(f"places must be 0..{MAX_PLACES}, not {places}")
    if not 1 <= hours <= MAX_SEASON_HOURS:
        raise ParamError(f"a season lasts 1..{MAX_SEASON_HOURS} hours, not {hours}")
    p = replace(p, places=places, season_hours=hours, advice=bool(p.advice),
                balance_x=str(p.balance_x), balance_o=str(p.balance_o))
    for side, value in p.balances().items():
        if value < 0:
            raise ParamError(f"{side}'s balance cannot be negative ({value})")
        if places_of(value) > places:
            raise ParamError(f"{side}'s balance {value} has more than {places} decimal places")
        if value >= MAX_BALANCE:
            raise ParamError(f"{side}'s balance must be less than 1000000000000")
    return p


def check_params(U: int, params: Params) -> list[str]:
    """Warnings for the GM: a balance of nothing makes the game one-sided."""
    b = params.balances()
    return [f"{side}'s balance is 0: {side} can only bid 0" for side in SIDES if b[side] == 0]


# --------------------------------------------------------------------------
# Commands (commands.py makes them from a mail's line)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Bid(Command):
    written: str  # the amount as written; checked by the engine
    square: int  # 0..8


@dataclass(frozen=True)
class AskAdvice(Command):
    pass


@dataclass(frozen=True)
class SetAdvice(Command):
    on: bool


@dataclass(frozen=True)
class SetSeason(Command):
    hours: int


@dataclass(frozen=True)
class SetBalance(Command):  # before START only (the shell's settings)
    side: str
    written: str


@dataclass(frozen=True)
class SetPlaces(Command):  # before START only
    places: int


@dataclass(frozen=True)
class SetSide(Command):  # before START only: SET X who, SET O who
    side: str
    who: str


# --------------------------------------------------------------------------
# The state
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class SealedBid:
    side: str
    amount: Decimal
    square: int
    at: datetime


@dataclass(frozen=True)
class Season:
    """A resolved season, as published: only the winning bid is shown."""

    number: int
    mark: str
    winner: str | None  # the side whose bid chose; None: no bid from either
    bid: Decimal | None  # the winning bid (what the winner paid)
    square: int
    by_deadline: bool
    at: datetime
    missing: tuple[str, ...]  # sides that sent no bid
    balances: tuple[Decimal, Decimal]  # X's and O's after the season
    board: str  # after the season


@dataclass(frozen=True)
class State:
    names: tuple[str, str]  # X's and O's name in the game
    board: str
    balances: tuple[Decimal, Decimal]  # X's, O's
    places: int
    season_hours: int
    advice: bool
    season: int  # the season being bid for (the last one once over)
    deadline: datetime | None  # the season's; None once over
    bids: tuple[SealedBid, ...]  # this season's, sealed
    seasons: tuple[Season, ...]
    winner: str | None = None  # "X" or "O" once over
    line: tuple[int, ...] | None = None  # X's line

    @property
    def over(self) -> bool:
        return self.winner is not None

    @property
    def mark(self) -> str:
        return mark_of(self.season)

    def balance(self, side: str) -> Decimal:
        return self.balances[SIDES.index(side)]

    def bid_of(self, side: str) -> SealedBid | None:
        return next((b for b in self.bids if b.side == side), None)

    def side_of(self, name: str) -> str | None:
        return next((s for s, n in zip(SIDES, self.names) if n == name), None)


def new_game(params: Params, names: tuple[str, str], start: datetime) -> State:
    """Season 1 opens at `start`. `names`: X's, then O's."""
    if len(names) != 2 or names[0] == names[1]:
        raise GameError("Payola Tic-Tac-Toe takes two players, X and O")
    b = params.balances()
    return State(names=tuple(names), board="." * 9, balances=(b["X"], b["O"]), places=params.places,
                 season_hours=params.season_hours, advice=params.advice, season=1,
                 deadline=start + timedelta(hours=params.season_hours), bids=(), seasons=())


# --------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    at: datetime


@dataclass(frozen=True)
class Rejected(Event):
    """A command refused; `reason` names the template line that says why."""

    actor: str
    reason: str  # over_balance, occupied, too_many_places, negative, over, advice_off, gm_only, not_gm
    command: Command
    square: int | None = None
    amount: Decimal | None = None
    balance: Decimal | None = None
    places: int | None = None


@dataclass(frozen=True)
class BidTaken(Event):
    side: str
    season: int
    amount: Decimal
    square: int
    replaced: SealedBid | None


@dataclass(frozen=True)
class SeasonResolved(Event):
    season: Season


@dataclass(frozen=True)
class GameOver(Event):
    winner: str
    line: tuple[int, ...] | None  # X's line; None: the board is full


@dataclass(frozen=True)
class AdviceAsked(Event):
    side: str


@dataclass(frozen=True)
class SettingChanged(Event):
    what: str  # "advice" or "season_hours"
    value: Any


# --------------------------------------------------------------------------
# Transitions
# --------------------------------------------------------------------------

def next_tick(state: State) -> datetime | None:
    return None if state.over else state.deadline


def tick(state: State, at: datetime) -> tuple[State, tuple[Event, ...]]:
    """Every deadline due by `at`, each at its own time."""
    events: list[Event] = []
    while not state.over and state.deadline is not None and state.deadline <= at:
        state, more = _resolve(state, state.deadline, by_deadline=True)
        events.extend(more)
    return state, tuple(events)


def apply(state: State, actor: str, command: Command, at: datetime) -> tuple[State, tuple[Event, ...]]:
    """`actor` ("X", "O" or GM) sends `command` at `at`. Deadlines due by
    then fire first, at their own times."""
    state, events = tick(state, at)
    state, more = _apply(state, actor, command, at)
    return state, events + more


def _no(state: State, actor: str, command: Command, at: datetime, reason: str, **data: Any
        ) -> tuple[State, tuple[Event, ...]]:
    return state, (Rejected(at, actor, reason, command, **data),)


def _apply(state: State, actor: str, command: Command, at: datetime) -> tuple[State, tuple[Event, ...]]:
    if isinstance(command, (SetAdvice, SetSeason)):
        if actor != GM:
            return _no(state, actor, command, at, "gm_only")
        if isinstance(command, SetAdvice):
            return replace(state, advice=command.on), (SettingChanged(at, "advice", command.on),)
        if not 1 <= command.hours <= MAX_SEASON_HOURS:
            return _no(state, actor, command, at, "season_hours")
        # From the next season on: the current deadline was announced.
        return replace(state, season_hours=command.hours), (SettingChanged(at, "season_hours", command.hours),)
    if actor == GM:
        return _no(state, actor, command, at, "not_gm")
    if isinstance(command, AskAdvice):
        if not state.advice:
            return _no(state, actor, command, at, "advice_off")
        if state.over:
            return _no(state, actor, command, at, "over")
        return state, (AdviceAsked(at, actor),)
    if isinstance(command, Bid):
        return _bid(state, actor, command, at)
    return _no(state, actor, command, at, "before_start")


def _bid(state: State, side: str, command: Bid, at: datetime) -> tuple[State, tuple[Event, ...]]:
    if state.over:
        return _no(state, side, command, at, "over")
    try:
        value = amount(command.written)
    except ParamError:
        return _no(state, side, command, at, "not_amount")
    if value < 0:
        return _no(state, side, command, at, "negative", amount=value)
    if places_of(value) > state.places:
        return _no(state, side, command, at, "too_many_places", amount=value, places=state.places)
    if value > state.balance(side):
        return _no(state, side, command, at, "over_balance", amount=value, balance=state.balance(side))
    if state.board[command.square] != ".":
        return _no(state, side, command, at, "occupied", square=command.square)
    old = state.bid_of(side)
    sealed = SealedBid(side, value, command.square, at)
    state = replace(state, bids=tuple(b for b in state.bids if b.side != side) + (sealed,))
    events: tuple[Event, ...] = (BidTaken(at, side, state.season, value, command.square, old),)
    if len(state.bids) == 2:
        state, more = _resolve(state, at, by_deadline=False)
        events += more
    return state, events


def _resolve(state: State, at: datetime, *, by_deadline: bool) -> tuple[State, tuple[Event, ...]]:
    x, o = state.bid_of("X"), state.bid_of("O")
    if x is not None and o is not None:
        chosen = x if x.amount > o.amount else o  # a tie goes to O
    else:
        chosen = x or o
    balances = list(state.balances)
    if chosen is None:
        square = state.board.index(".")  # nobody bid: the first empty square, free
        winner, paid = None, None
    else:
        square, winner, paid = chosen.square, chosen.side, chosen.amount
        balances[SIDES.index(winner)] -= paid
    board = state.board[:square] + state.mark + state.board[square + 1:]
    season = Season(state.season, state.mark, winner, paid, square, by_deadline, at,
                    tuple(s for s, b in (("X", x), ("O", o)) if b is None), tuple(balances), board)
    events: list[Event] = [SeasonResolved(at, season)]
    line = x_line(board)
    over = "X" if line else ("O" if "." not in board else None)
    state = replace(state, board=board, balances=tuple(balances), bids=(), seasons=state.seasons + (season,))
    if over:
        state = replace(state, winner=over, line=line, deadline=None)
        events.append(GameOver(at, over, line))
    else:
        state = replace(state, season=state.season + 1, deadline=at + timedelta(hours=state.season_hours))
    return state, tuple(events)
