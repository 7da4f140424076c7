"""DPjudge's Payola rules (issue 26; judge/methods/payola/rules.py) and its
dummies, rule by rule at the engine: each test names the rule's source in
DPjudge (variants/payola/PayolaGame.py, PayolaPower.py, pages/Rules) and
works its expectation out from it. The same rules through `judge resolve`
are in tests/test_payola_resolve.py; income and transfers in
tests/test_payola_ledger.py and tests/test_payola_game.py."""

from __future__ import annotations

import pytest

from judge.methods.payola.bribes import check_sheet, choose_orders
from judge.methods.payola.rules import RuleError, rules_from
from judge.methods.payola.settings import ParamError, params_from
from judge.rng import DrawStream

BOARD = {"A PAR": "France", "A MAR": "France", "F BRE": "France", "A MUN": "Germany", "A BER": "Germany",
         "F LON": "England", "A BUR": "Germany", "A RUH": "France", "A BEL": "France", "A VIE": "Austria"}
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def run(sheets, *, rules=(), dummies=(), balances=None, acceptance=None, random_order=None):
    return choose_orders(variant="standard", units=BOARD,
                         balances=balances if balances is not None else {p: 100 for p in POWERS},
                         acceptance=acceptance or {}, sheets=sheets, stream=DrawStream(b"rules"),
                         random_order=random_order, rules=rules_from({"rules": list(rules)}), dummies=dummies)


def refused(power, text, *rules, balance=100, dummies=()):
    got = check_sheet(variant="standard", units=BOARD, power=power, text=text,
                      rules=rules_from({"rules": list(rules)}), balance=balance, dummies=dummies)
    assert len(got.rejected) == 1, got
    return got.rejected[0].reason


def taken(power, text, *rules, balance=100, dummies=()):
    got = check_sheet(variant="standard", units=BOARD, power=power, text=text,
                      rules=rules_from({"rules": list(rules)}), balance=balance, dummies=dummies)
    assert not got.rejected, got.rejected
    return got


# The settings

def test_the_rules_the_gm_sets_and_payola_classic():
    """pages/Rules: PAYOLA_CLASSIC "includes all of the following:
    NO_SAVINGS, DIRECT_ONLY, FLAT_TAX, and ZERO_FOREIGN"."""
    p = params_from({"rules": ["payola_classic", "Ebayola"], "tax": 3, "cap": 40, "dummies": ["england"]}, 7)
    assert sorted(p.rules.flags) == ["DIRECT_ONLY", "EBAYOLA", "FLAT_TAX", "NO_SAVINGS", "ZERO_FOREIGN"]
    assert (p.rules.tax, p.rules.cap, p.dummies) == (3, 40, ("England",))
    assert params_from(p.as_dict(), 7) == p
    with pytest.raises(ParamError, match="no Payola rule the judge plays"):
        params_from({"rules": ["EXCHANGE"]}, 7)
    with pytest.raises(RuleError, match="CAP"):
        rules_from({"cap": 0})
    with pytest.raises(ParamError, match="cannot be a dummy"):
        params_from({"powers": {"a@x.test": "England"}, "dummies": ["England"]}, 7)


# The forms of a line (PayolaGame.parseOffer)

def test_no_savings_refuses_savings_and_plateaus():
    """parseOffer: "SAVINGS NOT ALLOWED IN THIS GAME"; with NO_SAVINGS or
    NO_PLATEAU, "PLATEAUS NOT ALLOWED"."""
    assert "NO_SAVINGS" in refused("France", "10 $", "NO_SAVINGS")
    assert "plateaus (#)" in refused("France", "8#4 : A PAR - PIC", "NO_SAVINGS")
    assert "NO_PLATEAU" in refused("France", "8# : A PAR - PIC", "NO_PLATEAU")
    assert taken("France", "10 $", "NO_PLATEAU").savings == 10
    assert taken("France", "8#4 : A PAR - PIC").lines


