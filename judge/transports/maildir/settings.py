"""The Maildir transport's settings: `path` of the [outbox] table (its
`transport`, `max_attempts` and `retry_seconds` are the core's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judge.tables import Table

TABLE = "outbox"
KEYS = frozenset({"path"})


@dataclass(frozen=True)
class MaildirSettings:
    path: Path  # the Maildir folder written; relative to the data directory in the file


def read_settings(table: Table) -> MaildirSettings:
    return MaildirSettings(path=table.path("path", "outbox"))


# config.outbox_path, as the Config named it before the transports read their own tables.
CONFIG_NAMES = {"outbox_path": lambda settings: settings.path}
