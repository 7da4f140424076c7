"""A method that is no assignment, for tests/test_method_interface.py: its
own mail command (WAIT hours) sets a timer, the scheduler fires it. It
lives outside judge/ and is registered by the test alone: the shell must
drive it knowing nothing of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping

from judge.methods.interface import Method

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


class Countdown(Method):
    NAME = NAME
    ALIASES = ("cd",)
    ENGINE = "tests.toy_method"
    STARTS_AT_DEADLINE = False

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return "a countdown"

    def mail_line(self, ctx: Any, number: int, line: str) -> tuple[str, str] | None:
        words = line.split()
        if not words or words[0].upper() != "WAIT":
            return None
        if len(words) != 2 or not words[1].isdigit():
            return "rejected", "WAIT takes a number of hours"
        game = ctx.game
        game.method_state = {"fired": [], **(game.method_state or {}), "set_by": ctx.sender}
        game.next_tick = ctx.now + timedelta(hours=int(words[1]))
        return "done", f"the countdown of ?{game.name} runs out in {words[1]} hours"

    def tick(self, session: Any, config: Any, now: Any, game: Any, at: Any) -> str | None:
        state = dict(game.method_state)
        game.method_state = {**state, "fired": [*state["fired"], {"at": at.isoformat(), "now": now.isoformat()}]}
        return f"{game.name}: the countdown ran out"


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
