"""PT3 amounts past the game's decimal places (issue 26, point 9): the
attack, a bid with 31 places in a 2-place game, left X a balance of 1E-31."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judge.methods.pt3 import engine as E
from tests.test_pt3_engine import game, rejected


def test_a_bid_with_more_places_than_the_context_holds_is_refused():
    """Issue 26: BID 99.9999999999999999999999999999999 B2 in a 2-place game
    was taken (normalize() rounded it to 100 first) and X's balance became
    1E-31. Amounts and balances have the game's places, no more."""
    long = "99." + "9" * 31
    e = rejected(game("100", "100"), "X", f"BID {long} B2", "too_many_places")
    assert e.amount == Decimal(long) and e.places == 2
    assert E.places_of(Decimal(long)) == 31 and E.places_of(Decimal("0.000")) == 0
    assert E.places_of(Decimal("1E-2")) == 2 and E.places_of(Decimal("12.50")) == 1
    with pytest.raises(E.ParamError, match="more than 2 decimal places"):
        E.params_from({"balance_x": "1." + "0" * 30 + "1"}, 2)
