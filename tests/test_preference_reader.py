"""The preference list reader (issue 29, "Lists"; issue 27, forum formats).

judge/syntax/preference.py reads a list with a scanner of its own, and the
engine reads its words by dictionaries built once per variant, by a fast
way for every list it takes and a careful one (word by word, with columns)
for the refusals. grammars/preference.lark stays the specification: the
scanner must read every list as Lark reads it with that grammar, and the
fast way must give what the careful one gives, on lists drawn at random
from the pieces players write (names, letters, abbreviations, brackets,
ranks, separators, BBCode, stray characters)."""

from __future__ import annotations

import random

import pytest

from judge.methods.preference.engine import (PreferenceError, _read_fast, read_preference,
                                             read_preference_carefully)
from judge.syntax.preference import ListSyntaxError, parse_list, parse_list_with_grammar
from judge.variants import make_power_list, variant_powers

STD = variant_powers("standard")
VOID = variant_powers("void")
ODD = make_power_list([{"name": "North Africa", "letter": "N"}, "Sparta", {"name": "Sicily", "letter": "C"}, "North"])


def _pieces(powers) -> list[str]:
    return ([p.name for p in powers] + [p.letter for p in powers if p.letter] + [p.abbreviation for p in powers]
            + ["[", "]", "(", ")", "*", " ", ", ", " > ", "/", ";", "1.", "2)", "3:", "4", "[b]", "[/b]",
               "[code]", "[i]", "[/i]", "[color=red]", "x", "Sea", "of", "ß", "İ", "!", "#", "E3F", "\t", "é"])


def _outcome(read, text, *args):
    try:
        return ("read", read(text, *args))
    except (ListSyntaxError, PreferenceError) as err:
        return ("refused", err.column, str(err))


@pytest.mark.parametrize("seed", range(4))
def test_the_scanner_reads_every_list_as_the_grammar_does(seed):
    rnd = random.Random(seed)
    pieces = _pieces(STD) + _pieces(VOID)
    for _ in range(4000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        assert _outcome(parse_list, text) == _outcome(parse_list_with_grammar, text), repr(text)


@pytest.mark.parametrize("powers", [STD, VOID, variant_powers("world"), ODD], ids=["standard", "void", "world", "odd"])
def test_the_fast_reading_is_the_careful_one(powers):
    rnd = random.Random(len(powers))
    pieces = _pieces(powers)
    fast = 0
    for _ in range(6000):
        text = "".join(rnd.choice(pieces) + rnd.choice(["", " ", ","]) for _ in range(rnd.randint(0, 9)))
        quick = _read_fast(text, powers)
        if quick is None:
            continue
        fast += 1
        assert _outcome(read_preference_carefully, text, powers) == ("read", quick), repr(text)
    assert fast > 1000  # the fast way is the common way


@pytest.mark.parametrize("text, groups", [
    # As forum posts write them (issue 27).
    ("1. France 2. England 3. Russia", [["France"], ["England"], ["Russia"]]),
    ("1) France, 2) England", [["France"], ["England"]]),
    ("France > England > Russia", [["France"], ["England"], ["Russia"]]),
    ("France, England, Russia", [["France"], ["England"], ["Russia"]]),
    ("[b]France[/b] > England", [["France"], ["England"]]),
    ("[code]F E [GR][/code]", [["France"], ["England"], ["Germany", "Russia"]]),
    ("1. [France Germany] 2. England", [["France", "Germany"], ["England"]]),
    # A bracket that looks like a tag is a bracket (Italy alone), unless it is closed as a tag.
    ("E[I]F", [["England"], ["Italy"], ["France"]]),
    ("[i]E[/i] F", [["England"], ["France"]]),
])
def test_lists_as_forums_post_them(text, groups):
    for read in (read_preference, read_preference_carefully):
        assert [list(g) for g in read(text, STD).groups] == groups


@pytest.mark.parametrize("text, column, fragment", [
    ("2. France 1. England", 11, "the numbers of a list rise"),
    ("1. 2. France", 4, "the numbers of a list rise"),
    ("France 1.", 8, "a number stands at the end of the list"),
    ("[1. France]", 2, "'1.' cannot stand here"),
])
def test_numbers_that_say_another_order_are_refused(text, column, fragment):
    with pytest.raises(PreferenceError) as caught:
        read_preference(text, STD)
    assert caught.value.column == column and fragment in str(caught.value)


def test_the_36_powers_of_void_by_name_letter_and_abbreviation():
    pref = read_preference("Adriatic Sea, Gulf of Lyon > [North Sea Norwegian Sea] BC Yor", VOID)
    assert pref.groups == (("Adriatic Sea",), ("Gulf of Lyon",), ("North Sea", "Norwegian Sea"), ("Aegean Sea",),
                           ("Albania",), ("Yorkshire",))
    assert len(VOID) == 36 and VOID.lookup("x").name == "North Sea" and VOID.lookup("Piedmont").letter == ""


def test_a_list_is_read_once_per_variant():
    void = variant_powers("void")
    assert variant_powers("void") is void  # one PowerList per variant (while cached), so one memo
    text = "Clyde, Wales, Yorkshire, Ruhr"
    first = read_preference(text, void)
    assert read_preference(text, void) is first  # kept read (PowerList.memo)
