"""Payola Diplomacy (method `payola`, issue 14): players do not order their
units; they offer silver pieces (AgP) to every unit on the board, and each
unit obeys the best offer. Rules and every choice where they are silent:
docs/payola.md.

- bribes.py, sheet.py, orders.py, replay.py (payola-core): the offer
  sheet's grammar and checks, the choice of each unit's order in one
  movement phase, `judge resolve` of one phase;
- settings.py: the GM's settings (the shell's ENGINE);
- ledger.py: the accounts, every change a line;
- game.py: the phases with the `diplomacy` package (movement by bribes,
  retreats and adjustments by the owners, income before Spring);
- commands.py (grammars/payola_commands.lark): a mail's Payola lines;
- live.py: the game by mail, pure hooks the game driver (judge/driver/)
  calls under the game's lock; render.py: the map (SVG).

`METHOD` is what the shell sees; the rest is imported when a hook runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import LiveCapability, LiveMethod, Reminders

if TYPE_CHECKING:
    from judge.store.models import Game


class Payola(LiveMethod):
    """A whole Diplomacy game by mail, its movement orders bought."""

    NAME = "payola"
    ENGINE = "judge.methods.payola.settings"
    RESULTS = "results/payola"
    REPLAY = "judge.methods.payola.replay"
    HOW_TO_SUBMIT = "by offer sheets (lines like 4 : A PAR - BUR); see HELP payola"
    # Its pure hooks (commands.py answers `claims`, lighter than live.py and
    # its engine); the GM's START, when the seven have joined. Each phase's
    # deadline waits on sheets or orders (live.not_in_yet).
    LIVE_GAME = LiveCapability(
        "judge.methods.payola.live", claims_module="judge.methods.payola.commands",
        reminders=Reminders("bidding", "payola/reminder.txt.j2"),
        restart_hint=" A Payola game runs phase by phase: PROCESS plays the current phase now.")

    def resolve_file(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        # Not a whole game's log: payola-core's file of one movement phase.
        from judge.methods.payola.replay import resolve_file

        return resolve_file(data, seed)

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        """One player a power, less the powers the GM's SET DUMMY leaves to
        civil disorder (DPjudge's DUMMY powers)."""
        dummies = raw.get("dummies") or []
        return U - len(dummies) if isinstance(dummies, (list, tuple)) else U

    def refusal(self, command: str, game: Game) -> str | None:
        if command == "TAKEOVER":
            return f"?{game.name}: ask its GM ({game.gm_address}) to replace a player of a Payola game"
        return None


METHOD = Payola()
