"""SET DEADLINE past datetime's range (issue 26, point 7): `+99999999999999w`
overflowed timedelta, `+999999999d` and `9999-12-31T23:59-23:59` the
datetime of the deadline, and the OverflowError quarantined the whole
mail, CREATE included. Each is a clear refusal now, and the rest of the mail
runs."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from judge.deadlines import MAX_AHEAD, DeadlineError, parse_deadline
from judge.games import find_game

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
GM = "gm@example.test"
HUGE = ["+99999999999999w", "+999999999d", "9999-12-31T23:59-23:59", "+99999999999999999999m"]


@pytest.mark.parametrize("text", HUGE)
def test_a_deadline_past_the_calendar_is_refused_with_a_reason(text):
    with pytest.raises(DeadlineError, match="more than 1098 days ahead"):
        parse_deadline(text, NOW)


def test_the_limit_and_the_calendar_edges():
    assert parse_deadline("+1098d", NOW) == NOW + MAX_AHEAD
    with pytest.raises(DeadlineError, match="ahead"):
        parse_deadline("+1098d1m", NOW)
    with pytest.raises(DeadlineError, match="long past"):
        parse_deadline("0001-01-01T00:00+23:59", NOW)


@pytest.mark.parametrize("method", ["blind-auction", "lui", "payola", "pt3"])
def test_the_rest_of_the_mail_runs(harness, method):
    h = harness
    lines = [f"CREATE ?overflow gmpw {method} standard"] + [f"SET DEADLINE {t}" for t in HUGE] + \
        ["SET DEADLINE +2d", "LIST ?overflow"]
    h.mail(GM, "\n".join(lines))
    reply = " ".join(h.body(h.last_to(GM)).split())
    assert "internal error" not in reply
    assert reply.count("more than 1098 days ahead") == len(HUGE)
    with h.judge.sessions() as s:
        game = find_game(s, "overflow")
        assert game is not None and game.error is None
        assert game.deadline is not None
        assert (game.deadline.replace(tzinfo=timezone.utc) if game.deadline.tzinfo is None else game.deadline) \
            - h.clock.now() < MAX_AHEAD
