"""A method that is no assignment, for tests/test_method_interface.py: its
own mail command (WAIT hours) sets a timer, the game driver fires it. It
lives outside judge/ and is registered by the test alone: the shell must
drive it knowing nothing of it. Its hooks are pure functions of the game
(judge.methods.api), as every live method's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping

from judge.methods.api import Actor, GameView, Outcome, done, rejected
from judge.methods.interface import LiveMethod, Method

NAME = "countdown"


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Params:
    def as_dict(self) -> dict[str, Any]:
        return {}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    return Params()


def check_params(U: int, params: Params) -> list[str]:
    return []


class Countdown(LiveMethod):
    NAME = NAME
    ALIASES = ("cd",)
    ENGINE = "tests.toy_method"
    LIVE = "tests.toy_method"  # its pure hooks are this module's claims, command and tick
    STARTS_AT_DEADLINE = False

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return "a countdown"


def claims(line: str) -> bool:
    words = line.split()
    return bool(words) and words[0].upper() == "WAIT"


def command(game: GameView, actor: Actor, number: int, line: str, at: datetime, scratch: dict) -> Outcome:
    words = line.split()
    if len(words) != 2 or not words[1].isdigit():
        return rejected("WAIT takes a number of hours")
    by = game.gm_address if actor.master else actor.player.address
    return done(f"the countdown of ?{game.name} runs out in {words[1]} hours",
                method_state={"fired": [], **(game.method_state or {}), "set_by": by},
                next_tick=at + timedelta(hours=int(words[1])))


def tick(game: GameView, now: datetime, at: datetime) -> Outcome:
    state = dict(game.method_state)
    # The timer is not set again: a tick that does not move it is not fired twice.
    return Outcome(method_state={**state, "fired": [*state["fired"], {"at": at.isoformat(), "now": now.isoformat()}]},
                   next_tick=None, log=f"{game.name}: the countdown ran out")


METHOD = Countdown()


class LuiOffline(Method):
    """LUI's offline replay behind the interface, as its package would
    declare it (tests/test_method_interface.py: the interface fits a method
    whose log is timed events, not one text per player)."""

    NAME = "lui"
    ENGINE = "judge.methods.lui.engine"

    def resolve_file(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        from judge.methods.lui.replay import ReplayError, replay
        from judge.resolution.errors import ResolveInputError

        try:
            return replay(data)
        except ReplayError as err:
            raise ResolveInputError(str(err)) from err


METHOD_LUI = LuiOffline()
