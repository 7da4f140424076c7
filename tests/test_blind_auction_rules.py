"""`validate` and `check_params` against every rule of the seed
(../shared/seeds/blind-auction-playdip.txt, PlayDip PbF Blind Auction v2.0.a),
one test per rule, and the bid-line syntax."""

from __future__ import annotations

import pytest

from judge.methods.blind_auction.engine import (
    NO_PREFERENCE,
    BidEntry,
    Params,
    ParamError,
    check_params,
    effective_bids,
    validate,
)
from judge.syntax import parse_line
from judge.syntax.nodes import Bids
from judge.variants import variant_powers

POWERS = variant_powers("standard")
CUSTOM = Params(T=140, M=70, D=1)  # the seed's customary values for U = 7

GOOD = {"Austria": 40, "England": 30, "France": 25, "Germany": 20, "Italy": 15, "Russia": 6, "Turkey": 4}


def entries(bids: dict[str, object], first_line: int = 1) -> list[BidEntry]:
    return [BidEntry(power=w, amount=str(a), line=first_line + k, column=1) for k, (w, a) in enumerate(bids.items())]


def with_changes(**changes) -> dict[str, object]:
    bids = dict(GOOD)
    bids.update(changes)
    return bids


def only_violation(checked):
    assert not checked.ok
    assert checked.bids is None
    assert len(checked.violations) == 1, checked.violations
    return checked.violations[0]


# --------------------------------------------------------------------------
# A valid list
# --------------------------------------------------------------------------

def test_valid_list_is_accepted_in_power_list_order():
    shuffled = dict(reversed(list(GOOD.items())))
    checked = validate(POWERS, CUSTOM, entries(shuffled))
    assert checked.ok and checked.violations == ()
    assert list(checked.bids.bids.items()) == list(GOOD.items())  # power-list order, not input order
    assert not checked.bids.no_preference


def test_total_below_t_is_allowed():
    """'The total of your bids can be lower than T, but this is not recommended.'"""
    low = {w: k + 1 for k, w in enumerate(POWERS.names)}  # 1+2+...+7 = 28
    checked = validate(POWERS, CUSTOM, entries(low))
    assert checked.ok
    assert sum(checked.bids.bids.values()) == 28


def test_total_exactly_t_and_bid_exactly_m_are_allowed():
    bids = {"Austria": 70, "England": 30, "France": 20, "Germany": 10, "Italy": 5, "Russia": 3, "Turkey": 2}
    assert sum(bids.values()) == 140
    assert validate(POWERS, CUSTOM, entries(bids)).ok


@pytest.mark.parametrize("token", ["Austria", "AUSTRIA", "austria", "Aus", "aus", "AUS", "A", "a"])
def test_power_named_by_name_abbreviation_or_letter_in_any_case(token):
    bids = dict(GOOD)
    bids[token] = bids.pop("Austria")
    checked = validate(POWERS, CUSTOM, entries(bids))
    assert checked.ok, checked.violations
    assert checked.bids.bids["Austria"] == 40


# --------------------------------------------------------------------------
# One rule each
# --------------------------------------------------------------------------

def test_unknown_power():
    """'Make (or copy) a list of the U powers.'"""
    bids = dict(GOOD)
    bids["Tuvalu"] = 1
    v = only_violation(validate(POWERS, CUSTOM, entries(bids)))
    assert v.rule == "unknown-power"
    assert v.line == 8
    assert "Tuvalu" in v.message and "line 8" in v.message


def test_missing_power():
    """'For each power in the list, assign ... points' / 'Bid at least 1 point on every power.'"""
    bids = dict(GOOD)
    del bids["Italy"]
    v = only_violation(validate(POWERS, CUSTOM, entries(bids)))
    assert v.rule == "missing-power"
    assert "Italy" in v.message


def test_duplicate_power():
    bids = list(entries(GOOD)) + [BidEntry(power="eng", amount="3", line=8, column=1)]
    v = only_violation(validate(POWERS, CUSTOM, bids))
    assert v.rule == "duplicate-power"
    assert v.line == 8
    assert "England" in v.message and "line 8" in v.message and "line 2" in v.message


@pytest.mark.parametrize("amount", ["4.5", "40.0", "4."])
def test_non_whole_number(amount):
    """'assign a positive whole number of points'"""
    v = only_violation(validate(POWERS, CUSTOM, entries(with_changes(Russia=amount))))
    assert v.rule == "whole-number"
    assert v.line == 6
    assert "Russia" in v.message and amount in v.message and "line 6" in v.message


