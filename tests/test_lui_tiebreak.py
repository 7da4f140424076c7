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


def test_the_single_player_who_gained_most_stays():
    """'all tied players except the single player who gained the most
    priority from this tiebreak gain 1 priority': b, bumped onto c's 6, stays
    there although c was lower in the previous round."""
    tb = break_ties({"a": 5, "b": 5, "c": 6}, [{"a": 1, "b": 2, "c": 0}])
    assert tb.as_dict() == {"a": 5, "b": 6, "c": 7}
    assert [(s.stayed, s.reason) for s in tb.steps] == [("a", "lowest-previous"), ("b", "most-gained")]


def test_groups_of_one_round_are_broken_together():
    tb = break_ties({"a": 5, "b": 5, "c": 6, "d": 6}, [{"a": 1, "b": 2, "c": 3, "d": 4}])
    # Round 1: a stays at 5 (b -> 6), c stays at 6 (d -> 7), at once.
    # Round 2: b (gained 1) and c (0) at 6: b stays, c -> 7.
    # Round 3: c and d at 7 gained 1 each: c (3 before) stays, d -> 8.
    assert tb.as_dict() == {"a": 5, "b": 6, "c": 7, "d": 8}
    assert [(s.round, s.stayed) for s in tb.steps] == [(1, "a"), (1, "c"), (2, "b"), (3, "c")]


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
