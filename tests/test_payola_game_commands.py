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


@pytest.mark.parametrize("line, command", [
    ("SET RULE EBAYOLA zerosum", C.SetRules(add=("EBAYOLA", "ZEROSUM"))),
    ("SET RULES -EBAYOLA", C.SetRules(remove=("EBAYOLA",))),
    ("SET RULE NONE", C.SetRules(clear=True)),
    ("SET TAX 3", C.SetTax(3)), ("SET TAX par 5", C.SetTax(5, "PAR")), ("SET TAX NONE", C.SetTax(None)),
    ("SET CAP 40", C.SetCap(40)), ("SET CAP none", C.SetCap(None)),
    ("SET DUMMY italy England", C.SetDummies(("Italy", "England"))), ("SET DUMMY NONE", C.SetDummies(())),
])
def test_the_gms_dpjudge_rules(line, command):
    """Issue 26: DPjudge's RULE, TAX and CAP lines and DUMMY powers, as the GM's SET lines."""
    assert C.claims(line) and C.parse_line(line) == command


def test_the_rules_settings_as_the_gm_sets_them():
    from judge.methods.payola.settings import ParamError, params_from, with_setting

    raw, what = with_setting({}, C.parse_line("SET RULE PAYOLA_CLASSIC EBAYOLA"))
    assert raw["rules"] == ["DIRECT_ONLY", "EBAYOLA", "FLAT_TAX", "NO_SAVINGS", "ZERO_FOREIGN"]
    assert "EBAYOLA" in what
    raw, _ = with_setting(raw, C.parse_line("SET RULE -EBAYOLA"))
    raw, _ = with_setting(raw, C.parse_line("SET TAX PAR 5"))
    raw, _ = with_setting(raw, C.parse_line("SET CAP 40"))
    raw, what = with_setting(raw, C.parse_line("SET DUMMY Italy"))
    p = params_from(raw, 7)
    assert "EBAYOLA" not in p.rules and p.rules.taxes == (("PAR", 5),) and p.rules.cap == 40
    assert p.dummies == ("Italy",) and "nobody plays Italy" in what
    with pytest.raises(ParamError, match="no Payola rule the judge plays"):
        with_setting(raw, C.parse_line("SET RULE EXCHANGE"))
    with pytest.raises(ParamError, match="CAP"):
        with_setting(raw, C.parse_line("SET CAP 0"))


@pytest.mark.parametrize("line, column, expected", [
    ("SET RULE 5", 10, "a rule's name"),
    ("SET TAX", 8, "a whole number of AgP"),
    ("SET CAP many", 9, "a whole number of AgP"),
])
def test_a_bad_rule_line_names_its_column(line, column, expected):
    with pytest.raises(C.PayolaSyntaxError) as err:
        C.parse_line(line)
    assert err.value.column == column and expected in err.value.expected
