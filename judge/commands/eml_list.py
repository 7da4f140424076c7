"""LIST [?game]: the games, or one game's state (never anybody's bids)."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from sqlalchemy import Text, cast, func, select

from judge import driver
from judge.commands.base import CommandRejected, Context, handles
from judge.games import (JUDGE_PARAMS, describe_params, find_game, param_warnings, power_list, seats,
                         standings)
from judge.methods import get_method, method_of
from judge.methods.interface import bids_of, lists_of, plays_variant, reminders_of
from judge.reminders import describe, game_hours
from judge.store.models import Game, Player
from judge.syntax import nodes
from judge.templating import render


# The powers and settings as the store's text, not decoded: a game's
# number of seats is worked out once per distinct text (_seats), not for
# every game of every LIST (decoding them was a tenth of a backlog's LISTs).
_GAMES = select(Game.id, Game.name, Game.method, Game.state, cast(Game.powers, Text).label("powers"),
                cast(Game.params, Text).label("params"), Game.deadline).order_by(Game.name)
# Built once, as _GAMES: LIST is the commonest mail.
_ACTIVE = select(Player.game_id, func.count(Player.id)).where(Player.status == "active").group_by(Player.game_id)


@handles(nodes.ListGame)
def list_game(ctx: Context, node: nodes.ListGame) -> str:
    name = node.game or (ctx.game.name if ctx.game else None)
    if name is None:
        # Only the columns shown, as plain rows (LIST is the commonest mail).
        games = ctx.session.execute(_GAMES).all()
        # One count for all games, not one load of every game's players.
        active = dict(ctx.session.execute(_ACTIVE).all())
        return _games_text(tuple(_Shown(g.name, g.method, g.state, g.deadline, active.get(g.id, 0),
                                        _seats(g.method, g.powers, g.params)) for g in games))
    game = find_game(ctx.session, name)
    if game is None:
        raise CommandRejected(f"there is no game ?{name}")
    try:
        param_warnings(game)
        problem = None
    except ValueError as err:  # each method's ParamError
        problem = str(err)
    # The master, also after FOR (the lines then count as a player's, but
    # LIST is the master's own look at the game).
    master = (ctx.role == "master" or ctx.acting_master) and ctx.game is game
    # A method's list_view: a blinding protocol's step ("step"), or the
    # method's own board ("board": LUI, PT3, Payola); the template shows each its own way.
    view = driver.list_view(ctx, game, master)
    board = view.get("board") if view else None
    blind = None if board else view
    # Only a method whose deadline waits on what players send reminds them
    # (not random's draw, nor LUI's or PT3's seat timers).
    reminders = (describe(game_hours(game.params, ctx.config.reminder_hours))
                 if reminders_of(method_of(game)) is not None else None)
    rows = standings(ctx.session, game)
    late = set()
    bidding = bids_of(method_of(game))
    if bidding is not None and game.state == "waiting":
        late = {s.player.id for s in rows if bidding.late(ctx.session, game, s.player)}
    return render("list_game.txt.j2", game=game, settings=describe_params(game), problem=problem,
                  auction=bidding is not None, seats=seats(game), powers=power_list(game),
                  seated=not plays_variant(method_of(game)),
                  standings=rows, master=master, blind=blind, board=board,
                  reminders=reminders, late=late, lists=_lists(game, rows) if master else {}).rstrip()


class _Shown(NamedTuple):
    """What the games list shows of a game."""

    name: str
    method: str
    state: str
    deadline: datetime | None
    active: int
    seats: int


@lru_cache(maxsize=16)  # (a judge of many games: a few texts of ~100 bytes a game)
def _games_text(games: tuple[_Shown, ...]) -> str:
    """The games list, rendered once for the same games as they stand (the
    text depends on nothing else): a backlog's LIST mails mostly find the
    games as the one before did."""
    return render("list_games.txt.j2", games=[(g, g.active, g.seats) for g in games]).rstrip()


@lru_cache(maxsize=1024)
def _seats(method: str, powers_text: str, params_text: str | None) -> int:
    """How many players a game of the games list takes (a duplex game fewer
    than its powers), from its powers and settings as stored (JSON text)."""
    powers = json.loads(powers_text)
    params = json.loads(params_text) if params_text is not None else None
    try:
        return get_method(method).seats(len(powers), {k: v for k, v in (params or {}).items()
                                                      if k not in JUDGE_PARAMS})
    except Exception:  # noqa: BLE001 - a method this judge lacks: one seat a power
        return len(powers)


def _lists(game: Game, rows) -> dict[int, str]:
    """The preference list of each player, as the master reads it in LIST
    (kept read at SET PREFERENCE: Submission.bids)."""
    lists = lists_of(method_of(game))
    if lists is None:
        return {}
    out = {}
    for s in rows:
        if s.counting is not None:
            out[s.player.id] = lists.shown(s.counting)
    return out
