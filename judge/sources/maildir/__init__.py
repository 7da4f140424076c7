"""The Maildir source: mail an MTA, fetchmail, procmail or a script drops
into a Maildir folder ([inbox] path, DATA/inbox by default); acknowledged
mail moves to cur/ as "seen" (source.py).

A channel's package (judge/channels.py): its table (settings.py) and
open_source(), which judge/app.py calls with the settings read from it.
"""

from __future__ import annotations

from judge.sources.base import Intake
from judge.sources.maildir.settings import CONFIG_NAMES, KEYS, TABLE, MaildirSettings, read_settings
from judge.sources.maildir.source import MaildirSource, ensure_maildir

__all__ = ["CONFIG_NAMES", "KEYS", "TABLE", "MaildirSettings", "MaildirSource", "ensure_maildir", "open_source",
           "read_settings"]


def open_source(settings: MaildirSettings, intake: Intake) -> MaildirSource:
    return MaildirSource(settings.path, name="maildir:inbox", max_bytes=intake.max_bytes)