def test_direct_only():
    """parseOffer under DIRECT_ONLY: "MULTIPLE OFFERS TO A SINGLE UNIT
    FORBIDDEN", "WILDCARD BRIBES NOT ALLOWED" (also "|"), "REPETITION AND
    AUGMENTATION NOT ALLOWED"."""
    assert "no wildcards" in refused("France", "3 ! A MUN - BUR", "DIRECT_ONLY")
    assert "no alternatives" in refused("France", "3 : A PAR - PIC | - BUR", "DIRECT_ONLY")
    assert "repetition" in refused("France", "2*3 : A PAR - PIC", "DIRECT_ONLY")
    assert "augmentation" in refused("France", "2+3 : A PAR - PIC", "DIRECT_ONLY")
    got = check_sheet(variant="standard", units=BOARD, power="France", text="3 : A PAR - PIC\n1 : A PAR H",
                      rules=rules_from({"rules": ["DIRECT_ONLY"]}))
    assert len(got.lines) == 1 and "one offer per unit" in got.rejected[0].reason


def test_limit_offers():
    """pages/Rules: "the sum total of all offers made by a player do not
    exceed the amount in that player's treasury" (less what it saves, as
    DPjudge's liquid is). Read in sheet order: the line that would pass it
    is refused, the rest stand."""
    got = check_sheet(variant="standard", units=BOARD, power="France",
                      text="10 $\n20 : A PAR - PIC\n2*10 : A MUN - BUR\n3 : A MAR H",
                      rules=rules_from({"rules": ["LIMIT_OFFERS"]}), balance=45)
    assert [x.line for x in got.lines] == [2, 4]  # 20, then 20 more would be 40 > 35; 23 is fine
    assert "40 AgP, more than the 35 AgP you hold less savings" in got.rejected[0].reason


def test_zero_foreign():
    """parseOffer: "ZERO AgP OFFER TO FOREIGN UNIT" unless ZERO_FOREIGN."""
    assert "zero offer to a foreign unit" in refused("France", "0 : A MUN H")
    assert taken("France", "0 : A MUN H", "ZERO_FOREIGN").lines


def test_pay_dummies():
    """parseOffer under PAY_DUMMIES: a power's own unit takes one 0 : order
    ("BRIBE TO DOMESTIC UNIT"); a unit of a power somebody plays is not
    bribed ("BRIBE TO OWNED UNIT"); a dummy's unit is."""
    assert "PAY_DUMMIES" in refused("France", "2 : A PAR - PIC", "PAY_DUMMIES", dummies=["Austria"])
    assert "PAY_DUMMIES" in refused("France", "0 : A PAR - PIC | H", "PAY_DUMMIES", dummies=["Austria"])
    assert "Germany's, who orders it" in refused("France", "5 : A MUN H", "PAY_DUMMIES", dummies=["Austria"])
    got = taken("France", "0 : A PAR - PIC\n5 : A VIE - TYR", "PAY_DUMMIES", dummies=["Austria"])
    assert [x.unit for x in got.lines] == ["A PAR", "A VIE"]
    r = run({"France": "0 : A PAR - PIC\n5 : A VIE - BOH", "Germany": "4 : A VIE - TYR\nA MUN - SIL"},
            rules=["PAY_DUMMIES"], dummies=["Austria"])
    assert r.orders["A PAR"] == "A PAR - PIC" and r.orders["A MUN"] == "A MUN - SIL"
    assert r.orders["A VIE"] == "A VIE - BOH" and r.spent == {**{p: 0 for p in POWERS}, "France": 5}


# The choice of orders (PayolaGame.bestOffer)

def test_ebayola_the_winner_pays_one_more_than_the_best_losing_offer():
    """bestOffer under EBAYOLA: the winning bribe is "reduced to one silver
    piece more than the highest non-winning bribe"; the saving goes to its
    payers in the bribed unit's owner's acceptance order. A PAR (France's,
    list FGE...): France 3 and Germany 6 for PAR-PIC (9) against England's
    5 for PAR-BUR: it costs 6, a saving of 3; France, first on the list,
    saves all 3 of its own and pays 0, Germany pays its 6."""
    r = run({"France": "3 : A PAR - PIC", "Germany": "6 : A PAR - PIC", "England": "5 : A PAR - BUR"},
            rules=["EBAYOLA"], acceptance={"France": "FGEAIRT"})
    assert r.orders["A PAR"] == "A PAR - PIC"
    assert (r.spent["France"], r.spent["Germany"], r.spent["England"]) == (0, 6, 0)
    # Germany first on the list: Germany saves 3 (6 -> 3), France pays its 3.
    r = run({"France": "3 : A PAR - PIC", "Germany": "6 : A PAR - PIC", "England": "5 : A PAR - BUR"},
            rules=["EBAYOLA"], acceptance={"France": "GFEAIRT"})
    assert (r.spent["France"], r.spent["Germany"]) == (3, 3)
    assert r.chart["A PAR"]["paid"] == 6


