"""A Payola offer sheet -> its lines as frozen dataclasses (grammars/payola.lark).

Each line is parsed alone (LALR: linear in its length), so a line the
judge cannot read is refused with its line, column and a caret, and the rest
of the sheet stands. This module knows only the syntax: which units and
provinces exist, and which offers the rules forbid, is judge.methods.payola.
orders' business.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Callable, Iterator

from lark import Lark, LarkError, Transformer, UnexpectedInput

from judge.syntax.errors import CommandSyntaxError, fault
from judge.syntax.lines import MAX_LINE_LENGTH, grammar

MAX_LINES = 500  # 34 units with a dozen offers each is ~400 lines; the passes grow with it (docs/payola.md)
MAX_AMOUNT = 9999  # DPjudge's limit (PayolaGame.parseOffer), which also bounds the overspending passes
MAX_REPEAT = 99  # likewise: "2*5" repeats an offer at most 99 times
# Issue 24: a "+" piece is a bribe of its own (each cut, kept, passed); DPjudge
# has no limit, and 83 pieces a line on 499 lines a sheet took 24-35 s and
# 600 MB a phase. Players write one or two.
MAX_PIECES = 8
# A line's alternatives name orders of one unit, each once: no unit has many
# more than a dozen. Counted, like the pieces, before the parser reads the
# line (a 1,000-character line of 250 alternatives took ~7 ms to parse).
MAX_ALTERNATIVES = 16


class SheetSyntaxError(CommandSyntaxError):
    """A line that is no offer (or that breaks a limit of the syntax)."""


@dataclass(frozen=True)
class Piece:
    """One part of an amount: `repeat` offers of `amount`, each cut no lower
    than `plateau` until all of the power's offers are at their plateaus."""

    repeat: int
    amount: int
    plateau: int


@dataclass(frozen=True)
class UnitRef:
    type: str | None  # "A", "F", or None when the writer left it out
    loc: str  # as written, upper case (an abbreviation or a one-word name, maybe with /coast)


@dataclass(frozen=True)
class RawOrder:
    """An order as written: resolved against the map by orders.py."""

    unit: UnitRef | None  # None: an alternative after "|" that left its unit out
    kind: str  # "H", "-", "S" or "C"
    target: UnitRef | None = None  # the unit supported or convoyed
    dest: str | None = None  # where the unit (or the target) goes
    via: bool = False


@dataclass(frozen=True, kw_only=True)
class Line:
    line: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Offer(Line):
    kind: str  # ":" direct, "!" negative, ">" if it moves, "@" if it does not, "&" gift
    pieces: tuple[Piece, ...]
    orders: tuple[RawOrder, ...]  # the first and its alternatives, in the order written


@dataclass(frozen=True)
class Savings(Line):
    amount: int


_EXPECTED = {
    "COUNT": "an amount (a whole number)",
    "KIND": "an offer's kind (: ! > @ &)",
    "UTYPE": "a unit's type (A or F)",
    "LOC": "a province",
    "HOLD": "H",
    "MOVE": "-",
    "SUPPORT": "S",
    "CONVOY": "C",
    "VIA": "VIA",
    "VBAR": "| (another order)",
    "HASH": "#",
    "STAR": "*",
    "PLUS": "+",
    "DOLLAR": "$",
    "$END": "the end of the line",
}
_OFFER = "an offer, like 4 : A PAR - BUR"


