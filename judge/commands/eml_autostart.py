"""SET MANUAL START, SET NO MANUAL START / SET AUTO START (the master), and
the start of a preference game by itself when its last player signs on.

nJudge starts a game when its last player has signed on, unless the master
asked for a manual start; here that holds for preference games (nJudge's
method). A Blind Auction opens, and random and blind-random games start,
with START or at their deadline, as before: their masters choose the
auction's numbers or the third party first.
"""

from __future__ import annotations

from judge import audit
from judge.commands.base import CommandRejected, Context, handles
from judge.commands.eml_start import Refused, begin
from judge.games import active_players, notify, seats, tell_assignment_delayed
from judge.methods import method_of
from judge.store.models import Game, Player
from judge.syntax import nodes


def _starts_when_full(game: Game) -> bool:
    assignment = method_of(game).ASSIGNMENT
    return assignment is not None and assignment.starts_when_full


def starts_by_itself(game: Game) -> bool:
    return _starts_when_full(game) and game.state == "forming" and not game.manual_start


def _full(game: Game) -> bool:
    return len(active_players(game)) == seats(game)


@handles(nodes.SetStart)
def set_start(ctx: Context, node: nodes.SetStart) -> str:
    game = ctx.require_master_in(("forming",), "the game has started already")
    if not _starts_when_full(game):
        raise CommandRejected(f"?{game.name} uses {game.method}, which never starts by itself: it starts with "
                              f"START, or at its deadline")
    game.manual_start = node.manual
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 manual_start=node.manual)
    players, U = len(active_players(game)), seats(game)
    if node.manual:
        return (f"?{game.name} waits for your START, also once all {U} players are in ({players} now); "
                f"SET AUTO START undoes this")
    if _full(game):
        # Like a last SIGNON: after the mail's other lines (a SET below this
        # one still counts).
        ctx.after.append(lambda: start_when_full(ctx, game))
        return (f"all {U} players of ?{game.name} are in: the powers are assigned once this mail's lines have "
                f"run, and the results mailed to everyone")
    return f"?{game.name} starts by itself when its last player has signed on ({players} of {U} now)"


def start_when_full(ctx: Context, game: Game, joined: Player | None = None) -> None:
    """Start `game` if it still may start by itself and is full (work for
    ctx.after); the master gets one notice: who joined (if a SIGNON made
    it full) and how the start went."""
    if not (starts_by_itself(game) and _full(game)):
        if joined is not None:
            notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
                   player=joined, count=len(active_players(game)), seats=seats(game), replacement=False)
        return
    refused = False
    try:
        outcome, started = begin(ctx.session, ctx.config, ctx.now, game, job="autostart"), True
    except Refused as err:
        # The solver refused to draw the assignment: the game stays forming
        # and its master reads why and what to send. The players were told
        # that the last one in starts the game: they hear that the results
        # come later (after SET AUTO START the master, who sent it, decides).
        outcome, started, refused = str(err), False, True
        if joined is not None:
            tell_assignment_delayed(ctx.session, ctx.config, ctx.now, game, "when its last player joined")
    except CommandRejected as err:  # e.g. settings it cannot start with
        outcome, started = str(err), False
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 auto_start="started" if started else "not started", outcome=outcome)
    notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
           player=joined, count=len(active_players(game)), seats=seats(game), replacement=False,
           auto_start=outcome, started=started, refused=refused)
