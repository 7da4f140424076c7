"""LIST [?game]: the games, or one game's state (never anybody's bids)."""

from __future__ import annotations

from sqlalchemy import func, select

from judge import driver
from judge.commands.base import CommandRejected, Context, handles
from judge.games import describe_params, find_game, is_auction, param_warnings, power_list, seats, standings
from judge.methods import method_of
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
    # A method's list_view: a blinding protocol's step ("step"), or the
    # method's own board ("board": LUI, PT3, Payola); the template shows each its own way.
    view = driver.list_view(ctx, game, master)
    board = view.get("board") if view else None
    blind = None if board else view
    reminders = describe(game_hours(game.params, ctx.config.reminder_hours))
    return render("list_game.txt.j2", game=game, settings=describe_params(game), problem=problem,
                  auction=is_auction(game), seats=seats(game), powers=power_list(game),
                  standings=standings(ctx.session, game), master=master, blind=blind, board=board,
                  reminders=reminders).rstrip()
