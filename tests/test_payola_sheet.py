"""Payola offer sheets: every form of the hobby's syntax (DPjudge's
pages/Questions, "Bribe Syntax"; docs/payola.md) parsed to its dataclasses,
errors with line, column and caret, and the orders checked against the
standard map (judge/methods/payola/orders.py) with the reason."""

from __future__ import annotations

import pytest

from judge.methods.payola import sheet
from judge.methods.payola.bribes import check_sheet
from judge.methods.payola.orders import initial_units
from judge.methods.payola.sheet import (Offer, Piece, RawOrder, Savings, SheetSyntaxError, UnitRef, parse_line,
                                        parse_sheet)

START = initial_units("standard")


def offer(text: str) -> Offer:
    parsed = parse_line(text)
    assert isinstance(parsed, Offer), parsed
    return parsed


def test_a_direct_offer():
    """Questions, "Direct Bribe": 4 : A PAR - BUR."""
    o = offer("4 : A PAR - BUR")
    assert o.kind == ":"
    assert o.pieces == (Piece(1, 4, 0),)
    assert o.orders == (RawOrder(UnitRef("A", "PAR"), "-", dest="BUR"),)


@pytest.mark.parametrize("kind", list(":!>@&"))
def test_every_kind_of_offer(kind):
    """Questions: direct (:), negative (!), move (>), hold (@) and gift (&) bribes."""
    assert offer(f"4 {kind} A PAR - BUR").kind == kind


def test_alternatives_leave_the_unit_out_or_repeat_it():
    """Questions: "4 : A PAR - BUR | - GAS": the unit is not listed again."""
    o = offer("4 : A PAR - BUR | - GAS | H | S A MAR - BUR | A PAR - PIC")
    assert [r.kind for r in o.orders] == ["-", "-", "H", "S", "-"]
    assert [r.unit for r in o.orders[1:4]] == [None, None, None]
    assert o.orders[3].target == UnitRef("A", "MAR") and o.orders[3].dest == "BUR"
    assert o.orders[4].unit == UnitRef("A", "PAR")


def test_plateaus_repetition_and_augmentation():
    """Questions: 8#4 (not cut below 4 first), 8# = 8#8; DPjudge parseOffer:
    rep*amount, and "+" joins pieces."""
    assert offer("8#4 : A PAR - BUR").pieces == (Piece(1, 8, 4),)
    assert offer("8# : A PAR - BUR").pieces == (Piece(1, 8, 8),)
    assert offer("2*5 : A PAR - BUR").pieces == (Piece(2, 5, 0),)
    assert offer("5+2*3#1 : A PAR - BUR").pieces == (Piece(1, 5, 0), Piece(2, 3, 1))
    assert offer("3*0 : A PAR H").pieces == (Piece(1, 0, 0),)  # a zero offer is one offer


def test_savings_requests():
    """Questions: "25 $" keeps 25 AgP; several requests are totalled (parse_sheet's caller adds them)."""
    assert parse_line("25 $") == Savings(amount=25)
    assert parse_line("2*5 $") == Savings(amount=10)


def test_a_bare_order_means_zero_direct():
    """Questions ("Special-Case Bribes") and DPjudge parseOffer: a line that
    starts with the unit, or with the kind, offers 0."""
    assert offer("A PAR H").pieces == (Piece(1, 0, 0),) and offer("A PAR H").kind == ":"
    assert offer("! A PAR H").pieces == (Piece(1, 0, 0),) and offer("! A PAR H").kind == "!"


def test_order_forms_and_words():
    """Hold, move, support (hold and move), convoy and via convoy; keywords in any case, long or short."""
    assert offer("a par hold").orders[0] == RawOrder(UnitRef("A", "PAR"), "H")
    assert offer("PAR - BUR").orders[0].unit == UnitRef(None, "PAR")
    mun, nth = UnitRef("A", "MUN"), UnitRef("F", "NTH")
    assert offer("A MUN SUPPORTS A BER - SIL").orders[0] == RawOrder(mun, "S", UnitRef("A", "BER"), "SIL")
    assert offer("A MUN S BER").orders[0] == RawOrder(mun, "S", UnitRef(None, "BER"))
    assert offer("F NTH CONVOY A LON -> NWY").orders[0] == RawOrder(nth, "C", UnitRef("A", "LON"), "NWY")
    assert offer("A LON - NWY VIA").orders[0].via is True
    assert offer("F STP/SC - BOT").orders[0].unit == UnitRef("F", "STP/SC")


def test_a_comment_is_ignored():
    assert offer("4 : A PAR - BUR % my plan").text == "4 : A PAR - BUR"
    assert parse_line("% only a comment") is None
    assert parse_line("   ") is None


