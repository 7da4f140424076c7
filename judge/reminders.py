"""Reminders before a deadline, as nJudge and DPjudge send them: pure rules
(no database, no clock) for what SET REMINDERS means, when a game's
reminder is due, and whom it is for. The shell is judge/scheduler.py.

A reminder is sent once per (game, deadline, hours before it): a moved
deadline makes them due again. A game that enters its window late (the
judge was down, or the deadline was set close) gets one mail, for the
nearest threshold passed, not one per threshold it missed.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Sequence

from judge.wording import plural

# A reminder further ahead than this is no reminder; and the scheduler's
# query need not look further ahead than this for games to remind.
MOST_HOURS = 7 * 24.0
MOST_REMINDERS = 5

OFF = ("off", "none", "no")
DEFAULT = "default"

# One amount: "24h", "24", "1.5h", "2d", "90m" (hours if no unit).
_AMOUNT = re.compile(r"(\d{1,4}(?:\.\d{1,2})?)([dhm]?)", re.I)
_UNIT_HOURS = {"d": 24.0, "h": 1.0, "m": 1 / 60, "": 1.0}

EXAMPLES = ("send it like SET REMINDERS 24h 1h (hours before the deadline; also 2d, 90m), SET REMINDERS OFF "
            "or SET REMINDERS DEFAULT")


class ReminderError(ValueError):
    pass


def parse_hours(text: str) -> tuple[float, ...] | None:
    """The hours before the deadline that `text` asks for, largest first;
    () for OFF, None for DEFAULT (the judge's configured ones). Words are
    split on blanks and commas (one pass: linear in the text)."""
    words = [w for w in re.split(r"[\s,;]+", text.strip()) if w]
    if not words:
        raise ReminderError(f"SET REMINDERS needs the hours before the deadline: {EXAMPLES}")
    if len(words) == 1 and words[0].casefold() in OFF:
        return ()
    if len(words) == 1 and words[0].casefold() == DEFAULT:
        return None
    if len(words) > MOST_REMINDERS:
        raise ReminderError(f"at most {MOST_REMINDERS} reminders, not {len(words)}: {EXAMPLES}")
    hours = set()
    for word in words:
        m = _AMOUNT.fullmatch(word)
        if m is None:
            raise ReminderError(f"cannot read {word[:40]!r} as a time before the deadline: {EXAMPLES}")
        h = float(m.group(1)) * _UNIT_HOURS[m.group(2).lower()]
        if not 0 < h <= MOST_HOURS:
            raise ReminderError(f"{word} is not between 1 minute and {MOST_HOURS:g} hours (7 days) before the "
                                f"deadline: {EXAMPLES}")
        hours.add(round(h, 4))
    return tuple(sorted(hours, reverse=True))


def game_hours(params: Mapping[str, Any], configured: Sequence[float]) -> tuple[float, ...]:
    """A game's reminders: its own (SET REMINDERS), else the judge's."""
    own = params.get("reminders")
    if own is None:
        return tuple(configured)
    return tuple(sorted((float(h) for h in own), reverse=True))


def describe(hours: Sequence[float]) -> str:
    """ "24h and 1h before the deadline", or "off". """
    if not hours:
        return "off"
    shown = [_short(h) for h in hours]
    joined = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"{joined} before the deadline"


def _short(h: float) -> str:
    # Whole hours as hours (48h, not 2d: as the master wrote them), the rest
    # in minutes (90m).
    return f"{h:g}h" if h % 1 == 0 else f"{round(h * 60)}m"


def due(deadline: datetime, now: datetime, hours: Iterable[float],
        sent: Iterable[tuple[str, float]]) -> float | None:
    """The threshold (hours before `deadline`) whose reminder is due now,
    or None. `sent`: the (deadline as ISO text, hours) of the reminders
    sent so far. Only the nearest threshold passed counts: the ones before
    it were missed (or sent), and one mail is enough."""
    if deadline <= now:
        return None  # the deadline's own work (judge.scheduler) takes over
    passed = [h for h in hours if deadline - timedelta(hours=h) <= now]
    if not passed:
        return None
    nearest = min(passed)
    key = deadline.isoformat()
    if any(d == key and h <= nearest for d, h in sent):
        return None
    return nearest


def time_left(deadline: datetime, now: datetime) -> str:
    """ "about 24 hours", "about 45 minutes": the time a reminder says is left."""
    minutes = max(1, round((deadline - now).total_seconds() / 60))
    if minutes < 90:
        return f"about {plural(minutes, 'minute')}"
    hours = round(minutes / 60)
    if hours < 48:
        return f"about {plural(hours, 'hour')}"
    return f"about {plural(round(hours / 24), 'day')}"


# The games whose deadline acts on what their players sent, so that a
# player who sent nothing is worth reminding, by state: an auction's
# deadline closes its bidding, a forming preference game's starts it
# (resolved at once), a running blind-random game's names the players who
# stalled to the master. A random game's players have nothing to send.
# Each method says which state that is (its capability's Reminders: judge.methods.interface.reminders_of).


def reminded() -> dict[str, tuple[str, ...]]:
    """State -> the methods reminded in it."""
    from judge.methods import METHODS
    from judge.methods.interface import reminders_of

    table: dict[str, tuple[str, ...]] = {}
    for name in METHODS:
        said = reminders_of(METHODS[name])
        if said is not None:
            table[said.state] = (*table.get(said.state, ()), name)
    return table


def waits_on_players(method: str, state: str) -> bool:
    from judge.methods import get_method
    from judge.methods.interface import reminders_of

    said = reminders_of(get_method(method))
    return said is not None and said.state == state