def test_ebayola_keeps_plateaus_but_not_under_public_totals():
    """bestOffer: a payer's rebate stops at its plateau (Key.plateau), which
    PUBLIC_TOTALS does not count ("This rule causes a change in the
    behavior of the EBAYOLA rule")."""
    sheets = {"Germany": "9#7 : A PAR - PIC", "England": "2 : A PAR - BUR"}
    assert run(sheets, rules=["EBAYOLA"]).spent["Germany"] == 7  # 3 would do; the plateau is 7
    assert run(sheets, rules=["EBAYOLA", "PUBLIC_TOTALS"]).spent["Germany"] == 3


def test_ebayola_never_charges_more_than_offered():
    """DPjudge's arithmetic gives a negative saving when the winner only ties
    the best losing offer (over = 5 - 1 - 5), and so charges it 6 for an
    offer of 5; "reduced" cannot mean that: it pays its 5."""
    r = run({"Germany": "5 : A PAR - PIC", "England": "5 : A PAR - BUR"}, rules=["EBAYOLA"],
            acceptance={"France": "GEFAIRT"})
    assert r.orders["A PAR"] == "A PAR - PIC" and r.spent["Germany"] == 5
    alone = run({"Germany": "5 : A PAR - PIC"}, rules=["EBAYOLA"])
    assert alone.spent["Germany"] == 1  # one more than the owner's 0 : H


def test_a_dummys_unit_tied_between_different_powers_holds():
    """pages/Rules 3.5: "all ties for control of a DUMMY unit and that
    involve bribes paid for by different powers or different set of powers
    are decided by HOLDing the contested unit" (bestOffer), "even in games
    that do not use the PAY_DUMMIES rule". Austria is a dummy: France's 5
    for VIE-TYR and Germany's 5 for VIE-BOH tie; the unit holds, and the
    hold is paid by whoever offered for it: nobody but Austria's 0."""
    r = run({"France": "5 : A VIE - TYR", "Germany": "5 : A VIE - BOH"}, dummies=["Austria"])
    assert r.orders["A VIE"] == "A VIE H" and r.dummy_holds == ["A VIE"]
    assert r.spent["France"] == r.spent["Germany"] == 0
    assert r.chart["A VIE"]["held"] is True
    # Who offered for the hold pays for it: England's 2 ! VIE-TYR goes to every other order.
    r = run({"France": "5 : A VIE - TYR", "Germany": "3 : A VIE - BOH", "England": "2 ! A VIE - TYR"},
            dummies=["Austria"])
    assert r.orders["A VIE"] == "A VIE H" and r.spent["England"] == 2 and r.spent["France"] == 0


def test_a_dummys_tie_between_the_same_powers_and_no_tie_are_the_usual_rules():
    """bestOffer: the hold is only for ties between different sets of powers;
    the same power's tie is broken by its earliest offer (5.3), and an
    outright winner stands."""
    r = run({"France": "5 : A VIE - TYR\n5 : A VIE - BOH"}, dummies=["Austria"],
            random_order={"Austria": POWERS})
    assert r.orders["A VIE"] == "A VIE - TYR" and r.dummy_holds == []
    r = run({"France": "6 : A VIE - TYR", "Germany": "5 : A VIE - BOH"}, dummies=["Austria"])
    assert r.orders["A VIE"] == "A VIE - TYR" and r.spent["France"] == 6


def test_a_dummys_acceptance_list_is_not_used():
    """pages/Rules 3.5: "acceptance lists for DUMMY powers are not used"
    (initAccept gives a dummy "?"): whatever list it had, the order of all
    the powers is drawn, and a tie of the same power's offers follows it."""
    r = run({}, dummies=["Austria"], acceptance={"Austria": "AEFGIRT"})
    assert sorted(r.random_order["Austria"]) == sorted(POWERS)
    with pytest.raises(Exception, match="a dummy sends no offer sheet"):
        run({"Austria": "4 : A VIE H"}, dummies=["Austria"])


