"""A stored game as its method reads it (judge.methods.api.GameView)."""

from __future__ import annotations

from judge.methods.api import GameView, PlayerView
from judge.store.models import Game, Player


def player_view(p: Player) -> PlayerView:
    return PlayerView(id=p.id, address=p.address, name=p.name, status=p.status, power=p.power,
                      joined_at=p.joined_at)


def game_view(game: Game) -> GameView:
    return GameView(
        id=game.id, name=game.name, method=game.method, variant=game.variant,
        powers=tuple(game.powers or ()), params=dict(game.params or {}), state=game.state,
        deadline=game.deadline, next_tick=game.next_tick, started_at=game.started_at,
        gm_address=game.gm_address, method_state=game.method_state,
        players=tuple(player_view(p) for p in game.players), commitment=game.commitment,
        secret=game.secret_seed, version=game.version or 0)
