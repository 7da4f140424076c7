"""A method that is no assignment, for tests/test_method_interface.py, added
as a newcomer adds one: one folder (this package: engine.py, live.py) and
one line in the registry. Its own mail command (WAIT hours) sets a timer,
the game driver fires it. It lives outside judge/ and is registered by the
test alone: the shell must drive it knowing nothing of it. Its hooks are pure functions of the game
(judge.methods.api), as every live method's."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.interface import LiveCapability, LiveMethod

NAME = "countdown"


class Countdown(LiveMethod):
    NAME = NAME
    ALIASES = ("cd",)
    ENGINE = "tests.toy_method.engine"
    LIVE_GAME = LiveCapability("tests.toy_method.live")  # its pure hooks: claims, command and tick

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return "a countdown"


METHOD = Countdown()
