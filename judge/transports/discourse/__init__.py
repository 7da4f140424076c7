"""The Discourse transport: answers to forum posts, and mail to forum
players, posted on a Discourse forum (transport.py); `[forum] type =
"discourse"`, with the Discourse source's settings (the [forum] table,
judge/sources/discourse/settings.py). Put in front of the mail transport
(judge/transports/composite.py), it takes only the forum's recipients.

A channel's package (judge/channels.py): its table and open_transport().
Light: the configuration reads it at every start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from judge.sources.discourse.settings import KEYS, TABLE, DiscourseSettings, read_settings

if TYPE_CHECKING:
    from judge.transports.discourse.transport import DiscourseTransport

__all__ = ["KEYS", "TABLE", "DiscourseSettings", "open_transport", "read_settings"]


def open_transport(settings: DiscourseSettings) -> DiscourseTransport:
    from judge.transports.discourse.transport import DiscourseTransport

    return DiscourseTransport(settings)


def __getattr__(name: str) -> Any:
    # The names of judge/transports/discourse.py before it became this
    # package (DiscourseTransport, and CompositeTransport, now the
    # transports' own: composite.py), loaded on first use.
    if not name.startswith("__"):
        for module in ("judge.transports.discourse.transport", "judge.transports.composite"):
            found = getattr(importlib.import_module(module), name, None)
            if found is not None:
                return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
