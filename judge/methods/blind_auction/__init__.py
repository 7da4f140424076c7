"""The Blind Auction (docs/blind-auction.md): sealed bids until the
deadline, resolved by the seed's rules. engine.py is the pure method,
replay.py its `judge resolve` record; the bid lines are read by the command
grammar and checked by submission.py (bids.py: as a mail's reply says)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import AssignmentCapability, MailContext, Method, Reminders

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from judge.store.models import Game, Player

_JUST_BEFORE = timedelta(seconds=1)  # a reminder is for bids taken until the deadline


class _Bids(AssignmentCapability):
    """Bids until the deadline: SIGNON shows a player's bids, a late replacement may bid."""

    def standing_line(self, session: Session, game: Game, player: Player) -> str:
        """What SIGNON shows of the player's bids (once the auction runs)."""
        from judge.games import counting_submission, sent_a_list
        from judge.methods.blind_auction import window

        if game.state == "forming":
            return ""
        sub = counting_submission(session, game, player)
        if sub is None:
            shown = (". Your bids: only a refused list (it stands as No Preference)"
                     if sent_a_list(session, game, player) else ". Your bids: none yet")
        elif sub.bids is None:
            shown = ". Your bids: No Preference"
        else:
            shown = ". Your bids: " + ", ".join(f"{k} {v}" for k, v in sub.bids.items())
        if game.state == "waiting" and window.late(session, game, player):
            shown += (f". The deadline has passed, but as a replacement you may bid {window.UNTIL_PROCESS}")
        return shown

    def not_in_yet(self, session: Session, game: Game) -> list[tuple[Player, dict]] | None:
        """Those without a valid list who may still send one (once a new
        deadline reopened the auction, not those whose bids were in)."""
        from judge.games import standings
        from judge.methods.blind_auction import window

        return [(s.player, {"invalid": s.latest is not None}) for s in standings(session, game)
                if s.counting is None and not s.player.gm_no_preference
                and window.refusal(session, game, s.player, game.deadline - _JUST_BEFORE
                                   if game.deadline else game.started_at) is None]

    def roster_changed(self, ctx: MailContext, game: Game, old: Player | None = None,
                       new: Player | None = None) -> str:
        """A replacement named once the deadline has passed may bid until
        the master's PROCESS: the master's reply says so."""
        if new is None or game.state != "waiting":
            return ""
        return (f". The deadline has passed: {new.name} may bid until you send PROCESS (a PROCESS before "
                f"their bids asks you to decide for them), or until a new deadline you set with SET DEADLINE")


class BlindAuction(Method):
    NAME = "blind-auction"
    ALIASES = ("blind", "auction", "ba")
    ENGINE = "judge.methods.blind_auction.engine"
    SUBMITS = "bids"
    RESULTS = "results/blind-auction"
    REPLAY = "judge.methods.blind_auction.replay"
    # Bidding until the deadline (which closes it: a forming auction waits
    # for START); the bid lines are bids.py's.
    # Its draw (a few draws among the bids) is cheap at any size: made under
    # the lock at once (draws_ahead=False).
    ASSIGNMENT = _Bids(resolves_at_start=False, starts_at_deadline=False, draws_ahead=False,
                       reminders=Reminders("bidding", "blind-auction/reminder.txt.j2"), tunable=True,
                       replacement_asked=", and asked to bid", bidding="judge.methods.blind_auction.bids")

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


METHOD = BlindAuction()
