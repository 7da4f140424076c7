"""A line of a mail -> a Lowest Unique Integer command (grammars/lui.lark).

The grammar is loaded once (LALR, commands built while parsing). A line it
refuses raises LuiSyntaxError, the judge's CommandSyntaxError: line, column,
what was expected there and what stood there instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from lark import Lark, Transformer

from judge.syntax.errors import CommandSyntaxError
from judge.syntax.lines import expected_text, grammar, read_line
from judge.syntax.nodes import MethodCommand as Command



class LuiSyntaxError(CommandSyntaxError):
    """A line that is no LUI command."""


@dataclass(frozen=True)
class Bid(Command):
    seat: str  # upper case; checked against the board by the engine
    amount: int | None  # None: not a whole number (refused by rule 2)
    written: str  # the amount as written


@dataclass(frozen=True)
class Buy(Command):
    count: int = 1


@dataclass(frozen=True)
class ShowBoard(Command):
    pass


@dataclass(frozen=True)
class ChooseEc(Command):
    name: str


@dataclass(frozen=True)
class GiveTol(Command):
    name: str


@dataclass(frozen=True)
class SetBoardMail(Command):
    on: bool


@dataclass(frozen=True)
class SetPrize(Command):
    """The GM's: what winning `seat` gives."""

    seat: str
    garnets: int
    priority: int


@dataclass(frozen=True)
class Eject(Command):
    """The GM's EJECT (the shell's command, given to the engine through the
    method's roster_changed hook; a replay log holds it as the GM's line)."""

    name: str


@dataclass(frozen=True)
class ReplacePlayer(Command):
    """The GM's REPLACE: `new` takes over `old`'s seat in the game."""

    old: str
    new: str


@dataclass(frozen=True)
class SetSetting(Command):
    """The GM's setting before START (live.py's SET lines, read by
    parse_setting so that a number is a number: SET PLAYERS ², SET CHIPS ²
    crashed int()).
    `key`: preset, starting_chips, players, chip_price, timer_hours,
    ec_hours, gift_hours, garnets or priority; `who`: the player of a
    garnets or priority setting, as written."""

    key: str
    value: int | float | str
    who: str | None = None


# A setting's keyword -> the Settings field (or the game's own) it sets.
_SETTING_KEYS = {"CHIPS": "starting_chips", "PLAYERS": "players", "EC": "ec_hours", "GIFT": "gift_hours",
                 "GIFTS": "gift_hours", "GARNETS": "garnets", "PRIORITY": "priority"}


_EXPECTED = {
    "SEAT": "a seat's letter (like Z)",
    "AMOUNT": "a number of chips",
    "COUNT": "a whole number",
    "ONOFF": "ON or OFF",
    "SIGNED": "a whole number",
    "HOURS": "a number of hours",
    "COUNT_SETTING": "CHIPS or PLAYERS",
    "DEADLINE_OF": "EC or GIFT",
    "DURATION_OF": "PREGAME or QUIET",
    "BOARD_MODE": "BID, DIGEST or NONE",
    "DURATION": "a duration (like 6h, 2d or 90m)",
    "STANDING": "GARNETS or PRIORITY",
    "NAME": "a player's name",
    "$END": "the end of the line",
}
_COMMANDS = "a command (BID, BUY, BOARD, EC, GIVE TOL, SET BOARD MAIL, SET PRIZE)"


def _whole(text: str) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isdigit() else None


class _ToCommands(Transformer):
    def start(self, c):
        return c[-1]

    def bid(self, c):
        seat, amount = (c[0], c[1]) if c[0].type == "SEAT" else (c[1], c[0])
        return Bid(seat=str(seat).upper(), amount=_whole(str(amount)), written=str(amount))

    def buy(self, c):
        return Buy(count=1 if c[0] is None else int(c[0]))

    def board(self, c):
        return ShowBoard()

    def ec(self, c):
        return ChooseEc(name=str(c[0]))

    def give_tol(self, c):
        return GiveTol(name=str(c[0]))

    def set_board_mail(self, c):
        return SetBoardMail(on=str(c[0]).upper() == "ON")

    def set_prize(self, c):
        return SetPrize(seat=str(c[0]).upper(), garnets=int(c[1]), priority=int(c[2]))

    def eject(self, c):
        return Eject(name=str(c[0]))

    def replace_player(self, c):
        return ReplacePlayer(old=str(c[0]), new=str(c[1]))


@cache
def _parser() -> Lark:
    return grammar("lui", _ToCommands())


class _ToSettings(Transformer):
    def start(self, c):
        return c[-1]

    def set_prize(self, c):
        return SetPrize(seat=str(c[0]).upper(), garnets=int(c[1]), priority=int(c[2]))

    def set_preset(self, c):
        return SetSetting("preset", str(c[0]).upper())

    def set_count(self, c):
        return SetSetting(_SETTING_KEYS[str(c[0]).upper()], int(c[1]))

    def set_chip_price(self, c):
        return SetSetting("chip_price", int(c[0]))

    def set_hours(self, c):
        return SetSetting("timer_hours", float(c[0]))

    def set_deadline(self, c):
        return SetSetting(_SETTING_KEYS[str(c[0]).upper()], float(c[1]))

    def set_duration(self, c):
        text = str(c[1]).lower()
        unit = text[-1] if text[-1] in "mhd" else "h"
        number = float(text.rstrip("mhd"))
        hours = number / 60 if unit == "m" else number * 24 if unit == "d" else number
        return SetSetting(f"{str(c[0]).lower()}_hours", hours)

    def set_board_mails(self, c):
        return SetSetting("board_mails", str(c[0]).lower())

    def set_standing(self, c):
        return SetSetting(_SETTING_KEYS[str(c[0]).upper()], int(c[2]), who=str(c[1]))


@cache
def _settings_parser() -> Lark:
    return grammar("lui_settings", _ToSettings())


_SETTINGS = ("a setting (SET PRESET, SET PLAYERS, SET TIMER, SET CHIPS, SET CHIP PRICE, SET GARNETS, "
             "SET PRIORITY, SET EC DEADLINE, SET GIFT DEADLINE, SET PRIZE, SET PREGAME, SET QUIET, SET BOARDMAIL)")


def parse_setting(text: str, line_no: int = 1) -> SetSetting | SetPrize:
    """One of the GM's SET lines before START -> its setting (SET PRIZE: a
    SetPrize); LuiSyntaxError if it is none, naming the column (a number
    that int() would choke on, like "²", among them). Never raises
    anything else."""
    return read_line(text, line_no, parser=_settings_parser, error=LuiSyntaxError, commands=_SETTINGS,
                     describe=lambda expected: expected_text(expected, _EXPECTED, _settings_parser(), _SETTINGS,
                                                             {"SET"}))


def _describe(expected: set[str]) -> str:
    return expected_text(expected, _EXPECTED, _parser(), _COMMANDS, {"BID", "BUY", "BOARD"})


def parse_line(text: str, line_no: int = 1) -> Command:
    """One line (without its newline) -> its command; LuiSyntaxError if it
    is none. Never raises anything else."""
    return read_line(text, line_no, parser=_parser, error=LuiSyntaxError, commands=_COMMANDS, describe=_describe)


def parse_lines(text: str) -> list[tuple[int, Command | LuiSyntaxError]]:
    """Every line of `text` that is not blank, in order, with its number:
    its command, or the error that refused it."""
    out: list[tuple[int, Command | LuiSyntaxError]] = []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((k, parse_line(line, k)))
        except LuiSyntaxError as err:
            out.append((k, err))
    return out