class _ToLines(Transformer):
    def start(self, c):
        return c[0]

    def savings(self, c):
        return ("savings", c[0])

    def offer(self, c):
        amount, kind, order, *alternatives = c
        return ("offer", amount, str(kind), order, alternatives)

    def bare_offer(self, c):
        order, *alternatives = c
        return ("offer", None, ":", order, alternatives)

    def amount(self, c):
        return tuple(c)

    def piece(self, c):
        repeat, amount, plateau = c
        return (repeat, int(amount), plateau)

    def repeat(self, c):
        return int(c[0])

    def plateau(self, c):
        return "=" if c[0] is None else int(c[0])  # "8#" keeps the whole amount

    def order(self, c):
        unit, body = c
        return RawOrder(unit, *body)

    def alternative(self, c):
        if len(c) == 1:
            return RawOrder(None, *c[0])
        return RawOrder(c[0], *c[1])

    def unit(self, c):
        utype, loc = c
        return UnitRef(None if utype is None else str(utype).upper(), str(loc).upper())

    def hold(self, c):
        return ("H",)

    def move(self, c):
        return ("-", None, str(c[1]).upper(), c[2] is not None)

    def support(self, c):
        return ("S", c[1], None if c[3] is None else str(c[3]).upper())

    def convoy(self, c):
        return ("C", c[1], str(c[3]).upper())


@cache
def _parser() -> Lark:
    return grammar("payola", _ToLines())


@lru_cache(maxsize=8192)
def _parse(line: str) -> tuple:
    """A line's parse, kept: the game by mail checks each sheet when it
    comes and resolves the same lines at the deadline (the result is
    immutable; a line that fails is not kept)."""
    return _parser().parse(line)


def _describe(expected: set[str]) -> str:
    names = sorted({_EXPECTED.get(t, t) for t in expected if t in _EXPECTED})
    if not names:
        return _OFFER
    if {"COUNT", "UTYPE", "LOC"} <= expected:
        return _OFFER
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _clean(text: str, line_no: int) -> str:
    line = text.rstrip("\r\n")
    if len(line) > MAX_LINE_LENGTH:
        raise SheetSyntaxError(line_no, 1, line[:80] + "...", f"a line of at most {MAX_LINE_LENGTH} characters",
                               "Split it: one offer per line.")
    if line.isprintable() and line.isascii():
        return line  # the common case, without a look at each character
    line = "".join(" " if ch.isspace() or ch == "\ufeff" else ch for ch in line)
    for i, ch in enumerate(line):
        if not ch.isprintable():
            raise SheetSyntaxError(line_no, i + 1, line.replace(ch, "\ufffd"), "visible text",
                                   f"The character U+{ord(ch):04X} cannot stand here; delete it.")
    return line


def parse_line(text: str, line_no: int = 1) -> Offer | Savings | None:
    """One line -> its offer or savings request; None for a blank line or
    a comment alone. SheetSyntaxError (with line, column, caret) otherwise."""
    line = _clean(text, line_no)
    body = line.split("%", 1)[0]
    if not body.strip():
        return None
    if body.count("+") >= MAX_PIECES:
        # Refused before the parser reads it: issue 24's lines of 83 pieces cost ~2 ms each to parse.
        _too_many_pieces(line, line_no)
    if body.count("|") >= MAX_ALTERNATIVES:
        bar = [k for k, ch in enumerate(line) if ch == "|"][MAX_ALTERNATIVES - 1]
        raise SheetSyntaxError(line_no, bar + 1, line, f"at most {MAX_ALTERNATIVES} orders in an offer",
                               "A unit has no more orders than that: name each once.")
    try:
        kind, *rest = _parse(line)
    except UnexpectedInput as err:
        raise _syntax_error(err, line, line_no) from err
    except LarkError as err:
        raise SheetSyntaxError(line_no, 1, line, _OFFER, "The judge could not read this line.") from err
    written = line.split("%", 1)[0].strip()
    if kind == "savings":
        pieces = _pieces(rest[0], line, line_no, savings=True)
        return Savings(amount=sum(p.repeat * p.amount for p in pieces), line=line_no, text=written)
    amount, offer_kind, first, alternatives = rest
    pieces = _pieces(amount, line, line_no) if amount is not None else (Piece(1, 0, 0),)
    return Offer(kind=offer_kind, pieces=pieces, orders=(first, *alternatives), line=line_no, text=written)


