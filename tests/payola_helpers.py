"""A Payola game's position set near its end, for the tests of a game by
mail that ends (tests/test_e2e_payola_end.py) and of its public page once
it is over (tests/web/test_public_payola.py)."""

from __future__ import annotations

from judge.games import find_game
from judge.methods.payola import game as G
from judge.methods.api import Outcome
from judge.methods.payola.live import load, save


def near_the_end(h, name: str) -> None:
    """Game `name`: France owns 17 centres, a fleet next to Tunis (its 18th
    ends the game); England and Germany are gone. The accounts and the
    phases played stay as they were."""
    from diplomacy.utils.export import to_saved_game_format

    with h.judge.sessions.begin() as s:
        game = find_game(s, name)
        state, players = load(game)
        g = state.engine()
        g.set_centers("FRANCE", ["BRE", "MAR", "PAR", "SPA", "POR", "BEL", "HOL", "LON", "EDI", "LVP", "KIE",
                                 "MUN", "BER", "DEN", "NWY", "SWE", "STP"])
        g.set_units("FRANCE", ["A BUR", "A PIC", "F NAF"], reset=True)
        g.set_units("ENGLAND", [], reset=True)
        g.set_units("GERMANY", [], reset=True)
        g.set_units("RUSSIA", ["A MOS", "A WAR", "F SEV"], reset=True)
        game.method_state = save(Outcome(), G.State(state.variant, to_saved_game_format(g), state.ledger,
                                                     state.accept, reports=state.reports), players).method_state
