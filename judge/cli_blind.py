"""Moved: `judge blind` is judge/methods/blind_random/cli.py (the method's CLI).
This name stays an alias of that module for the code and tests that import
it from here."""

import sys

from judge.methods.blind_random import cli as _moved

sys.modules[__name__] = _moved
