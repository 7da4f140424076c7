"""The random method: every power drawn at random at START. engine.py is
the pure draw, replay.py its `judge resolve` record."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.interface import AssignmentCapability, Method


class RandomAssign(Method):
    NAME = "random"
    ENGINE = "judge.methods.random_assign.engine"
    RESULTS = "results/random"
    REPLAY = "judge.methods.random_assign.replay"
    ASSIGNMENT = AssignmentCapability(draws_ahead=False)  # one draw a player: cheap

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return "every power drawn at random"


METHOD = RandomAssign()
