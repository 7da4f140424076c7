"""The Discourse source: posts of a Discourse forum's topics, and the
private messages to the judge's account, read through its API as mail
(source.py); `[forum] type = "discourse"`, settings in the [forum] table.
The Discourse transport (judge/transports/discourse/) posts the answers
with the same settings.

A channel's package (judge/channels.py): its table (settings.py) and
open_source(). Light: the configuration reads it at every start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from judge.sources.discourse.settings import KEYS, TABLE, DiscourseSettings, read_settings

if TYPE_CHECKING:
    from judge.sources.base import Intake
    from judge.sources.discourse.source import DiscourseSource

__all__ = ["KEYS", "TABLE", "DiscourseSettings", "open_source", "read_settings"]

def open_source(settings: DiscourseSettings, intake: Intake) -> DiscourseSource:
    from judge.sources.discourse.source import DiscourseSource

    return DiscourseSource(settings, intake.watermarks)


def __getattr__(name: str) -> Any:
    # The names of judge/sources/discourse.py before it became this package
    # (DiscourseSource, DiscourseClient...), loaded on first use.
    if not name.startswith("__"):
        for module in ("settings", "client", "source"):
            found = getattr(importlib.import_module(f"{__name__}.{module}"), name, None)
            if found is not None:
                return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
