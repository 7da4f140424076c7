"""A toy transport, for tests/test_channels.py: every mail left in a
letterbox of each recipient (a folder per address under [letterbox] path).
It lives outside judge/ and is registered by the test alone, one line in
judge.channels.TRANSPORTS: the judge must open it and send a game's mail
through it knowing nothing of it. What a channel's package provides is
judge/channels.py's docstring; this is all of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judge.tables import Table

TABLE = "letterbox"
KEYS = frozenset({"path", "limit"})


@dataclass(frozen=True)
class LetterboxSettings:
    path: Path
    limit: int  # letters a box holds; one more is refused for good


def read_settings(table: Table) -> LetterboxSettings:
    limit = table.get("limit", int, 1000)
    if limit < 1:
        raise table.error("limit", f"at least 1, not {limit}")
    return LetterboxSettings(path=table.path("path", "letterboxes"), limit=limit)


def open_transport(settings: LetterboxSettings):
    from tests.toy_transport.letterbox import LetterboxTransport

    return LetterboxTransport(settings)
