"""LIST [?game]: the games, or one game's state (never anybody's bids)."""

from __future__ import annotations

from sqlalchemy import select

from judge.commands.base import CommandRejected, Context, handles
from judge.games import effective_params, find_game, power_list, standings
from judge.methods import blind_auction as ba
from judge.store.models import Game
from judge.syntax import nodes
from judge.templating import render


@handles(nodes.ListGame)
def list_game(ctx: Context, node: nodes.ListGame) -> str:
    name = node.game or (ctx.game.name if ctx.game else None)
    if name is None:
        games = ctx.session.scalars(select(Game).order_by(Game.name)).all()
        return render("list_games.txt.j2", games=games).rstrip()
    game = find_game(ctx.session, name)
    if game is None:
        raise CommandRejected(f"there is no game ?{name}")
    try:
        params = effective_params(game)
    except ba.ParamError:
        params = None
    return render("list_game.txt.j2", game=game, params=params, powers=power_list(game),
                  standings=standings(ctx.session, game),
                  master=ctx.role == "master" and ctx.game is game).rstrip()
