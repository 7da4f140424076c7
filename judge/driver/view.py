"""A stored game as its method reads it (judge.methods.api.GameView)."""

from __future__ import annotations

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, object_session

from judge.methods.api import GameView, PlayerView
from judge.store.models import Game, Player

# A game's players as its view holds them, read as rows: loading them as
# ORM objects (game.players) cost a bid more than its engine's work.
_PLAYERS = (select(Player.id, Player.address, Player.name, Player.status, Player.power, Player.joined_at)
            .where(Player.game_id == bindparam("game")).order_by(Player.id))


def player_view(p: Player) -> PlayerView:
    return PlayerView(id=p.id, address=p.address, name=p.name, status=p.status, power=p.power,
                      joined_at=p.joined_at)


def _players(game: Game) -> tuple[PlayerView, ...]:
    """The game's players: from game.players where the session holds them
    or holds a change to a player (loading them flushes it first), else
    read as rows, as stored. Without a flush: the game's own changes (a
    mail's earlier line) are written once, at the end, not once a line."""
    session = object_session(game)
    if "players" in game.__dict__ or session is None or game.id is None or _players_changed(session):
        return tuple(player_view(p) for p in game.players)
    rows = session.execute(_PLAYERS, {"game": game.id}, execution_options={"autoflush": False})
    return tuple(PlayerView(*row) for row in rows)


def _players_changed(session: Session) -> bool:
    return any(isinstance(o, Player) for changed in (session.new, session.dirty, session.deleted) for o in changed)


def game_view(game: Game) -> GameView:
    return GameView(
        id=game.id, name=game.name, method=game.method, variant=game.variant,
        powers=tuple(game.powers or ()), params=dict(game.params or {}), state=game.state,
        deadline=game.deadline, next_tick=game.next_tick, started_at=game.started_at,
        gm_address=game.gm_address, method_state=game.method_state,
        players=_players(game), commitment=game.commitment,
        secret=game.secret_seed, version=game.version or 0)
