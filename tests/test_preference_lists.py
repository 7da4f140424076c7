"""Reading nJudge preference lists and turning them into values."""

from __future__ import annotations

from fractions import Fraction

import pytest

from judge.methods.preference.engine import Preference, PreferenceError, doubled_values, read_preference
from judge.syntax import parse_line
from judge.syntax.nodes import SetPreference
from judge.variants import make_power_list, variant_powers

STD = variant_powers("standard")


@pytest.mark.parametrize("text, groups", [
    ("E[FGR][TAI]", [["England"], ["France", "Germany", "Russia"], ["Turkey", "Austria", "Italy"]]),
    ("e[fgr][tai]", [["England"], ["France", "Germany", "Russia"], ["Turkey", "Austria", "Italy"]]),
    ("E(FGR)(TAI)", [["England"], ["France", "Germany", "Russia"], ["Turkey", "Austria", "Italy"]]),
    ("FRIGATE", [["France"], ["Russia"], ["Italy"], ["Germany"], ["Austria"], ["Turkey"], ["England"]]),
    ("France, Russia, [Italy Germany] Turkey", [["France"], ["Russia"], ["Italy", "Germany"], ["Turkey"]]),
    ("Eng > France > [aus tur]", [["England"], ["France"], ["Austria", "Turkey"]]),
    # Letters run together win over abbreviations, as nJudge reads them.
    ("E[FRA]", [["England"], ["France", "Russia", "Austria"]]),
    ("GER", [["Germany"], ["England"], ["Russia"]]),
    ("F R", [["France"], ["Russia"]]),
    ("", []),
    ("[]E", [["England"]]),
])
def test_lists_as_njudge_players_write_them(text, groups):
    pref = read_preference(text, STD)
    assert [list(g) for g in pref.groups] == groups and not pref.random


def test_star_is_a_random_request():
    assert read_preference("*", STD) == Preference(random=True)


@pytest.mark.parametrize("text, column, fragment", [
    ("EFX", 3, "'X' is not a power's letter"),
    ("EFGE", 4, "'E' (England) is listed twice (first at column 1)"),
    ("E[FG", 5, "not closed"),
    ("E]F", 2, "closes no bracket"),
    ("E * F", 3, "* stands alone"),
    ("E[F[G]]", 4, "opens inside another"),
    ("France France", 8, "listed twice"),
    ("E3F", 2, "'3' is not a power's letter"),
])
def test_bad_lists_name_the_column_and_letter(text, column, fragment):
    with pytest.raises(PreferenceError) as caught:
        read_preference(text, STD)
    assert caught.value.column == column and fragment in str(caught.value)


def test_values_are_n_minus_position_with_averages():
    values = doubled_values(read_preference("E[FGR][TAI]", STD), STD)
    half = {k: Fraction(v, 2) for k, v in values.items()}
    assert half["England"] == 6
    assert half["France"] == half["Germany"] == half["Russia"] == 4  # positions 2-4: average 3
    assert half["Turkey"] == half["Austria"] == half["Italy"] == 1  # positions 5-7: average 6


def test_unlisted_powers_share_the_remaining_average():
    values = doubled_values(read_preference("EF", STD), STD)
    assert values["England"] == 12 and values["France"] == 10
    assert {values[p] for p in ["Austria", "Germany", "Italy", "Russia", "Turkey"]} == {4}  # positions 3-7: 5 -> 2
    assert set(doubled_values(Preference(), STD).values()) == {6}  # all share position 4: value 3


def test_multi_word_names_and_custom_letters():
    powers = make_power_list([{"name": "North Africa", "letter": "N"}, "Sparta", {"name": "Sicily", "letter": "C"}])
    pref = read_preference("north africa [S C]", powers)
    assert [list(g) for g in pref.groups] == [["North Africa"], ["Sparta", "Sicily"]]
    assert read_preference("NSC", powers).groups == (("North Africa",), ("Sparta",), ("Sicily",))


def test_set_preference_lines_parse_with_the_list_column():
    node = parse_line("SET PREFERENCE E[FGR][TAI]", 4)
    assert isinstance(node, SetPreference) and node.text == "E[FGR][TAI]" and node.text_column == 16
    assert parse_line("set pref", 1).text == ""
    assert parse_line("Set Preferences *", 1).text == "*"