@pytest.mark.parametrize("text, column, expected", [
    ("4 : A PAR -", 12, "a province"),
    ("4 : A PAR BUR", 11, "-, C, H or S"),
    ("4 ; A PAR - BUR", 3, "an offer's kind"),
    ("4 : A PAR - BUR |", 18, "a province"),
    ("?4 : A PAR", 1, "an offer"),
    ("4 A PAR H", 3, "an offer's kind"),  # an amount needs its kind: a "!" left out would turn it around
    ("4 : A PAR - BUR - PIC", 17, "| (another order)"),
])
def test_syntax_errors_name_line_column_and_what_was_expected(text, column, expected):
    with pytest.raises(SheetSyntaxError) as err:
        parse_line(text, 7)
    e = err.value
    assert (e.line, e.column) == (7, column)
    assert expected in e.expected
    shown = e.render().splitlines()
    assert shown[0] == f"line 7: {text}"
    assert shown[1].index("^") == len("line 7: ") + column - 1


@pytest.mark.parametrize("text, expected", [
    ("5#6 : A PAR H", "plateau no higher than the amount"),
    ("10000 : A PAR H", "at most 9999"),
    ("100*2 : A PAR H", "repetition of 1 to 99"),
    ("0*2 : A PAR H", "repetition of 1 to 99"),
    ("5#2 $", "no plateau on a savings request"),
    ("4 : A PAR - BUR " + "| H " * 400, "at most 1000 characters"),
    ("4 : A PAR\x07 - BUR", "visible text"),
])
def test_limits_of_the_syntax(text, expected):
    with pytest.raises(SheetSyntaxError) as err:
        parse_line(text)
    assert expected in err.value.expected


def test_a_bad_line_leaves_the_rest_of_the_sheet_standing():
    lines = parse_sheet("4 : A PAR - BUR\nnonsense here\n\n25 $\n2 : A MAR H")
    assert [n for n, _ in lines] == [1, 2, 4, 5]
    assert isinstance(lines[1][1], SheetSyntaxError) and lines[1][1].line == 2
    assert isinstance(lines[2][1], Savings) and isinstance(lines[3][1], Offer)


def test_the_parser_is_lalr_so_a_line_costs_linear_time():
    """Design rule: no input costs more than linear time. LALR(1) reads each
    token once; a sheet is cut at MAX_LINES and a line at MAX_LINE_LENGTH."""
    assert sheet._parser().options.parser == "lalr"
    long = "1 : A PAR - BUR" + " | - GAS | H" * 7
    assert len(offer(long).orders) == 15
    with pytest.raises(SheetSyntaxError, match="at most 16 orders"):  # counted before the parser reads it
        parse_line("1 : A PAR - BUR" + " | - GAS | H" * 80)
    many = "\n".join(["1 : A PAR H"] * (sheet.MAX_LINES + 5))
    parsed = parse_sheet(many)
    assert len(parsed) == sheet.MAX_LINES + 1 and isinstance(parsed[-1][1], SheetSyntaxError)


# The orders against the map and the position (orders.py through check_sheet).

def check(text: str, power: str = "France"):
    return check_sheet(variant="standard", units=START, power=power, text=text)


def reason(text: str, power: str = "France") -> str:
    result = check(text, power)
    assert not result.lines and len(result.rejected) == 1, result
    return result.rejected[0].reason


@pytest.mark.parametrize("text, expected", [
    ("4 : A PAR - MUN", "MUN is not adjacent to PAR"),
    ("4 : A PAR - XYZ", "there is no province XYZ"),
    ("4 : A PIC - BUR", "there is no unit in PIC"),
    ("4 : F PAR - BUR", "the unit in PAR is an army"),
    ("4 : F STP/NC - BAR", "the unit in STP is F STP/SC, not on STP/NC"),
    ("4 : A PAR - ENG", "an army cannot move to ENG: it is water"),
    ("4 : F BRE - PAR", "a fleet cannot move to PAR: it is inland"),
    ("4 : A MUN S A KIE", "the unit in KIE is a fleet"),
    ("4 : A MUN S A SIL - BOH", "there is no unit in SIL"),
    ("4 : A MAR S A PAR - MUN", "A PAR cannot move to MUN"),
    ("4 : F EDI C A LVP - NWY", "only a fleet at sea convoys"),
    ("4 : A PAR - BUR | A MAR H", "the same unit (A PAR)"),
    ("4 : A PAR - BUR | - BUR", "the same order twice in one offer"),
    ("0 : A MUN - BUR", "a zero offer to a foreign unit: A MUN is Germany's"),
    ("A MUN H", "a zero offer to a foreign unit"),
    ("4 : F BUL/EC - CON", "there is no unit in BUL"),
])
def test_orders_the_map_or_the_rules_refuse(text, expected):
    """The issue: no such unit, no such province, not adjacent, bad coast;
    DPjudge's parseOffer: duplicate orders in one offer, zero offers to
    foreign units (Questions, "Special-Case Bribes")."""
    assert expected in reason(text)


