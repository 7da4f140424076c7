"""Reading deadlines as GMs write them: a date and time, or a delay from now."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_DELAY = re.compile(r"^\+?\s*((?:\d+\s*[wdhm]\s*)+)$", re.I)
_PART = re.compile(r"(\d+)\s*([wdhm])", re.I)

EXAMPLES = "2026-12-01 18:00 UTC, 2026-12-01T18:00+01:00 or +48h (also +3d, +1d12h, +90m)"
# A deadline further ahead is a typo, and past datetime's range an overflow
# that must not crash the mail it came in (issue 26: +99999999999999w).
MAX_AHEAD = timedelta(days=3 * 366)


class DeadlineError(ValueError):
    pass


def parse_deadline(text: str, now: datetime) -> datetime:
    """A deadline in UTC from `text`; times without a zone are taken as UTC."""
    t = text.strip()
    m = _DELAY.match(t)
    if m:
        delta = timedelta()
        for amount, unit in _PART.findall(m.group(1)):
            # Each part alone is bounded before timedelta sees it: 10**14
            # weeks overflow timedelta itself.
            part = int(amount) * _MINUTES[unit.lower()]
            if part > _MAX_MINUTES:
                raise _too_far(text)
            delta += timedelta(minutes=part)
        if delta <= timedelta():
            raise DeadlineError(f"the delay {text!r} is zero")
        if delta > MAX_AHEAD:
            raise _too_far(text)
        return now + delta
    zoned = _utc_suffix(t)
    try:
        when = datetime.fromisoformat(zoned.replace(" +", "+").replace(" -", "-"))
    except ValueError as err:
        raise DeadlineError(f"cannot read {text!r} as a date; write it like {EXAMPLES}") from err
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    try:
        when = when.astimezone(timezone.utc)  # 9999-12-31T23:59-23:59 is in the year 10000
    except OverflowError as err:
        if when.year > 1:
            raise _too_far(text) from err
        raise DeadlineError(f"{t!r} is long past") from err
    if when <= now:
        raise DeadlineError(f"{format_time(when)} is already past (it is now {format_time(now)})")
    if when - now > MAX_AHEAD:
        raise _too_far(text)
    return when


_MINUTES = {"w": 7 * 24 * 60, "d": 24 * 60, "h": 60, "m": 1}
_MAX_MINUTES = int(MAX_AHEAD.total_seconds()) // 60


def _too_far(text: str) -> DeadlineError:
    return DeadlineError(f"{text.strip()!r} is more than {MAX_AHEAD.days} days ahead: give a deadline within "
                         f"{MAX_AHEAD.days // 366} years, like {EXAMPLES}")


def _utc_suffix(t: str) -> str:
    r"""A trailing UTC, GMT or Z as the offset +00:00. Not a regular
    expression: `\s*(UTC|GMT|Z)$` is tried at every blank of a run of
    blanks, quadratic in a long line (issue 9)."""
    upper = t.upper()
    for zone in ("UTC", "GMT", "Z"):
        if upper.endswith(zone):
            return t[:len(t) - len(zone)].rstrip() + "+00:00"
    return t


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def format_time(when: datetime | None) -> str:
    """"Sat 01 Mar 2026 12:00 UTC": strftime's "%a %d %b %Y %H:%M UTC" in
    the C locale (Python's, unless something calls setlocale), written out:
    strftime took a fifth of a LIST of the games."""
    if when is None:
        return "not set"
    u = when.astimezone(timezone.utc)
    return f"{_DAYS[u.weekday()]} {u.day:02d} {_MONTHS[u.month - 1]} {u.year} {u.hour:02d}:{u.minute:02d} UTC"
