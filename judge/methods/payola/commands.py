"""A line of a Payola mail -> a command (grammars/payola_commands.lark),
besides the offer sheet's lines (payola-core's grammars/payola.lark).

Which lines are Payola's: `claims` says, before any parsing, from the first
words: SET ACCEPT, TRANSFER, LEDGER, BALANCE, WAIVE, BUILD, DISBAND,
REMOVE, the GM's SET BALANCE / SET POWER / SET ... HOURS / SET RULE / SET
TAX / SET CAP / SET DUMMY and PROCESS, and
the lines of an offer sheet or of a retreat or adjustment order (a line
that starts with a digit, "!" or a unit, "A PAR ..."). A claimed line the
grammar refuses raises PayolaSyntaxError (line, column, caret, expected).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from lark import Lark, LarkError, Transformer, UnexpectedInput

from judge.syntax.errors import CommandSyntaxError, fault
from judge.syntax.lines import MAX_LINE_LENGTH, grammar

_OWN = {"TRANSFER", "LEDGER", "BALANCE", "WAIVE", "BUILD", "DISBAND", "REMOVE", "PROCESS"}
_SET = {"ACCEPT", "BALANCE", "POWER", "MOVEMENT", "RETREAT", "ADJUSTMENT", "RULE", "RULES", "TAX", "CAP", "DUMMY",
        "DUMMIES"}
# An offer line (payola-core's grammar) or a unit's order: "4 : A PAR - BUR",
# "!2 : ...", ": A PAR H" (DPjudge: no amount is 0), "A PAR - BUR" (a bare
# order), "ARMY PARIS HOLDS" (DPjudge's words), "F STP/SC R BOT".
_SHEET_OR_ORDER = re.compile(r"^\s*(\d|[!:>@&]|[AF]\s+[A-Z]{3}|(ARMY|FLEET)\s)", re.IGNORECASE)


class PayolaSyntaxError(CommandSyntaxError):
    """A claimed line that is no Payola command."""


@dataclass(frozen=True)
class SetAccept:
    letters: str


@dataclass(frozen=True)
class Transfer:
    amount: int
    to: str


@dataclass(frozen=True)
class Ledger:
    pass


@dataclass(frozen=True)
class Order:
    """A retreat or adjustment order, as the diplomacy package writes it."""

    text: str


@dataclass(frozen=True)
class SetBalance:
    amount: int


@dataclass(frozen=True)
class SetPower:
    player: str
    power: str


@dataclass(frozen=True)
class SetHours:
    kind: str  # movement, retreat, adjustment
    hours: float


@dataclass(frozen=True)
class Process:
    pass


@dataclass(frozen=True)
class SetRules:
    """SET RULE EBAYOLA -ZEROSUM: rules added, and taken away (a leading -);
    SET RULE NONE: `clear`, all taken away first."""

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    clear: bool = False


@dataclass(frozen=True)
class SetTax:
    amount: int | None  # None: SET TAX NONE
    centre: str | None = None  # SET TAX PAR 5: one centre's value


@dataclass(frozen=True)
class SetCap:
    amount: int | None  # None: SET CAP NONE


@dataclass(frozen=True)
class SetDummies:
    powers: tuple[str, ...]  # (): SET DUMMY NONE


def claims(line: str) -> bool:
    words = line.strip().split()
    if not words:
        return False
    first = words[0].upper()
    if first in _OWN:
        return True
    if first == "SET":
        return len(words) > 1 and words[1].upper() in _SET
    return bool(_SHEET_OR_ORDER.match(line))


def is_unit_line(line: str) -> bool:
    """An offer line or a unit's order (not one of the other commands)."""
    words = line.strip().split()
    return bool(words) and words[0].upper() not in _OWN and words[0].upper() != "SET" \
        and bool(_SHEET_OR_ORDER.match(line))


class _ToCommands(Transformer):
    def set_accept(self, c):
        return SetAccept(str(c[0]).upper())

    def transfer(self, c):
        return Transfer(int(c[0]), str(c[-1]))

    def ledger(self, c):
        return Ledger()

    def retreat(self, c):
        return Order(f"{c[0].upper()} {c[1].upper()} R {c[2].upper()}")

    def disband(self, c):
        return Order(f"{c[0].upper()} {c[1].upper()} D")

    def build(self, c):
        return Order(f"{c[0].upper()} {c[1].upper()} B")

    def waive(self, c):
        return Order("WAIVE")

    def set_balance(self, c):
        return SetBalance(int(c[0]))

    def set_power(self, c):
        return SetPower(str(c[0]), str(c[1]))

    def set_hours(self, c):
        return SetHours(str(c[0]).lower(), float(c[1]))

    def process(self, c):
        return Process()

    def set_rule(self, c):
        names = [str(x).upper() for x in c]
        if names == ["NONE"]:
            return SetRules(clear=True)
        return SetRules(add=tuple(n for n in names if not n.startswith("-")),
                        remove=tuple(n[1:] for n in names if n.startswith("-")))

    def set_tax(self, c):
        if len(c) == 2:
            return SetTax(int(c[1]), str(c[0]).upper())
        return SetTax(None if c[0].type == "NONE" else int(c[0]))

    def set_cap(self, c):
        return SetCap(None if c[0].type == "NONE" else int(c[0]))

    def set_dummy(self, c):
        if len(c) == 1 and c[0].type == "NONE":
            return SetDummies(())
        return SetDummies(tuple(str(x).title() for x in c))

    def start(self, c):
        return c[0]


_EXPECTED = {
    "ACCEPT_LIST": "the powers' letters, like FEGRAIT?",
    "AMOUNT": "a whole number of AgP",
    "HOURS": "a number of hours",
    "UNIT_TYPE": "a unit (A or F)",
    "LOC": "a province (three letters, like PAR)",
    "PHASE_KIND": "MOVEMENT, RETREAT or ADJUSTMENT",
    "POWER_NAME": "a power's name, like England",
    "NAME": "a player's address",
    "RULE_NAME": "a rule's name, like EBAYOLA",
    "NONE": "NONE",
    "$END": "the end of the line",
}


@cache
def _parser() -> Lark:
    return grammar("payola_commands", _ToCommands())


def _keyword(term: str) -> str:
    try:
        value = getattr(_parser().get_terminal(term).pattern, "value", "")
    except KeyError:
        return ""
    return value.upper() if value.isalpha() else f"'{value}'" if value else ""


def parse_line(text: str, line_no: int = 1):
    """One claimed line -> its command, or PayolaSyntaxError. Never raises
    anything else."""
    line = "".join(" " if ch.isspace() else ch for ch in text.rstrip("\r\n"))
    if len(line) > MAX_LINE_LENGTH:
        raise PayolaSyntaxError(line_no, 1, line[:80] + "...", f"a line of at most {MAX_LINE_LENGTH} characters")
    try:
        return _parser().parse(line)
    except UnexpectedInput as err:
        column, expected = fault(err, line)
        names = sorted({_EXPECTED[t] if t in _EXPECTED else _keyword(t) for t in expected} - {""})
        names = names or ["a Payola command"]
        raise PayolaSyntaxError(line_no, column, line, " or ".join(names)) from err
    except LarkError as err:
        raise PayolaSyntaxError(line_no, 1, line, "a Payola command") from err
