"""The IMAP source: a mailbox on an IMAP server ([imap] table), read above a
watermark kept in the store, mail marked or moved once it is stored, IDLE
between passes (source.py).

A channel's package (judge/channels.py): its table (settings.py) and
open_source(). This file stays light: the configuration reads it at every
start, `judge deliver` included, and imapclient is loaded only when the
source is opened (or a name of source.py is asked for here).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from judge.sources.imap.settings import CONFIG_NAMES, KEYS, SECURITY, TABLE, ImapSettings, is_loopback, read_settings

if TYPE_CHECKING:
    from judge.sources.base import Intake
    from judge.sources.imap.source import ImapSource

__all__ = ["CONFIG_NAMES", "KEYS", "SECURITY", "TABLE", "ImapSettings", "is_loopback", "open_source",
           "read_settings"]


def open_source(settings: ImapSettings, intake: Intake) -> ImapSource:
    from judge.sources.imap.source import ImapSource

    return ImapSource(settings, intake.watermarks, max_bytes=intake.max_bytes)


def __getattr__(name: str) -> Any:
    # The names of judge/sources/imap.py before it became this package
    # (ImapSource, DONE_KEYWORD, server_name...), loaded on first use.
    if not name.startswith("__"):
        found = getattr(importlib.import_module(f"{__name__}.source"), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
