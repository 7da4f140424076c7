"""Payola's accounts (judge/methods/payola/ledger.py; rules section 2):
the income table, income over several years, transfers, savings (what is
not spent stays), never a negative balance, every change a line."""

from __future__ import annotations

import pytest

from judge.methods.payola import ledger as L

# The formal rules' table (2.1), which DPjudge's default reproduces.
TABLE = [17, 33, 48, 62, 75, 87, 98, 108, 117, 125, 132, 138, 143, 147, 150, 152, 153]


def test_income_table_of_the_rules():
    assert [L.income(n) for n in range(1, 18)] == TABLE
    assert L.income(0) == 0
    assert L.income(18) == L.income(17) == 153  # the 18th centre adds nothing (it wins)
    assert L.income(3, win=10) == 9 + 8 + 7  # another map: victory centres - n for the n-th


def open_standard() -> L.Ledger:
    start = {p: L.income(3) for p in ("Austria", "England", "France", "Germany", "Italy", "Turkey")}
    start["Russia"] = L.income(4)
    return L.open_accounts(start, "S1901M")


def test_income_over_several_years_with_savings():
    led = open_standard()
    assert led.balance("France") == 48 and led.balance("Russia") == 62
    # 1901: France pays 20 in bribes, saves the rest; ends the year with 5 centres.
    led = L.debit_bribes(led, {"France": 20, "England": 0}, "S1901M")
    led = L.debit_bribes(led, {"France": 10}, "F1901M")
    led = L.credit_income(led, {"France": 5, "England": 4, "Russia": 0}, "S1902M")
    assert led.balance("France") == 48 - 30 + 75
    assert led.balance("England") == 48 + 62
    assert led.balance("Russia") == 62  # no centres, no income; the savings stay
    # 1902: nothing spent, income again.
    led = L.credit_income(led, {"France": 6, "England": 2}, "S1903M")
    assert led.balance("France") == 93 + 87
    assert led.balance("England") == 110 + 33
    france = led.lines_of("France")
    assert [(x.phase, x.kind, x.amount, x.balance) for x in france] == [
        ("S1901M", "start", 48, 48), ("S1901M", "bribes", -20, 28), ("F1901M", "bribes", -10, 18),
        ("S1902M", "income", 75, 93), ("S1903M", "income", 87, 180)]
    assert france[3].note == "5 centres"
    assert not [x for x in led.lines_of("England") if x.kind == "bribes"]  # 0 spent: no line


def test_transfers_never_negative_never_more_than_the_balance():
    led = open_standard()
    led = L.transfer(led, "France", "England", 10, "S1901M")
    assert (led.balance("France"), led.balance("England")) == (38, 58)
    assert [(x.kind, x.amount, x.note) for x in led.lines[-2:]] == [("transfer out", -10, "England"),
                                                                     ("transfer in", 10, "France")]
    led = L.transfer(led, "France", "Italy", 38, "S1901M")  # the whole balance
    assert led.balance("France") == 0
    for amount in (1, 0, -5):
        with pytest.raises(L.LedgerError):
            L.transfer(led, "France", "England", amount, "S1901M")
    with pytest.raises(L.LedgerError, match="another power"):
        L.transfer(led, "England", "England", 1, "S1901M")
    with pytest.raises(L.LedgerError, match="no account"):
        L.transfer(led, "England", "Narnia", 1, "S1901M")
    with pytest.raises(L.LedgerError):
        L.transfer(led, "England", "Italy", True, "S1901M")  # not a number of AgP
    before = led
    with pytest.raises(L.LedgerError):
        L.debit_bribes(led, {"England": 5, "Italy": 10_000}, "F1901M")
    assert led == before  # all or nothing
    assert all(b >= 0 for _, b in led.balances)


def test_round_trip_through_json():
    led = L.transfer(open_standard(), "Russia", "Turkey", 7, "S1901M")
    assert L.from_json(L.to_json(led)) == led


def test_starting_balances_must_be_whole_and_not_negative():
    with pytest.raises(L.LedgerError):
        L.open_accounts({"France": -1}, "S1901M")
