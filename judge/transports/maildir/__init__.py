"""The Maildir transport: each mail written into a Maildir folder ([outbox]
path, DATA/outbox by default), one file per Message-ID (transport.py): for
an MTA or a script that picks the mails up, and for tests.

A channel's package (judge/channels.py): its table (settings.py) and
open_transport().
"""

from __future__ import annotations

from judge.transports.maildir.settings import CONFIG_NAMES, KEYS, TABLE, MaildirSettings, read_settings
from judge.transports.maildir.transport import MaildirTransport, message_file_name, read_all

__all__ = ["CONFIG_NAMES", "KEYS", "TABLE", "MaildirSettings", "MaildirTransport", "message_file_name",
           "open_transport", "read_all", "read_settings"]


def open_transport(settings: MaildirSettings) -> MaildirTransport:
    return MaildirTransport(settings.path)
