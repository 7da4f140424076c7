"""The blind-random method's table of the configuration: [blinding]
(docs/blinding.md, "The operator's settings"). Declared in
judge/methods/registry.py (TABLES) and read by judge.config at start, like
a mail channel's table (judge/tables.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from judge.tables import Table

TABLE = "blinding"
KEYS = frozenset({"trusted_judges"})


@dataclass(frozen=True)
class BlindingSettings:
    # The judges this judge is the blinding protocol's third party for at
    # once; a THIRDPARTY request from anyone else waits for an operator's
    # `judge thirdparty accept` (docs/blinding.md).
    trusted_judges: tuple[str, ...] = ()


def read_settings(table: Table) -> BlindingSettings:
    trusted = table.get("trusted_judges", list, [])
    for judge in trusted:
        if not isinstance(judge, str) or "@" not in judge:
            raise table.error("trusted_judges", f"{judge!r} is not a mail address")
    return BlindingSettings(trusted_judges=tuple(judge.strip().lower() for judge in trusted))


class _Configured(Protocol):
    """What the method needs of the configuration it is handed (a judge.config.Config)."""

    def part(self, key: str) -> Any: ...


def blinding_settings(config: _Configured) -> BlindingSettings:
    """The method's settings as the judge read them at start, from the
    Config the shell hands the method's commands (ctx.config)."""
    return config.part("methods.blind-random")


# config.trusted_judges, as the Config named it before the method read its own table.
CONFIG_NAMES = {"trusted_judges": lambda settings: settings.trusted_judges}