def _pieces(raw: tuple, line: str, line_no: int, savings: bool = False) -> tuple[Piece, ...]:
    out = []
    column = len(line) - len(line.lstrip()) + 1
    if len(raw) > MAX_PIECES:
        _too_many_pieces(line, line_no)
    for repeat, amount, plateau in raw:
        if savings and plateau is not None:
            raise SheetSyntaxError(line_no, line.index("#") + 1, line, "no plateau on a savings request",
                                   "Write the amount to keep, like 25 $.")
        if amount > MAX_AMOUNT:
            raise SheetSyntaxError(line_no, column, line, f"an amount of at most {MAX_AMOUNT} AgP")
        if repeat is not None and not 1 <= repeat <= MAX_REPEAT:
            raise SheetSyntaxError(line_no, column, line, f"a repetition of 1 to {MAX_REPEAT} times")
        floor = amount if plateau == "=" else (plateau or 0)
        if floor > amount:
            raise SheetSyntaxError(line_no, column, line, f"a plateau no higher than the amount ({amount})",
                                   f"{amount}#{floor} cuts the offer to {floor}, more than it offers.")
        # A zero offer is one offer however often it is repeated (DPjudge, parseOffer).
        out.append(Piece(1 if amount == 0 else (repeat or 1), amount, floor))
    return tuple(out)


def _too_many_pieces(line: str, line_no: int) -> None:
    plus = [k for k, ch in enumerate(line) if ch == "+"][MAX_PIECES - 1]
    raise SheetSyntaxError(line_no, plus + 1, line, f"at most {MAX_PIECES} amounts joined by +",
                           "Write the rest as offers of their own lines, or add the amounts up.")


def parse_sheet(text: str, rewrite: Callable[[str], str | None] | None = None
                ) -> list[tuple[int, Offer | Savings | SheetSyntaxError]]:
    """Every line of a sheet that says something, in order, with its number:
    its offer or savings request, or the error that refused it. Lines past
    MAX_LINES are refused, one error for them all. `rewrite`: a line this
    grammar refuses, in another form a player may write (DPjudge's orders:
    orders.dpjudge_form, which needs the map), or None; the line is read
    again in that form, and refused as written if it still fails."""
    return list(iter_sheet(text, rewrite))


def iter_sheet(text: str, rewrite: Callable[[str], str | None] | None = None, first: int = 1
               ) -> Iterator[tuple[int, Offer | Savings | SheetSyntaxError]]:
    """parse_sheet a line at a time: a reader that stops early (a sheet
    over its limits) parses no more. `first`: the number of the text's
    first line (a line of a mail is checked alone, and is that mail's
    line `first`)."""
    for k, line in enumerate(text.splitlines(), start=first):
        if k - first >= MAX_LINES:
            yield k, SheetSyntaxError(k, 1, line[:80], f"a sheet of at most {MAX_LINES} lines",
                                      "The lines from here on are not read.")
            return
        try:
            parsed = parse_line(line, k)
        except SheetSyntaxError as err:
            parsed = _rewritten(line, k, rewrite) if rewrite is not None else None
            if parsed is None:
                yield k, err
                continue
        if parsed is not None:
            yield k, parsed


def _rewritten(line: str, k: int, rewrite: Callable[[str], str | None]) -> Offer | Savings | None:
    try:
        other = rewrite(_clean(line, k))
        if other is None:
            return None
        parsed = parse_line(other, k)
    except SheetSyntaxError:
        return None
    # The line stays as the player wrote it (the results copy the sheet).
    return None if parsed is None else replace(parsed, text=line.split("%", 1)[0].strip())


def _syntax_error(err: UnexpectedInput, line: str, line_no: int) -> SheetSyntaxError:
    end = len(line.rstrip()) + 1
    column, expected = fault(err, line)
    rest = line[column - 1:].split(None, 1) if column < end else []
    hint = f"Instead '{rest[0][:20]}'." if rest else "Instead the line ends."
    return SheetSyntaxError(line_no, column, line, _describe(expected) if expected else _OFFER, hint)
