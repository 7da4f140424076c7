"""judge.deadlines.format_time writes out what strftime("%a %d %b %Y %H:%M UTC")
gives in the C locale (issue 29: strftime was a fifth of a LIST of the games)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, strategies as st

from judge.deadlines import format_time


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30)),
                                               timezone(timedelta(hours=-8))])))
def test_format_time_is_strftime_in_utc(when):
    assert format_time(when) == when.astimezone(timezone.utc).strftime("%a %d %b %Y %H:%M UTC")


def test_format_time_of_nothing():
    assert format_time(None) == "not set"
    assert format_time(datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)) == "Sun 01 Mar 2026 12:00 UTC"