# The accounts (PayolaPower.income, PayolaGame.parseSupplyCount, transferCash)

def test_the_income_rules():
    """PayolaPower.income: the first of ZEROSUM (none), TAX n (n a centre),
    FLAT_TAX (as many a centre as the map has powers), TAX per centre;
    then CAP n."""
    from judge.methods.payola.ledger import income

    assert income(5) == 17 + 16 + 15 + 14 + 13
    assert income(5, rules=rules_from({"tax": 3})) == 15
    assert income(5, rules=rules_from({"rules": ["FLAT_TAX"]})) == 35  # 7 powers on standard
    assert income(5, rules=rules_from({"rules": ["FLAT_TAX"], "tax": 3})) == 15  # TAX n comes first
    per_centre = rules_from({"taxes": {"PAR": 10, "MAR": 4}})
    assert income(3, rules=per_centre, owned=["PAR", "MAR", "BRE"]) == 14
    assert income(5, rules=rules_from({"cap": 40})) == 40
    assert income(5, rules=rules_from({"rules": ["ZEROSUM"]})) == 0


def test_no_hoarding_and_zerosum_at_the_years_end():
    """parseSupplyCount: NO_HOARDING sets the balance to 0 before the
    income; ZEROSUM's income is what the power's units were paid (BRIBE
    PROFITS), and each centre that changed hands moves the loser's money
    divided by its centres of the year's start (transferCenter); a neutral
    centre brings 10."""
    from judge.methods.payola import ledger as L

    start = L.open_accounts({"France": 30, "Germany": 20, "England": 5}, "S1901M")
    hoard = L.credit_income(start, {"France": 3, "Germany": 3, "England": 3}, "S1902M",
                            rules=rules_from({"rules": ["NO_HOARDING"]}))
    assert hoard.as_dict() == {"France": 48, "Germany": 48, "England": 48}
    assert [x.kind for x in hoard.lines_of("France")] == ["start", "no hoarding", "income"]
    zs = L.credit_income(start, {"France": 5, "Germany": 2, "England": 3}, "S1902M",
                         rules=rules_from({"rules": ["ZEROSUM"]}), profits={"France": 4, "Germany": 6},
                         before={"France": ["BRE", "MAR", "PAR"], "Germany": ["BER", "KIE", "MUN"],
                                 "England": ["EDI", "LON", "LVP"]},
                         owned={"France": ["BRE", "MAR", "MUN", "PAR", "SPA"], "Germany": ["BER", "KIE"],
                                "England": ["EDI", "LON", "LVP"]})
    # France: 30 + 4 profits + 10 (SPA, neutral) + (20 + 6) // 3 = 8 (MUN from Germany).
    assert zs.as_dict() == {"France": 52, "Germany": 20 + 6 - 8, "England": 5}
    assert [(x.kind, x.amount, x.note) for x in zs.lines_of("France")][1:] == [
        ("bribe profits", 4, "what your units were paid this year"), ("capture", 8, "MUN from Germany"),
        ("capture", 10, "SPA, neutral")]


def test_the_transfer_rules():
    """pages/Rules 3.2: NO_TRANSFER, ONE_TRANSFER ("a maximum of one time per
    game phase" to each power), ANON_TRANSFER ("the recipient ... is not
    told from whom")."""
    from judge.methods.payola import ledger as L

    start = L.open_accounts({"France": 30, "Germany": 20, "England": 5}, "S1901M")
    with pytest.raises(L.LedgerError, match="NO_TRANSFER"):
        L.transfer(start, "France", "Germany", 5, "S1901M", rules=rules_from({"rules": ["NO_TRANSFER"]}))
    once = rules_from({"rules": ["ONE_TRANSFER"]})
    one = L.transfer(start, "France", "Germany", 5, "S1901M", rules=once)
    with pytest.raises(L.LedgerError, match="ONE_TRANSFER"):
        L.transfer(one, "France", "Germany", 1, "S1901M", rules=once)
    assert L.transfer(one, "France", "England", 1, "S1901M", rules=once).balance("England") == 6
    assert L.transfer(one, "France", "Germany", 1, "F1901M", rules=once).balance("Germany") == 26
    anon = L.transfer(start, "France", "Germany", 5, "S1901M", rules=rules_from({"rules": ["ANON_TRANSFER"]}))
    assert anon.lines_of("Germany")[-1].note == "someone" and anon.lines_of("France")[-1].note == "Germany"


