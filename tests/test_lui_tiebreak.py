"""The MM2 priority tiebreak (judge/methods/lui/tiebreak.py) against the
seed's words, worked by hand, and its properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.methods.lui.tiebreak import UnbreakableTie, break_ties


def test_no_tie_changes_nothing():
    tb = break_ties({"a": 3, "b": 1, "c": 2}, [{"a": 0, "b": 0, "c": 0}])
    assert tb.as_dict() == {"a": 3, "b": 1, "c": 2}
    assert tb.steps == () and tb.fallback == ()
    assert tb.ranking() == ["a", "c", "b"]


def test_two_tied_the_lower_in_the_previous_round_stays():
    """'all tied players except the player who had the lowest priority in the
    previous round gain 1 priority'"""
    tb = break_ties({"a": 5, "b": 5}, [{"a": 3, "b": 4}])
    assert tb.as_dict() == {"a": 5, "b": 6}
    (step,) = tb.steps
    assert (step.stayed, step.reason, step.depth) == ("a", "lowest-previous", 0)


def test_three_tied_take_two_rounds():
    # Round 1: nobody gained yet, so a (lowest before) stays; b and c gain 1.
    # Round 2: b and c gained 1 each, no single most: b (lower before) stays.
    tb = break_ties({"a": 5, "b": 5, "c": 5}, [{"a": 3, "b": 4, "c": 5}])
    assert tb.as_dict() == {"a": 5, "b": 6, "c": 7}
    assert [(s.round, s.priority, s.group, s.stayed) for s in tb.steps] == [
        (1, 5, ("a", "b", "c"), "a"), (2, 6, ("b", "c"), "b")]
    assert dict(tb.gains) == {"a": 0, "b": 1, "c": 2}


def test_a_player_bumped_onto_a_higher_level_stays_below_who_was_there():
    """'all tied players except the single player who gained the most
    priority from this tiebreak gain 1 priority': b, bumped onto c's 6, stays
    there and c goes up, although c was lower in the previous round."""
    tb = break_ties({"a": 5, "b": 5, "c": 6}, [{"a": 1, "b": 2, "c": 0}])
    assert tb.as_dict() == {"a": 5, "b": 6, "c": 7}
    assert [(s.stayed, s.reason) for s in tb.steps] == [("a", "lowest-previous")]
    assert dict(tb.gains) == {"a": 0, "b": 1, "c": 1}


def test_groups_are_broken_each_on_its_own_level():
    tb = break_ties({"a": 5, "b": 5, "c": 6, "d": 6}, [{"a": 1, "b": 2, "c": 3, "d": 4}])
    # Level 5: a stays (lowest before), b above it. Level 6: c stays, d above.
    # Then a < b < c < d, each one above the one below: 5, 6, 7, 8.
    assert tb.as_dict() == {"a": 5, "b": 6, "c": 7, "d": 8}
    assert [(s.round, s.priority, s.stayed) for s in tb.steps] == [(1, 5, "a"), (1, 6, "c")]


def test_a_tie_below_never_passes_a_player_who_had_more():
    """Issue 26: with a 1 and b, c, d tied at 0, the tie among b, c, d is
    broken among them; a, who had more, stays ahead of all three."""
    tb = break_ties({"a": 1, "b": 0, "c": 0, "d": 0}, [{"a": 0, "b": 0, "c": 1, "d": 2}])
    assert tb.ranking() == ["a", "d", "c", "b"]
    assert tb.as_dict() == {"a": 3, "b": 0, "c": 1, "d": 2}
    assert [(s.group, s.stayed) for s in tb.steps] == [(("b", "c", "d"), "b"), (("c", "d"), "c")]
    # The final standings, {a: 1, b: 0, c: 2, d: 3} (a below c and d), cannot come out:
    tb = break_ties({"a": 1, "b": 0, "c": 0, "d": 0}, [], order=["a", "b", "c", "d"])
    assert tb.ranking()[0] == "a" and tb.fallback == (("b", "c", "d"), ("c", "d"))


def test_an_earlier_round_decides_when_the_previous_one_is_tied_too():
    tb = break_ties({"a": 2, "b": 2}, [{"a": 1, "b": 1}, {"a": 4, "b": 0}])
    assert tb.as_dict() == {"a": 3, "b": 2}
    assert (tb.steps[0].stayed, tb.steps[0].depth) == ("b", 1)


def test_a_standing_that_lacks_a_tied_player_is_skipped():
    tb = break_ties({"a": 2, "b": 2}, [{"a": 1}, {"a": 4, "b": 0}])
    assert tb.as_dict() == {"a": 3, "b": 2}


def test_tied_everywhere_the_roster_order_decides_and_says_so():
    tb = break_ties({"a": 0, "b": 0, "c": 1}, [{"a": 0, "b": 0, "c": 1}], order=["b", "a", "c"])
    # b is listed first: b stays (ranks lowest), a gains 1 onto c's 1; then a
    # (gained 1) stays and c gains 1.
    assert tb.as_dict() == {"a": 1, "b": 0, "c": 2}
    assert tb.fallback == (("a", "b"),)
    assert tb.steps[0].reason == "order"


def test_tied_everywhere_without_an_order_is_refused():
    with pytest.raises(UnbreakableTie, match="no rule"):
        break_ties({"a": 0, "b": 0}, [{"a": 1, "b": 1}])


def test_no_previous_round_at_all_needs_the_order():
    assert break_ties({"a": 0, "b": 0}, order=["a", "b"]).as_dict() == {"a": 0, "b": 1}
    with pytest.raises(UnbreakableTie):
        break_ties({"a": 0, "b": 0})


priorities = st.dictionaries(st.sampled_from("abcdefghijk"), st.integers(0, 6), min_size=1, max_size=11)


@settings(max_examples=300)
@given(priorities, st.data())
def test_every_tie_is_broken_and_nobody_loses_priority(current, data):
    previous = data.draw(st.fixed_dictionaries({p: st.integers(0, 4) for p in current}))
    tb = break_ties(current, [previous], order=sorted(current))
    after = tb.as_dict()
    assert len(set(after.values())) == len(after)  # all distinct
    gains = dict(tb.gains)
    assert all(after[p] == current[p] + gains[p] and gains[p] >= 0 for p in current)
    # A player with strictly more priority stays ahead of one with less.
    assert all(after[p] > after[q] for p in current for q in current if current[p] > current[q])
    assert max(after.values()) <= max(current.values()) + len(current)
    # A result with no tie is left as it is.
    assert break_ties(after, [previous]).as_dict() == after


@settings(max_examples=200)
@given(priorities, st.data())
def test_the_input_order_never_matters(current, data):
    previous = data.draw(st.fixed_dictionaries({p: st.integers(0, 4) for p in current}))
    order = sorted(current)
    shuffled = dict(reversed(list(current.items())))
    assert break_ties(current, [previous], order).as_dict() == break_ties(shuffled, [previous], order).as_dict()
