"""Every mail channel the judge knows: one line each, name -> its package.

A source (judge/sources/NAME/) hands the judge raw mail; a transport
(judge/transports/NAME/) sends what the outbox holds. The configuration
names those in use, by these names: `[inbox] type` (the source that reads
mail), `[outbox] transport` (the transport that sends it) and, when the
file has a [forum] table, `[forum] type` (a forum read and posted to
besides: a channel that is a source and a transport, both reading [forum]).
judge/app.py opens them; nothing else in the judge names a channel.

A channel's package provides (its `__init__.py`, kept light: the
configuration imports every channel's to know its table, also for each
`judge deliver`; the code that talks to a server is imported when the
channel is opened):

    TABLE, KEYS, read_settings(table)   its own table (judge.tables)
    open_source(settings, intake)       a source: a judge.sources.base.Source
    open_transport(settings)            a transport: a judge.transports.base.Transport

A channel imports no configuration module: it is given its settings (and a
source, judge.sources.base.Intake), nothing else.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SOURCES = {
    "maildir": "judge.sources.maildir",
    "imap": "judge.sources.imap",
    "discourse": "judge.sources.discourse",
}

TRANSPORTS = {
    "maildir": "judge.transports.maildir",
    "smtp": "judge.transports.smtp",
    "discourse": "judge.transports.discourse",
}


def source(name: str) -> ModuleType:
    """The package of the source `name` (a key of SOURCES)."""
    return importlib.import_module(SOURCES[name])


def transport(name: str) -> ModuleType:
    """The package of the transport `name` (a key of TRANSPORTS)."""
    return importlib.import_module(TRANSPORTS[name])


def parts() -> dict[str, ModuleType]:
    """Every channel as a part with a table: "sources.NAME" and
    "transports.NAME" -> its package."""
    return {**{f"sources.{name}": source(name) for name in SOURCES},
            **{f"transports.{name}": transport(name) for name in TRANSPORTS}}


def forums() -> list[str]:
    """The names `[forum] type` may take: channels that are a source and a
    transport reading the [forum] table."""
    return sorted(name for name in SOURCES.keys() & TRANSPORTS.keys()
                  if source(name).TABLE == "forum" and transport(name).TABLE == "forum")
