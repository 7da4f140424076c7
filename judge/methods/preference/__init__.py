"""nJudge's preference lists (docs/preference.md): each player's list, the
assignment drawn at START among the best. engine.py is the pure method (the
solver it calls, the package solver/, loads only when a draw needs it),
replay.py its `judge resolve` record; the list commands are
judge.methods.preference.eml_preference."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import AssignmentCapability, Method, Reminders

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from judge.store.models import Game, Player


class _Lists(AssignmentCapability):
    """Lists drawn at START, or when the game is full: SIGNON shows a player's list."""

    def refused(self, err: ValueError) -> tuple[int, int, str, str] | None:
        """The solver's TooHard (a tie too big to draw exactly within its
        work limit); None for any other error."""
        # Imported here: the solver (and numpy) loads only for a preference
        # resolution, and has then been loaded by the call that raised.
        from judge.methods.preference.solver.assignment import TooHard

        if not isinstance(err, TooHard):
            return None
        return err.players, err.powers, err.reason, str(err)

    def standing_line(self, session: Session, game: Game, player: Player) -> str:
        """Signing on again shows the player's list as it stands (nJudge)."""
        from judge.methods.preference.eml_preference import describe
        from judge.games import counting_submission

        sub = counting_submission(session, game, player)
        if sub is None:
            from judge.games import standings

            refused = any(s.latest is not None for s in standings(session, game) if s.player.id == player.id)
            if refused:
                return (". Your preference list: only a refused list (so for now you do not mind which power "
                        "you get)")
            return ". Your preference list: none yet (you do not mind which power you get)"
        from judge.methods.preference.eml_preference import stored_list

        return f". Your preference list: {describe(stored_list(sub))}"


class Preference(Method):
    NAME = "preference"
    ALIASES = ("pref", "preferences", "njudge")
    ENGINE = "judge.methods.preference.engine"
    COMMANDS = ("judge.methods.preference.eml_preference",)
    SUBMITS = "list"
    HOW_TO_SUBMIT = "by preference lists: send SET PREFERENCE followed by your list, like E[FGR][TAI]"
    RESULTS = "results/preference"
    REPLAY = "judge.methods.preference.replay"
    ASSIGNMENT = _Lists(starts_when_full=True, reminders=Reminders("forming", "preference/reminder.txt.j2"),
                        tunable=True, replacement_asked=", and asked for a preference list",
                        lists="judge.methods.preference.lists")

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        p = params
        mode = {"list": "PRFLIST", "both": "PRFBOTH", "random": "PRFRAND"}[p.get("mode", "list")]
        players = f"{p['players']} players (duplex)" if p.get("players") else f"{U} players"
        shortcut = ("uncontested first choices first (SHORTCUT)" if p.get("shortcut", False)
                    else "best total, uncontested first choices break ties")
        return f"{mode}, {players}, {shortcut}"

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        pref = self.engine()
        try:
            return pref.seats(U, pref.params_from(raw, U))
        except pref.ParamError:
            return U


METHOD = Preference()
