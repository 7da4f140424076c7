"""The Blind Auction (docs/blind-auction.md): sealed bids until the
deadline, resolved by the seed's rules. engine.py is the pure method,
replay.py its `judge resolve` record; the bid lines are read by the command
grammar and checked by judge.submission."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

from judge.methods.interface import Method

_JUST_BEFORE = timedelta(seconds=1)  # a reminder is for bids taken until the deadline


class BlindAuction(Method):
    NAME = "blind-auction"
    ALIASES = ("blind", "auction", "ba")
    ENGINE = "judge.methods.blind_auction.engine"
    SUBMITS = "bids"
    REPLACEMENT_ASKED = ", and asked to bid"
    RESOLVES_AT_START = False
    STARTS_AT_DEADLINE = False  # its deadline closes the bidding; a forming auction waits for START
    DRAWS_AHEAD = False  # a few draws among the bids: cheap at any size
    REMINDED_STATE = "bidding"
    REMINDER = "blind-auction/reminder.txt.j2"
    TUNABLE = True
    RESULTS = "results/blind-auction"
    REPLAY = "judge.methods.blind_auction.replay"

    def params_from(self, raw: Mapping[str, Any] | None, U: int) -> Any:
        """T, M, D as numbers ("T/U" for D is worked out here, so that it follows T)."""
        ba = self.engine()
        p = dict(raw or {})
        D = p["D"]
        if D == "T/U":
            if p["T"] % U:
                raise ba.ParamError(f"D = T/U needs T divisible by U = {U}; T is {p['T']}")
            D = p["T"] // U
        return ba.Params(T=int(p["T"]), M=int(p["M"]), D=int(D))

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return f"T = {params['T']}, M = {params['M']}, D = {params['D']}"

    def standing_line(self, session: Any, game: Any, player: Any) -> str:
        """What SIGNON shows of the player's bids (once the auction runs)."""
        from judge.games import counting_submission, standings
        from judge.methods.blind_auction import window

        if game.state == "forming":
            return ""
        sub = counting_submission(session, game, player)
        if sub is None:
            latest = next((s.latest for s in standings(session, game) if s.player.id == player.id), None)
            shown = (". Your bids: only a refused list (it stands as No Preference)" if latest is not None
                     else ". Your bids: none yet")
        elif sub.bids is None:
            shown = ". Your bids: No Preference"
        else:
            shown = ". Your bids: " + ", ".join(f"{k} {v}" for k, v in sub.bids.items())
        if game.state == "waiting" and window.late(session, game, player):
            shown += (f". The deadline has passed, but as a replacement you may bid {window.UNTIL_PROCESS}")
        return shown

    def not_in_yet(self, session: Any, game: Any) -> list[tuple[Any, dict]] | None:
        """Those without a valid list who may still send one (once a new
        deadline reopened the auction, not those whose bids were in)."""
        from judge.games import standings
        from judge.methods.blind_auction import window

        return [(s.player, {"invalid": s.latest is not None}) for s in standings(session, game)
                if s.counting is None and not s.player.gm_no_preference
                and window.refusal(session, game, s.player, game.deadline - _JUST_BEFORE
                                   if game.deadline else game.started_at) is None]

    def roster_changed(self, ctx: Any, game: Any, old: Any = None, new: Any = None) -> str:
        """A replacement named once the deadline has passed may bid until
        the master's PROCESS: the master's reply says so."""
        if new is None or game.state != "waiting":
            return ""
        return (f". The deadline has passed: {new.name} may bid until you send PROCESS (a PROCESS before "
                f"their bids asks you to decide for them), or until a new deadline you set with SET DEADLINE")

    def tick(self, session: Any, config: Any, now: Any, game: Any, at: Any) -> str | None:
        """The master's daily digest while the game forms (SET NOTICES DAILY)."""
        from judge.notices import send_digest

        return send_digest(session, config, now, game)


METHOD = BlindAuction()