@pytest.mark.parametrize("amount", [0, -3])
def test_bid_at_least_one(amount):
    """'Bid at least 1 point on every power.'"""
    v = only_violation(validate(POWERS, CUSTOM, entries(with_changes(Turkey=amount))))
    assert v.rule == "at-least-one"
    assert v.line == 7
    assert "Turkey" in v.message and "line 7" in v.message


def test_bid_above_m():
    """'Do not bid any more than M points on a single power.'"""
    bids = {"Austria": 71, "England": 30, "France": 12, "Germany": 10, "Italy": 5, "Russia": 3, "Turkey": 2}
    assert sum(bids.values()) <= 140
    v = only_violation(validate(POWERS, CUSTOM, entries(bids)))
    assert v.rule == "max-bid"
    assert v.line == 1
    assert "Austria" in v.message and "line 1" in v.message and "70" in v.message


def test_total_above_t():
    """'The total of all bids from a single player must not exceed T points.'"""
    bids = with_changes(Turkey=5)  # 140 + 1
    assert sum(bids.values()) == 141
    v = only_violation(validate(POWERS, CUSTOM, entries(bids)))
    assert v.rule == "total"
    assert "141" in v.message and "140" in v.message


def test_two_equal_bids():
    """'Each bid must be a unique whole number. No two bids from the same player may be equal.'"""
    v = only_violation(validate(POWERS, CUSTOM, entries(with_changes(Russia=4))))
    assert v.rule == "unique"
    assert "Russia" in v.message and "Turkey" in v.message and "4" in v.message


def test_several_violations_reported_at_once():
    bids = [
        BidEntry("Austria", "4.5", 1, 1),
        BidEntry("England", "0", 2, 1),
        BidEntry("France", "71", 3, 1),
        BidEntry("Germany", "9", 4, 1),
        BidEntry("Italy", "9", 5, 1),
        BidEntry("Tuvalu", "3", 6, 1),
        BidEntry("Germany", "2", 7, 1),
        BidEntry("Russia", "65", 8, 1),
    ]
    checked = validate(POWERS, CUSTOM, bids)
    assert not checked.ok and checked.bids is None
    rules = [v.rule for v in checked.violations]
    assert sorted(rules) == sorted(
        ["whole-number", "at-least-one", "max-bid", "unknown-power", "duplicate-power", "missing-power", "total", "unique"]
    )
    by_rule = {v.rule: v for v in checked.violations}
    assert by_rule["whole-number"].line == 1
    assert by_rule["at-least-one"].line == 2
    assert by_rule["max-bid"].line == 3
    assert by_rule["unknown-power"].line == 6
    assert by_rule["duplicate-power"].line == 7
    assert "Turkey" in by_rule["missing-power"].message
    assert "Germany" in by_rule["unique"].message and "Italy" in by_rule["unique"].message


def test_violation_as_dict():
    v = only_violation(validate(POWERS, CUSTOM, entries(with_changes(Turkey=0))))
    assert v.as_dict() == {"rule": "at-least-one", "message": v.message, "line": 7}


def test_no_preference_is_d_on_every_power():
    assert effective_bids(NO_PREFERENCE, POWERS, CUSTOM) == {w: 1 for w in POWERS.names}
    assert effective_bids(NO_PREFERENCE, POWERS, Params(T=140, M=70, D=20)) == {w: 20 for w in POWERS.names}


# --------------------------------------------------------------------------
# check_params: errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("D", [2, 19, 21, 70])
def test_d_must_be_one_or_t_over_u(D):
    """'The default value for D is 1.' / 'Alternately D can be set to equal (T/U)'"""
    with pytest.raises(ParamError, match="D must be 1 or T/U = 20"):
        check_params(7, Params(T=140, M=70, D=D))


def test_d_is_t_over_u_only_when_t_divisible_by_u():
    """'... assuming that T is divisible by U.'"""
    assert check_params(7, Params(T=140, M=70, D=20)) == []
    with pytest.raises(ParamError, match="not a whole number"):
        check_params(7, Params(T=141, M=70, D=20))


def test_t_below_one_plus_two_up_to_u():
    """No list of U different bids of at least 1 fits in T < 1+2+...+U."""
    with pytest.raises(ParamError, match="1\\+2\\+...\\+U = 28"):
        check_params(7, Params(T=27, M=20, D=1))
    check_params(7, Params(T=28, M=14, D=1))  # the bare minimum is allowed (with warnings)


