"""Lowest Unique Integer (method `lui`, issue 13): a real-time seat auction.

Rules: ../shared/seeds/lowest-unique-integer.txt; as implemented, with every
choice made where the seed is silent: docs/lui.md. The pure parts do no I/O,
read no clock and draw nothing at random:

- board.py: the wrap-around board, its seat letters and each seat's four
  neighbours;
- settings.py: every number of the game as a setting, the presets F11 and F8,
  and the prize table (a placeholder until the GM sets it);
- tiebreak.py: the MM2 priority tiebreak;
- commands.py (with grammars/lui.lark): a line of a mail -> a command;
- engine.py: the state machine (state + command -> state and events; state +
  clock -> state and events; the next time it wants the clock);
- replay.py: a whole game from a JSON log, with no database (`judge resolve`);
- render.py: the board as text, BBCode and a PNG picture (Pillow);
- persist.py: the engine's State as JSON (games.method_state) and back;
- live.py: the game by mail, pure hooks around the engine (START, a mail's
  LUI lines, the timers' tick) that the game driver (judge/driver/) calls
  under the game's lock; its words in templates/lui/.

`METHOD` below is what the shell sees (judge.methods.interface); it imports
the rest only when a hook runs.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import LiveCapability, LiveMethod

if TYPE_CHECKING:
    from judge.store.models import Game


class Lui(LiveMethod):
    """LUI by mail (live.py): its own commands, its state in
    games.method_state, its timers in games.next_tick."""

    NAME = "lui"
    ALIASES = ("lowest-unique-integer",)
    ENGINE = "judge.methods.lui.engine"
    RESULTS = "results/lui"
    REPLAY = "judge.methods.lui.replay"
    LIVE_GAME = LiveCapability("judge.methods.lui.live")  # its pure hooks; the GM's START opens the pregame
    CLI = MappingProxyType({"lui": "judge.methods.lui.cli:lui"})  # `judge lui ...`

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        from judge.methods.lui.engine import ParamError, params_from

        try:
            return params_from(raw, U).seats
        except ParamError:
            return 11

    def refusal(self, command: str, game: Game) -> str | None:
        if command == "PROCESS":
            return (f"?{game.name} is a Lowest Unique Integer game: its timers end it, there is nothing to "
                    "process")
        if command == "TAKEOVER":
            return f"?{game.name} has no powers to take over; write to its GM ({game.gm_address})"
        return None


METHOD = Lui()
