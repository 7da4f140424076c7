"""The Blind Auction (docs/blind-auction.md): sealed bids until the
deadline, resolved by the seed's rules. engine.py is the pure method,
replay.py its `judge resolve` record; the bid lines are read by the command
grammar and checked by judge.submission."""

from __future__ import annotations

from typing import Any, Mapping

from judge.methods.interface import Method


class BlindAuction(Method):
    NAME = "blind-auction"
    ALIASES = ("blind", "auction", "ba")
    ENGINE = "judge.methods.blind_auction.engine"
    SUBMITS = "bids"
    REPLACEMENT_ASKED = ", and asked to bid"
    RESOLVES_AT_START = False
    STARTS_AT_DEADLINE = False  # its deadline closes the bidding; a forming auction waits for START
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
        from judge.games import counting_submission

        if game.state == "forming":
            return ""
        sub = counting_submission(session, game, player)
        if sub is None:
            return ". Your bids: none yet"
        if sub.bids is None:
            return ". Your bids: No Preference"
        return ". Your bids: " + ", ".join(f"{k} {v}" for k, v in sub.bids.items())


METHOD = BlindAuction()
