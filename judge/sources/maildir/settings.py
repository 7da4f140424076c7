"""The Maildir source's settings: `path` of the [inbox] table (its `type`,
which source reads mail, is the core's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judge.tables import Table

TABLE = "inbox"
KEYS = frozenset({"path"})


@dataclass(frozen=True)
class MaildirSettings:
    path: Path  # the Maildir folder read; relative to the data directory in the file


def read_settings(table: Table) -> MaildirSettings:
    return MaildirSettings(path=table.path("path", "inbox"))


# config.inbox_path, as the Config named it before the sources read their own tables.
CONFIG_NAMES = {"inbox_path": lambda settings: settings.path}
