"""LUI's offline part registered for tests/test_method_interface.py only."""

from __future__ import annotations

from typing import Any

from judge.methods.interface import Method


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


METHOD = LuiOffline()
