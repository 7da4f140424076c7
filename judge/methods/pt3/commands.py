"""A line of a mail -> a Payola Tic-Tac-Toe command (grammars/pt3.lark).

The grammar is loaded once (LALR, commands built while parsing). A line it
refuses raises Pt3SyntaxError, the judge's CommandSyntaxError: line, column,
what was expected there and what stood there instead.
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Transformer

from judge.methods.pt3.engine import AskAdvice, Bid, Command, SetAdvice, SetBalance, SetPlaces, SetSeason, SetSide
from judge.syntax.errors import CommandSyntaxError
from judge.syntax.lines import expected_text, grammar, read_line

OWN_WORDS = {"BID", "ADVICE"}
SETTINGS = {"BALANCE", "X", "O", "SEASON", "PLACES", "ADVICE"}  # SET <word>: the method's, not the shell's


class Pt3SyntaxError(CommandSyntaxError):
    """A line that is no PT3 command."""


_EXPECTED = {
    "AMOUNT": "an amount (like 3.25)",
    "CELL": "a square (A1..C3, or 1..9)",
    "SQNUM": "",  # a square's number: said with CELL
    "NUMBER": "a whole number",
    "SIDE": "X or O",
    "ONOFF": "ON or OFF",
    "WHO": "a player's address or name",
    "$END": "the end of the line",
}
_COMMANDS = "a command (BID amount square, ADVICE; the GM: SET BALANCE, SET X, SET SEASON, SET PLACES, SET ADVICE)"


def square_index(text: str) -> int:
    """A1..C3 or 1..9 -> 0..8."""
    if text.isdigit():
        return int(text) - 1
    return "ABC".index(text[0].upper()) * 3 + int(text[1]) - 1


class _ToCommands(Transformer):
    def start(self, c):
        return c[-1]

    def bid(self, c):
        return Bid(written=str(c[0]), square=square_index(str(c[1])))

    def bid_reversed(self, c):
        return Bid(written=str(c[1]), square=square_index(str(c[0])))

    def advice(self, c):
        return AskAdvice()

    def set_balance(self, c):
        return SetBalance(side=str(c[0]).upper(), written=str(c[1]))

    def set_side(self, c):
        return SetSide(side=str(c[0]).upper(), who=str(c[1]))

    def set_season(self, c):
        return SetSeason(hours=int(c[0]))

    def set_places(self, c):
        return SetPlaces(places=int(c[0]))

    def set_advice(self, c):
        return SetAdvice(on=str(c[0]).upper() == "ON")


@cache
def _parser() -> Lark:
    return grammar("pt3", _ToCommands())


def claims(line: str) -> bool:
    """Whether a line is PT3's (its first word, or SET and its second):
    those lines never reach the command grammar."""
    words = line.strip().split()
    if not words:
        return False
    first = words[0].upper()
    return first in OWN_WORDS or (first == "SET" and len(words) > 1 and words[1].upper() in SETTINGS)


def _describe(expected: set[str]) -> str:
    return expected_text(expected, _EXPECTED, _parser(), _COMMANDS, {"BID", "ADVICE"})


def _example(line: str) -> str:
    """What a refused BID line's reply adds."""
    if line.split()[0].upper() == "BID":
        return " Send, for example: BID 3.25 B2 (the amount, then the square A1..C3 or 1..9)."
    return ""


def parse_line(text: str, line_no: int = 1) -> Command:
    """One line -> its command; Pt3SyntaxError if it is none. Never raises
    anything else."""
    return read_line(text, line_no, parser=_parser, error=Pt3SyntaxError, commands=_COMMANDS, describe=_describe,
                     hint=_example)
