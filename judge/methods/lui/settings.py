"""Every number of a Lowest Unique Integer game, and the two published presets.

F11 and F8 are the seed's two versions; any field can be changed when a game
is set up (`preset("F8", timer_hours=12)`). Hours are counted on the game's
clock, whose 0 is the end of the pregame, when the auction opens.

The seed's prize picture is lost, so no preset knows what a seat gives its
winner. Both ship a placeholder, nothing (0 garnets, 0 priority) on every
seat, and `warnings()` tells the GM which seats still carry it until the
table is set (`SET PRIZE Z 3 1`, or the game's configuration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from judge.methods.lui.board import Board, BoardError

DAY = 24.0


class SettingsError(ValueError):
    """Settings with which no game can be run."""


@dataclass(frozen=True)
class Prize:
    """What a seat gives the player who wins it."""

    garnets: int
    priority: int


PLACEHOLDER = Prize(0, 0)


@dataclass(frozen=True)
class TolRules:
    """Tokens of Life at the end. The winner (lowest winning bid) gets
    `winner`; the winner of each seat next to the winning seat gets
    `adjacent`, and so does the winner again for each such seat nobody won
    when `unclaimed_to_winner` (both presets: "always 6" in F11, "an extra
    ToL" in F8)."""

    winner: int
    adjacent: int
    unclaimed_to_winner: bool = True

    def total(self) -> int | None:
        """How many ToL a game with a winner hands out; None if that depends
        on the seats won (unclaimed seats' tokens not given)."""
        return self.winner + 4 * self.adjacent if self.unclaimed_to_winner else None


@dataclass(frozen=True, kw_only=True)
class Settings:
    preset: str  # "F11", "F8", or the preset a custom game started from
    rows: int
    cols: int
    starting_chips: int  # chips each player starts with; also the EC's threshold
    chip_price: int  # garnets per chip bought
    pregame_hours: float = DAY  # the pregame; the auction opens at its end (clock 0)
    pregame_bids_hours: float = DAY  # how long pregame bids are taken, from the pregame's start
    timer_hours: float = DAY  # each standing bid's timer
    quiet_hours: float = DAY  # the game ends after this long with no new valid bid
    fee_after_hours: float = 10 * DAY  # bids placed after this cost bid_fee garnets
    bid_fee: int = 1
    cancel_after_hours: float = 15 * DAY  # standing bids cancelled, the game over
    ec_hours: float = DAY  # the winner's time to choose the EC among several
    gift_hours: float = DAY  # after which the GM hears who still owes ToL gifts
    tol: TolRules
    prizes: tuple[tuple[str, Prize], ...] = ()  # every seat, in reading order
    placeholder_seats: frozenset[str] = frozenset()  # seats still on the placeholder

    def __post_init__(self) -> None:
        try:
            board = Board(self.rows, self.cols)
        except BoardError as err:
            raise SettingsError(str(err)) from err
        if not self.prizes:
            object.__setattr__(self, "prizes", tuple((s, PLACEHOLDER) for s in board.seats))
            object.__setattr__(self, "placeholder_seats", frozenset(board.seats))
        _check(self, board)

    @property
    def board(self) -> Board:
        return Board(self.rows, self.cols)

    def prize(self, seat: str) -> Prize:
        return dict(self.prizes)[seat]

    def prize_table(self) -> dict[str, Prize]:
        return dict(self.prizes)

    def with_prize(self, seat: str, garnets: int, priority: int) -> Settings:
        """The same settings with seat's prize set (no longer a placeholder)."""
        if seat not in self.board:
            raise SettingsError(f"{seat!r} is no seat of this board ({self.board.describe()})")
        table = dict(self.prizes)
        table[seat] = Prize(garnets, priority)
        return replace(self, prizes=tuple(table.items()), placeholder_seats=self.placeholder_seats - {seat})

    def with_prizes(self, table: Mapping[str, tuple[int, int] | Prize]) -> Settings:
        out = self
        for seat, value in table.items():
            p = value if isinstance(value, Prize) else Prize(*value)
            out = out.with_prize(seat, p.garnets, p.priority)
        return out

    def warnings(self) -> list[str]:
        """What the GM is told until it is fixed."""
        if not self.placeholder_seats:
            return []
        seats = [s for s in self.board.seats if s in self.placeholder_seats]
        return [f"The prize table is a placeholder (0 garnets, 0 priority) on seat{'s' if len(seats) > 1 else ''} "
                f"{', '.join(seats)}: the seed's prize picture is lost. Set each seat's prize with "
                "SET PRIZE <seat> <garnets> <priority>."]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "tol":
                v = {"winner": v.winner, "adjacent": v.adjacent, "unclaimed_to_winner": v.unclaimed_to_winner}
            elif f.name == "prizes":
                v = {s: [p.garnets, p.priority] for s, p in v}
            elif f.name == "placeholder_seats":
                v = [s for s in self.board.seats if s in v]
            out[f.name] = v
        return out


_HOURS = ("pregame_hours", "pregame_bids_hours", "timer_hours", "quiet_hours", "fee_after_hours",
          "cancel_after_hours", "ec_hours", "gift_hours")


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check(s: Settings, board: Board) -> None:
    for name in _HOURS:
        v = getattr(s, name)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
            raise SettingsError(f"{name} must be a positive number of hours, not {v!r}")
    if s.pregame_bids_hours > s.pregame_hours:
        raise SettingsError(f"pregame bids are taken for {s.pregame_bids_hours} h, longer than the pregame "
                            f"({s.pregame_hours} h)")
    if not _whole(s.starting_chips) or s.starting_chips < 1:
        raise SettingsError(f"starting_chips must be a positive whole number, not {s.starting_chips!r}")
    if not _whole(s.chip_price) or s.chip_price < 1:
        raise SettingsError(f"chip_price must be a positive whole number of garnets, not {s.chip_price!r}")
    if not _whole(s.bid_fee) or s.bid_fee < 0:
        raise SettingsError(f"bid_fee must be a whole number of garnets (0 for none), not {s.bid_fee!r}")
    t = s.tol
    if not isinstance(t, TolRules) or not (_whole(t.winner) and _whole(t.adjacent)) or t.winner < 0 \
            or t.adjacent < 0:
        raise SettingsError(f"tol must give whole, non-negative numbers of tokens, not {t!r}")
    seats = [seat for seat, _ in s.prizes]
    if seats != list(board.seats):
        raise SettingsError(f"the prize table must name every seat once, in reading order ({board.describe()}); "
                            f"it names {', '.join(seats) or 'none'}")
    for seat, p in s.prizes:
        if not (isinstance(p, Prize) and _whole(p.garnets) and _whole(p.priority)) or p.garnets < 0 \
                or p.priority < 0:
            raise SettingsError(f"seat {seat}'s prize must be whole, non-negative garnets and priority, not {p!r}")
    if not s.placeholder_seats <= set(board.seats):
        raise SettingsError("placeholder_seats names seats not on the board")


F11 = Settings(preset="F11", rows=4, cols=3, starting_chips=20, chip_price=1,
               tol=TolRules(winner=2, adjacent=1, unclaimed_to_winner=True))
F8 = Settings(preset="F8", rows=3, cols=3, starting_chips=16, chip_price=2,
              pregame_bids_hours=23.0,  # "Pregame will last 23 hours, with results being revealed after 24 hours"
              tol=TolRules(winner=1, adjacent=1, unclaimed_to_winner=True))
PRESETS = {"F11": F11, "F8": F8}


def preset(name: str = "F11", **changes: Any) -> Settings:
    """A preset with some fields changed. Changing the board's size starts
    the prize table afresh (placeholder); `prizes` may be given as a mapping
    seat -> (garnets, priority), `tol` as a mapping of TolRules' fields."""
    key = next((k for k in PRESETS if k.casefold() == str(name).casefold()), None)
    if key is None:
        raise SettingsError(f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}")
    base = PRESETS[key]
    known = {f.name for f in fields(Settings)} - {"placeholder_seats", "preset"}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise SettingsError(f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                            f"the settings are {', '.join(sorted(known))}")
    prizes = changes.pop("prizes", None)
    if isinstance(changes.get("tol"), Mapping):
        changes["tol"] = TolRules(**changes["tol"])
    if "rows" in changes or "cols" in changes:
        changes.update(prizes=(), placeholder_seats=frozenset())
    try:
        out = replace(base, **changes)
    except TypeError as err:
        raise SettingsError(str(err)) from err
    if prizes is not None:
        if not isinstance(prizes, Mapping):
            raise SettingsError("prizes must map seats to [garnets, priority]")
        try:
            out = out.with_prizes({str(k).upper(): v for k, v in prizes.items()})
        except TypeError as err:
            raise SettingsError(f"a prize is [garnets, priority]: {err}") from err
    return out
