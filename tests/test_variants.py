"""Power lists: the standard seven, the maps of the `diplomacy` package, and
custom lists from the configuration."""

from __future__ import annotations

import pytest

from judge.variants import PowerListError, known_variants, make_power_list, variant_powers


def test_standard_seven_with_their_letters():
    powers = variant_powers("standard")
    assert [(p.name, p.letter) for p in powers] == [
        ("Austria", "A"), ("England", "E"), ("France", "F"), ("Germany", "G"),
        ("Italy", "I"), ("Russia", "R"), ("Turkey", "T")]


@pytest.mark.parametrize("name, count, some", [
    ("modern", 10, {"Britain", "Egypt", "Poland", "Spain", "Ukraine"}),
    ("world", 17, {"Argentina", "Frozen Antarctica", "United States", "Oz"}),
    ("ancmed", 5, {"Carthage", "Egypt", "Greece", "Persia", "Rome"}),
])
def test_maps_of_the_diplomacy_package(name, count, some):
    powers = variant_powers(name)
    assert len(powers) == count and some <= set(powers.names)
    letters = [p.letter for p in powers if p.letter]
    assert len(letters) == len(set(letters))  # no letter stands for two powers
    assert name in known_variants()


def test_world_letters_follow_the_map():
    powers = variant_powers("World")
    assert powers.lookup("Z").name == "Oz" and powers.lookup("pacific russia").name == "Pacific Russia"


def test_custom_variant_wins_and_a_36_power_list_works():
    custom = {"void": [f"Power{i:02d}" for i in range(36)], "standard": ["Red", "Blue"]}
    assert len(variant_powers("void", custom)) == 36
    assert variant_powers("standard", custom).names == ["Red", "Blue"]


def test_unknown_variants_and_bad_lists_are_refused():
    with pytest.raises(PowerListError, match="unknown variant 'nowhere'; known variants: ancmed"):
        variant_powers("nowhere")
    with pytest.raises(PowerListError, match="named twice"):
        make_power_list(["Rome", "rome"])
    with pytest.raises(PowerListError, match="letter 'R' given to both"):
        make_power_list([{"name": "Rome", "letter": "R"}, {"name": "Ravenna", "letter": "R"}])
