"""SET DEADLINE text: `\\s*(UTC|GMT|Z)$` was tried at every blank of a run
of blanks, so `1` + n spaces + `x` cost quadratic time (4 s at 16,000
characters). The line limit caps a mail's line, but parse_deadline must be
linear for any caller."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from judge.deadlines import DeadlineError, parse_deadline

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _cost(text: str) -> float:
    best = float("inf")
    for _ in range(5):
        t = time.thread_time()
        try:
            parse_deadline(text, NOW)
        except DeadlineError:
            pass
        best = min(best, time.thread_time() - t)
    return best


def test_deadline_zone_suffix_is_linear():
    for shape in (lambda n: "1" + " " * n + "x", lambda n: " " * n + "UTC x", lambda n: "+" + "1 " * n):
        small, large = _cost(shape(4000)), _cost(shape(16000))
        # Linear code costs about 4x here; the old quadratic one about 16x.
        assert large < 8 * small + 0.002, (small, large)


def test_zones_still_read():
    for text in ("2026-12-01 18:00 UTC", "2026-12-01T18:00Z", "2026-12-01 18:00 gmt"):
        assert parse_deadline(text, NOW) == datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
