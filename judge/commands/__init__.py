"""Mail commands, one module each; importing this package registers them:
the shell's own below, then each method's (its Method's COMMANDS, and the
tables they use, its MODELS)."""

import importlib

from judge.commands import (  # noqa: F401  (registration by import)
    eml_autostart,
    eml_create,
    eml_eject,
    eml_entropy,
    eml_for,
    eml_help,
    eml_list,
    eml_notices,
    eml_reminders,
    eml_set,
    eml_signoff,
    eml_signon,
    eml_start,
    eml_unlock,
)
from judge.commands.base import HANDLERS, CommandRejected, Context
from judge.methods import METHODS
from judge.methods.registry import load_models

load_models()
for _name in METHODS:
    for _module in METHODS[_name].COMMANDS:
        importlib.import_module(_module)

__all__ = ["HANDLERS", "CommandRejected", "Context"]
