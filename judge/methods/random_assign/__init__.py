"""The random method: every power drawn at random at START. engine.py is
the pure draw, replay.py its `judge resolve` record."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.interface import Method


class RandomAssign(Method):
    NAME = "random"
    ENGINE = "judge.methods.random_assign.engine"
    RESULTS = "results/random"
    REPLAY = "judge.methods.random_assign.replay"
    DRAWS_AHEAD = False  # one draw a player

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return "every power drawn at random"

    def tick(self, session: Any, config: Any, now: Any, game: Any, at: Any) -> str | None:
        """The master's daily digest while the game forms (SET NOTICES DAILY)."""
        from judge.notices import send_digest

        return send_digest(session, config, now, game)


METHOD = RandomAssign()
