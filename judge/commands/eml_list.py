"""LIST [?game]: the games, or one game's state (never anybody's bids)."""

from __future__ import annotations

from sqlalchemy import func, select

from judge.commands.base import CommandRejected, Context, handles
from judge.games import describe_params, find_game, is_auction, param_warnings, power_list, seats, standings
from judge.reminders import describe, game_hours
from judge.store.models import Game, Player
from judge.syntax import nodes
from judge.templating import render


_GAMES = select(Game.id, Game.name, Game.method, Game.state, Game.powers, Game.deadline).order_by(Game.name)


@handles(nodes.ListGame)
def list_game(ctx: Context, node: nodes.ListGame) -> str:
    name = node.game or (ctx.game.name if ctx.game else None)
    if name is None:
        # Only the columns shown, as plain rows (LIST is the commonest mail).
        games = ctx.session.execute(_GAMES).all()
        # One count for all games, not one load of every game's players.
        active = dict(ctx.session.execute(select(Player.game_id, func.count(Player.id))
                                          .where(Player.status == "active").group_by(Player.game_id)).all())
        return render("list_games.txt.j2", games=[(g, active.get(g.id, 0)) for g in games]).rstrip()
    game = find_game(ctx.session, name)
    if game is None:
        raise CommandRejected(f"there is no game ?{name}")
    try:
        param_warnings(game)
        problem = None
    except ValueError as err:  # each method's ParamError
        problem = str(err)
    master = ctx.role == "master" and ctx.game is game
    blind = _blind_view(ctx, game, master) if game.method == "blind-random" else None
    reminders = describe(game_hours(game.params, ctx.config.reminder_hours))
    return render("list_game.txt.j2", game=game, settings=describe_params(game), problem=problem,
                  auction=is_auction(game), seats=seats(game), powers=power_list(game),
                  standings=standings(ctx.session, game), master=master, blind=blind, reminders=reminders).rstrip()


def _blind_view(ctx: Context, game: Game, master: bool) -> dict:
    """What LIST shows of a blind-random game: the protocol's step and whom
    it waits for, and a power only to its own player and the master -- in a
    reply that then goes to that one's registered address, never to a
    Reply-To (docs/security.md)."""
    from judge import blindmail

    step, waiting = blindmail.game_status(ctx.session, game)
    if game.state == "forming":
        step, waiting = "not started", []
    me = ctx.player if ctx.role == "player" and ctx.game is game else None
    shown = {}
    if game.state == "resolved":
        for p in game.players:
            if master or (me is not None and p.id == me.id):
                shown[p.id] = p.power or "no power"
        if shown:
            ctx.reveal_to = game.gm_address if master else me.address
    return {"step": step, "waiting": waiting, "shown": shown}
