"""The SMTP transport: each mail handed to an SMTP server ([smtp] table),
on kept connections, pipelined where the server offers it (transport.py).

A channel's package (judge/channels.py): its table (settings.py) and
open_transport(). Light: the configuration reads it at every start, and
smtplib is loaded only when the transport is opened (or a name of
transport.py is asked for here).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from judge.transports.smtp.settings import CONFIG_NAMES, KEYS, TABLE, SmtpSettings, read_settings

if TYPE_CHECKING:
    from judge.transports.smtp.transport import SmtpTransport

__all__ = ["CONFIG_NAMES", "KEYS", "TABLE", "SmtpSettings", "open_transport", "read_settings"]


def open_transport(settings: SmtpSettings) -> SmtpTransport:
    from judge.transports.smtp.transport import SmtpTransport

    return SmtpTransport(settings)


def __getattr__(name: str) -> Any:
    # The names of judge/transports/smtp.py before it became this package
    # (SmtpTransport, tls_context, classify...), loaded on first use.
    if not name.startswith("__"):
        found = getattr(importlib.import_module(f"{__name__}.transport"), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