def test_a_coast_that_does_not_exist_and_a_coast_that_must_be_named():
    units = {"F MAO": "France", "F CON": "Turkey"}
    got = check_sheet(variant="standard", units=units, power="France", text="4 : F MAO - SPA\n4 : F MAO - POR/NC")
    assert "F MAO can reach SPA/NC and SPA/SC: name the coast" in got.rejected[0].reason
    assert "POR has no coast NC" in got.rejected[1].reason
    # From Constantinople both coasts of Bulgaria are reachable: the player names one.
    got = check_sheet(variant="standard", units=units, power="Turkey", text="4 : F CON - BUL\n4 : F CON - BUL/SC")
    assert "F CON can reach BUL/EC and BUL/SC: name the coast" in got.rejected[0].reason
    assert got.lines[0].orders == ("F CON - BUL/SC",)


def test_orders_are_made_canonical():
    """Abbreviations and one-word names, left-out unit types, the one
    reachable coast (DPjudge's defaultCoast), support to a province (never a
    coast: Questions), a convoy-only move marked VIA."""
    units = {"A PAR": "France", "A MAR": "France", "F STP/SC": "Russia", "A LON": "England", "F NTH": "England",
             "F BLA": "Turkey", "F CON": "Turkey"}
    got = check_sheet(variant="standard", units=units, power="France", text="\n".join([
        "1 : PARIS - BURGUNDY",
        "1 : MAR S PAR - BUR",
        "1 : F STP - BOT",
        "1 : A LON - NWY",
        "1 : F BLA S F CON - BUL/EC",
        "1 : A MAR - SPA/SC",
    ]))
    assert not got.rejected, got.rejected
    assert [line.orders[0] for line in got.lines] == [
        "A PAR - BUR", "A MAR S A PAR - BUR", "F STP/SC - BOT", "A LON - NWY VIA", "F BLA S F CON - BUL",
        "A MAR - SPA"]


def test_a_refused_line_leaves_the_rest_standing_and_savings_add_up():
    got = check("4 : A PAR - BUR\n0 : A MUN H\n10 $\nfoo bar\n15 $\n2 : A MAR - SPA")
    assert [line.line for line in got.lines] == [1, 6]
    assert [(r.line, r.power) for r in got.rejected] == [(2, "France"), (4, "France")]
    assert got.rejected[1].reason.startswith("line 4: foo bar\n")
    assert got.savings == 25


# DPjudge's order forms (issue 26): what its expandOrder reads, check_sheet takes.

@pytest.mark.parametrize("written, canonical", [
    ("4 : A PAR S A BUR H", "A PAR S A BUR"),  # support to hold written with H (expandOrder drops it)
    ("4 : A PAR S BUR H", "A PAR S A BUR"),
    ("ARMY PARIS SUPPORTS ARMY BURGUNDY", "A PAR S A BUR"),
    ("3 : A PAR-BUR", "A PAR - BUR"),
    ("3 : A PAR BUR", "A PAR - BUR"),  # the hyphen left out
    ("2 ! A PAR MOVES TO BUR", "A PAR - BUR"),
    ("2 > ARMY IN PARIS ATTACKS GASCONY", "A PAR - GAS"),
    ("1 : A MAR SUPPORTS A PAR TO BUR", "A MAR S A PAR - BUR"),
    ("FRENCH A PAR HOLDS", "A PAR H"),
    ("F BREST HOLD.", "F BRE H"),
    ("1 : F BRE - ENGLISH CHANNEL", "F BRE - ENG"),
    ("0 : F BRE - MID ATLANTIC OCEAN", "F BRE - MAO"),
])
def test_dpjudges_order_forms_are_taken(written, canonical):
    units = {**START, "A BUR": "Germany"}  # Germany's army stands in Burgundy, to be supported
    got = check_sheet(variant="standard", units=units, power="France", text=written)
    assert not got.rejected, got.rejected
    (line,) = got.lines
    assert line.orders == (canonical,) and line.text == written


def test_dpjudges_forms_in_alternatives_and_coasts():
    got = check("5 : A PAR - BUR | GAS | S A MAR - BUR | HOLDS", "France")
    assert got.lines[0].orders == ("A PAR - BUR", "A PAR - GAS", "A PAR S A MAR - BUR", "A PAR H")
    russia = check_sheet(variant="standard", units=START, power="Russia",
                         text="2 : F STP(SC) - BOT\n1 : F SEV - BLACK SEA")
    assert [x.orders for x in russia.lines] == [("F STP/SC - BOT",), ("F SEV - BLA",)]


def test_a_line_no_form_reads_is_refused_as_written_with_its_column():
    got = check("foo bar\n4 : A PAR S A BUR H H")
    assert [r.line for r in got.rejected] == [1, 2] and not got.lines
    assert got.rejected[0].reason.startswith("line 1: foo bar\n")


def test_the_rewriting_is_bounded_whatever_the_line():
    """Map.compact tries every run of words: an alternative of more words than
    any order is not rewritten (refused as written), so a line costs linear time."""
    long = "4 : A PAR " + "NORTH " * 150
    got = check(long)
    assert len(got.rejected) == 1 and not got.lines