def test_m_below_u():
    """Nobody can bid U different amounts between 1 and M < U."""
    with pytest.raises(ParamError, match="M = 6 is below U = 7"):
        check_params(7, Params(T=140, M=6, D=1))
    check_params(7, Params(T=140, M=7, D=1))


def test_m_above_t():
    with pytest.raises(ParamError, match="above T"):
        check_params(7, Params(T=140, M=141, D=1))


@pytest.mark.parametrize("params", [Params(T=0, M=70, D=1), Params(T=140, M=-1, D=1), Params(T=140, M=70, D=0)])
def test_parameters_must_be_positive(params):
    with pytest.raises(ParamError, match="positive whole number"):
        check_params(7, params)


# --------------------------------------------------------------------------
# check_params: warnings
# --------------------------------------------------------------------------

def test_customary_values_give_no_warning():
    """U = 7: T = 20U = 140, M = T/2 = 70, D = 1 (or D = T/U = 20)."""
    assert check_params(7, Params(T=140, M=70, D=1)) == []
    assert check_params(7, Params(T=140, M=70, D=20)) == []


def test_seed_example_u10_t200_m100():
    """The seed's example (U = 10, T = 200, M = 100) follows the custom T = 20U
    but not the recommendation 'T should be ... greater than 2*(U^2)': 200 is
    not greater than 2*10^2 = 200. So exactly one warning, about T, and none
    about M (100 is half of T and well under T-(U^2-U)/2 = 155)."""
    warnings = check_params(10, Params(T=200, M=100, D=1))
    assert len(warnings) == 1
    assert "2*U^2 = 200" in warnings[0] and "200" in warnings[0]


def test_warning_t_not_above_2u2():
    warnings = check_params(7, Params(T=98, M=49, D=1))  # 2*7^2 = 98
    assert len(warnings) == 1 and "2*U^2 = 98" in warnings[0]
    assert check_params(7, Params(T=100, M=50, D=1)) == []


@pytest.mark.parametrize("M", [30, 100])
def test_warning_m_far_from_half_of_t(M):
    """'In most cases, M should be about half of T.'"""
    warnings = check_params(7, Params(T=140, M=M, D=1))
    assert any("about half of T" in w and str(M) in w for w in warnings)


def test_no_warning_m_near_half_of_t():
    for M in (56, 70, 84):  # within T/10 of T/2
        assert not any("about half" in w for w in check_params(7, Params(T=140, M=M, D=1)))


def test_warning_m_not_well_under_room():
    """'make sure that M is considerably less than (T-((U^2 - U)/2)'"""
    warnings = check_params(7, Params(T=60, M=30, D=1))  # room = 60 - 21 = 39
    assert any("T-(U^2-U)/2 = 39" in w and "30" in w for w in warnings)
    assert not any("T-(U^2-U)/2" in w for w in check_params(7, Params(T=140, M=70, D=1)))


# --------------------------------------------------------------------------
# Bid lines as players write them
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "line, power, amount",
    [("Austria 40", "Austria", "40"), ("Austria: 40", "Austria", "40"), ("A=40", "A", "40"), ("aus 40", "aus", "40")],
)
def test_parse_one_bid(line, power, amount):
    node = parse_line(line, 3)
    assert isinstance(node, Bids)
    assert node.entries == (BidEntry(power=power, amount=amount, line=3, column=1),)
    assert POWERS.lookup(node.entries[0].power).name == "Austria"


def test_parse_several_bids_on_a_line():
    node = parse_line("A 40, E 30", 2)
    assert isinstance(node, Bids)
    assert node.entries == (
        BidEntry(power="A", amount="40", line=2, column=1),
        BidEntry(power="E", amount="30", line=2, column=7),
    )


def test_parse_keeps_non_whole_amounts_for_validate():
    (entry,) = parse_line("Austria 4.5").entries
    assert entry.amount == "4.5"
    v = validate(POWERS, CUSTOM, [entry] + entries({w: a for w, a in GOOD.items() if w != "Austria"}, 2))
    assert [x.rule for x in v.violations] == ["whole-number"]


def test_parsed_mail_validates():
    mail = ["Austria 40", "england: 30", "F=25", "ger 20", "I 15, R 6", "TURKEY 4"]
    found = [e for k, line in enumerate(mail, 1) for e in parse_line(line, k).entries]
    checked = validate(POWERS, CUSTOM, found)
    assert checked.ok
    assert checked.bids.bids == GOOD
