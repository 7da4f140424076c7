"""The Payola lines of a mail besides the offer sheet
(judge/methods/payola/commands.py, grammars/payola_commands.lark): which
lines the method claims (and leaves the shell's alone), what each becomes,
and a refused line's column and expectation."""

from __future__ import annotations

import pytest

from judge.methods.payola import commands as C


@pytest.mark.parametrize("line", ["4 : A PAR - BUR", "!3 : A MUN - BUR", "A PAR H", "f stp/sc r bot", "25 $",
                                  ": A PAR H", "& F BRE - MAO", "ARMY PARIS HOLDS", "fleet brest - mao",
                                  "SET ACCEPT FEGRAIT?", "transfer 5 to england", "LEDGER", "BALANCE",
                                  "WAIVE", "BUILD A PAR", "DISBAND F KIE", "PROCESS", "SET BALANCE 60",
                                  "SET POWER ann England", "SET MOVEMENT HOURS 48"])
def test_payola_claims_its_lines(line):
    assert C.claims(line)


@pytest.mark.parametrize("line", ["SIGNON ?pay pw", "FOR ann", "SET DEADLINE tomorrow", "LIST", "HELP payola",
                                  "SET PASSWORD x", "START", "Hello there", "AF", ""])
def test_payola_leaves_the_shells_lines_alone(line):
    assert not C.claims(line)


@pytest.mark.parametrize("line, command", [
    ("SET ACCEPT fegrait?", C.SetAccept("FEGRAIT?")),
    ("TRANSFER 10 TO England", C.Transfer(10, "England")),
    ("transfer 3 Russia", C.Transfer(3, "Russia")),
    ("LEDGER", C.Ledger()), ("balance", C.Ledger()),
    ("A MUN R BOH", C.Order("A MUN R BOH")), ("a mun - boh", C.Order("A MUN R BOH")),
    ("F STP/SC D", C.Order("F STP/SC D")), ("REMOVE A PAR", C.Order("A PAR D")),
    ("A PAR B", C.Order("A PAR B")), ("BUILD F BRE", C.Order("F BRE B")), ("waive", C.Order("WAIVE")),
    ("SET BALANCE 60", C.SetBalance(60)), ("SET POWER ann@x.test Turkey", C.SetPower("ann@x.test", "Turkey")),
    ("SET RETREAT HOURS 12.5", C.SetHours("retreat", 12.5)), ("PROCESS", C.Process()),
])
def test_each_line_becomes_its_command(line, command):
    assert C.parse_line(line) == command


def test_a_refused_line_names_the_column_and_what_was_expected():
    with pytest.raises(C.PayolaSyntaxError) as err:
        C.parse_line("TRANSFER ten TO England", 3)
    text = err.value.render()
    assert text.splitlines()[0] == "line 3: TRANSFER ten TO England"
    assert text.splitlines()[1].index("^") == len("line 3: TRANSFER ")
    assert "expected a whole number of AgP" in text
    with pytest.raises(C.PayolaSyntaxError, match="'-' or B or BUILD or D or DISBAND or R"):
        C.parse_line("A MUN X")
