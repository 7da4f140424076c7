"""A line of a mail -> a Payola Tic-Tac-Toe command (grammars/pt3.lark).

The grammar is loaded once (LALR, commands built while parsing). A line it
refuses raises Pt3SyntaxError, the judge's CommandSyntaxError: line, column,
what was expected there and what stood there instead.
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Transformer, UnexpectedInput

from judge.methods.pt3.engine import AskAdvice, Bid, Command, SetAdvice, SetBalance, SetPlaces, SetSeason, SetSide
from judge.resources import data_dir
from judge.syntax.errors import CommandSyntaxError, fault
from judge.syntax.lines import MAX_LINE_LENGTH, read_line  # noqa: F401 (MAX_LINE_LENGTH: this module's limit too)

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
    text = (data_dir("grammars") / "pt3.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", maybe_placeholders=True, transformer=_ToCommands())


def claims(line: str) -> bool:
    """Whether a line is PT3's (its first word, or SET and its second):
    those lines never reach the command grammar."""
    words = line.strip().split()
    if not words:
        return False
    first = words[0].upper()
    return first in OWN_WORDS or (first == "SET" and len(words) > 1 and words[1].upper() in SETTINGS)


def _describe(expected: set[str]) -> str:
    names, keywords = [], []
    for term in sorted(expected):
        if term in _EXPECTED:
            if _EXPECTED[term]:
                names.append(_EXPECTED[term])
            continue
        try:
            value = getattr(_parser().get_terminal(term).pattern, "value", term)
        except KeyError:
            continue
        keywords.append(value.upper() if value.isalpha() else f"'{value}'")
    if {"BID", "ADVICE"} <= set(keywords):
        return _COMMANDS
    if keywords:
        names.append("one of " + ", ".join(sorted(set(keywords))) if len(keywords) > 1 else keywords[0])
    return " or ".join(names) if names else "something else"


def parse_line(text: str, line_no: int = 1) -> Command:
    """One line -> its command; Pt3SyntaxError if it is none. Never raises
    anything else."""
    return read_line(text, line_no, parse=lambda line: _parser().parse(line), error=Pt3SyntaxError, commands=_COMMANDS,
                     syntax_error=_syntax_error)


def _syntax_error(err: UnexpectedInput, line: str, line_no: int) -> Pt3SyntaxError:
    end = len(line.rstrip()) + 1
    column, expected = fault(err, line)
    rest = line[column - 1:].split(None, 1) if column < end else []
    hint = f"Instead '{rest[0][:20]}'." if rest else "Instead the line ends."
    if line.split()[0].upper() == "BID":
        hint += " Send, for example: BID 3.25 B2 (the amount, then the square A1..C3 or 1..9)."
    return Pt3SyntaxError(line_no, column, line, _describe(expected) if expected else _COMMANDS, hint)