# The game (game.py): the rules and dummies over phases

def test_a_game_opens_its_accounts_by_the_rules():
    """PayolaPower.initialize: the starting balance is the income of the
    home centres as the rules count it; ZEROSUM's is 10 a home centre."""
    from judge.methods.payola import game as G

    assert G.new_game("standard").ledger.as_dict()["France"] == 48
    assert G.new_game("standard", rules=rules_from({"rules": ["FLAT_TAX"]})).ledger.as_dict()["Russia"] == 28
    assert G.new_game("standard", rules=rules_from({"rules": ["ZEROSUM"]})).ledger.as_dict()["France"] == 30
    state = G.new_game("standard", dummies=["italy"])
    assert state.dummies == ("Italy",) and state.accept["Italy"] == "?"
    assert G.from_json(G.to_json(state)) == state


def test_an_ejected_power_is_a_dummy_and_a_tie_for_its_unit_holds():
    """EJECT makes a dummy (with_dummy): its sheet is dropped, its list is
    '?', and France and Germany's equal offers to different orders of its
    A VEN hold it."""
    from judge.methods.payola import game as G

    state = G.new_game("standard")
    state = G.with_sheet(state, "Italy", "A VEN - PIE")
    state = G.with_dummy(state, "Italy")
    assert "Italy" not in state.sheets and state.accept["Italy"] == "?"
    state = G.with_sheet(G.with_sheet(state, "France", "3 : A VEN - TYR"), "Austria", "3 : A VEN - APU")
    state, report = G.movement(state, DrawStream(b"dummy"))
    assert "A VEN H" in report["orders"]["Italy"] and report["bribes"]["dummy_holds"] == ["A VEN"]
    assert state.ledger.balance("France") == 48 and state.ledger.balance("Austria") == 48
    assert G.with_player(state, "Italy").accept["Italy"] == "I?"


def test_a_sheet_sent_early_is_kept_for_the_next_movement_phase():
    """Issue 26, point 6: DPjudge players send the next movement phase's
    sheet during retreats or adjustments; it is kept, and becomes that
    phase's sheet when the phase begins (a later one replaces it)."""
    from judge.methods.payola import game as G

    state = G.new_game("standard")
    state, _ = G.adjudicate(state, {"A PAR": "A PAR - BUR", "A MUN": "A MUN H", "A VIE": "A VIE - TYR"})
    state, _ = G.adjudicate(state, {"A BUR": "A BUR - MUN", "A TYR": "A TYR S A BUR - MUN", "A MUN": "A MUN H"})
    assert G.phase(state) == "F1901R"
    assert G.check_early_sheet(state, "France", "4 : A MUN - RUH\nnonsense") == [
        (2, G.check_early_sheet(state, "France", "nonsense")[0][1].replace("line 1", "line 2"))]
    state = G.with_early_sheet(state, "France", "1 : A MUN H")
    state = G.with_early_sheet(state, "France", "4 : A MUN - RUH")  # replaces the first
    state = G.with_orders(state, "Germany", ["A MUN R BOH"])
    state, _ = G.adjudicate(state)
    assert G.phase(state) == "W1901A" and state.early == {"France": "4 : A MUN - RUH"} and not state.sheets
    state, report = G.adjudicate(state)
    assert G.phase(state) == "S1902M"
    assert state.sheets == {"France": "4 : A MUN - RUH"} and not state.early
    assert report["waived"] == {"France": 1}  # France took MUN: one build, not ordered
    state, spring = G.movement(state, DrawStream(b"early"))
    assert "A MUN - RUH" in spring["orders"]["France"]


def test_a_state_stored_before_the_rules_loads_with_none():
    """A game stored before issue 26 has no rules, dummies, early sheets or
    year's centres in its JSON: it loads as the default game."""
    from judge.methods.payola import game as G

    data = G.to_json(G.new_game("standard"))
    for key in ("rules", "dummies", "early", "profits", "year_centres"):
        del data[key]
    state = G.from_json(data)
    assert not state.rules.flags and state.dummies == () and state.early == {} and state.year_centres == {}
