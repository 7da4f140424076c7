"""A part's own table of the configuration.

A part (a mail source, a transport, a method) that has settings of its own
declares them in a module of its folder, and the configuration hands it its
table and nothing else (Mailman's `[mta] outgoing:`, errbot's
`check_configuration`: the core knows no particular part):

    TABLE = "imap"                  # the [table] it reads
    KEYS = frozenset({"host", ...}) # the keys it owns there (unknown keys are refused)
    def read_settings(table: Table) -> Settings   # its typed settings, checked

and, optionally, CONFIG_NAMES: {name: getter}, the attributes its settings
had on the Config before parts read their own tables (`config.inbox_path`),
kept for the code that reads them there.

read_settings() raises ConfigError (table.error(...)) naming the table and
the key; the daemon exits 2 on it, `judge deliver` 75. Several parts may
share a table (the Maildir source owns `path` of [inbox], the core owns
`type`); a table is read when the file has it or its part is in use, so a
mistake in it stops the judge at its start, not at its first mail.

This module imports nothing of the judge: parts import it, never the
configuration (judge/config.py), which imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """The configuration cannot be used; the message names the option."""


class Table:
    """One [table] of the configuration as a part reads it: typed values,
    every error naming the table and the key."""

    def __init__(self, name: str, values: Mapping[str, Any], base: Path) -> None:
        self.name = name
        self.values = dict(values)
        self.base = base  # the data directory, that relative paths are taken from

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def error(self, key: str | None, message: str) -> ConfigError:
        return ConfigError(f"[{self.name}] {key}: {message}" if key else f"[{self.name}] {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        """The value of `key` if it is a `kind` (a bool is no number), else ConfigError."""
        if key not in self.values:
            return default
        value = self.values[key]
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
            raise self.error(key, f"expected {getattr(kind, '__name__', kind)}, got {value!r}")
        return value

    def number(self, key: str, default: float) -> float:
        """A whole or decimal number."""
        return float(self.get(key, (int, float), default))

    def path(self, key: str, default: str) -> Path:
        """A path; a relative one is taken from the data directory."""
        path = Path(self.get(key, str, default)).expanduser()
        return path if path.is_absolute() else self.base / path
