"""Reading deadlines as GMs write them: a date and time, or a delay from now."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_DELAY = re.compile(r"^\+?\s*((?:\d+\s*[wdhm]\s*)+)$", re.I)
_PART = re.compile(r"(\d+)\s*([wdhm])", re.I)
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes"}

EXAMPLES = "2026-12-01 18:00 UTC, 2026-12-01T18:00+01:00 or +48h (also +3d, +1d12h, +90m)"


class DeadlineError(ValueError):
    pass


def parse_deadline(text: str, now: datetime) -> datetime:
    """A deadline in UTC from `text`; times without a zone are taken as UTC."""
    t = text.strip()
    m = _DELAY.match(t)
    if m:
        delta = timedelta()
        for amount, unit in _PART.findall(m.group(1)):
            delta += timedelta(**{_UNITS[unit.lower()]: int(amount)})
        if delta <= timedelta():
            raise DeadlineError(f"the delay {text!r} is zero")
        return now + delta
    zoned = _utc_suffix(t)
    try:
        when = datetime.fromisoformat(zoned.replace(" +", "+").replace(" -", "-"))
    except ValueError as err:
        raise DeadlineError(f"cannot read {text!r} as a date; write it like {EXAMPLES}") from err
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    when = when.astimezone(timezone.utc)
    if when <= now:
        raise DeadlineError(f"{format_time(when)} is already past (it is now {format_time(now)})")
    return when


def _utc_suffix(t: str) -> str:
    r"""A trailing UTC, GMT or Z as the offset +00:00. Not a regular
    expression: `\s*(UTC|GMT|Z)$` is tried at every blank of a run of
    blanks, quadratic in a long line (issue 9)."""
    upper = t.upper()
    for zone in ("UTC", "GMT", "Z"):
        if upper.endswith(zone):
            return t[:len(t) - len(zone)].rstrip() + "+00:00"
    return t


def format_time(when: datetime | None) -> str:
    if when is None:
        return "not set"
    return when.astimezone(timezone.utc).strftime("%a %d %b %Y %H:%M UTC")
