"""Mail commands, one module each; importing this package registers them."""

from judge.commands import (  # noqa: F401  (registration by import)
    eml_autostart,
    eml_blinding,
    eml_create,
    eml_eject,
    eml_entropy,
    eml_for,
    eml_help,
    eml_list,
    eml_preference,
    eml_reminders,
    eml_set,
    eml_signoff,
    eml_signon,
    eml_start,
    eml_unlock,
)
from judge.commands.base import HANDLERS, CommandRejected, Context

__all__ = ["HANDLERS", "CommandRejected", "Context"]
