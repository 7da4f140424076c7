"""Payola Tic-Tac-Toe (method `pt3`, issue 15): the toy bidding game of
../shared/seeds/payola-bidding.html, by mail, with its exact solver.

Two players, X and O, each with a balance; every season one mark is placed,
X and O in turn (X first); both bid, sealed, for the right to choose the
empty square it goes on; the higher bid chooses, a tie goes to O, and only
the winner pays. X wins with three X in a row; otherwise O wins (also when
the board is full). The pure parts do no I/O and read no clock:

- solver.py: the seed's victory condition A_X > b * A_O, exactly
  (fractions), and from two balances who wins with best play, the bids that
  keep the win and the square (`judge pt3 solve`, ADVICE);
- engine.py: the game by mail as a state machine (state + command -> state
  and events; state + clock -> state and events; the next deadline), money
  as Decimal;
- commands.py (with grammars/pt3.lark): a line of a mail -> a command;
- replay.py: a whole game from its JSON log (`judge resolve`);
- persist.py: the engine's State as JSON (games.method_state);
- render.py: the board as text, BBCode and a PNG picture (Pillow);
- live.py: the hooks the game driver (judge/driver/) calls under the
  game's lock, pure (settings, START, a mail's lines, the seasons' tick);
  its words in templates/pt3/.

`METHOD` below is what the shell sees (judge.methods.interface); it imports
the rest only when a hook runs. docs/pt3.md has the rules as implemented.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import LiveCapability, LiveMethod

if TYPE_CHECKING:
    from judge.store.models import Game


class Pt3(LiveMethod):
    """PT3 by mail (live.py): its own commands, its state in
    games.method_state, each season's deadline in games.next_tick."""

    NAME = "pt3"
    ALIASES = ("payola-tic-tac-toe",)
    ENGINE = "judge.methods.pt3.engine"
    RESULTS = "results/pt3"
    REPLAY = "judge.methods.pt3.replay"
    # Its pure hooks (commands.py answers `claims`, lighter than live.py and
    # its engine); the GM's START, once the balances are set.
    LIVE_GAME = LiveCapability("judge.methods.pt3.live", claims_module="judge.methods.pt3.commands")
    CLI = MappingProxyType({"pt3": "judge.methods.pt3.cli:pt3"})  # `judge pt3 ...`

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        return 2

    def refusal(self, command: str, game: Game) -> str | None:
        if command == "PROCESS":
            return (f"?{game.name} is a Payola Tic-Tac-Toe game: each season closes when both bids are in or at "
                    "its deadline; there is nothing to process")
        if command == "TAKEOVER":
            return f"?{game.name} has no powers to take over; write to its GM ({game.gm_address})"
        return None


METHOD = Pt3()
