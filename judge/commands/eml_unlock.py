"""UNLOCK player: the master lifts a player's password lock (judge.lockout).

A player's password locks after too many wrong tries; the master, who can
check with the player by other means, lifts it. The master's own lock is a
moderator's to lift (`judge unlock GAME`), since whoever guesses at it
could be the one asking.
"""

from __future__ import annotations

from judge import lockout
from judge.commands.base import Context, handles
from judge.commands.eml_eject import named_player
from judge.syntax import nodes


@handles(nodes.Unlock)
def unlock(ctx: Context, node: nodes.Unlock) -> str:
    game = ctx.require_master()
    player = named_player(ctx, game, node.player)
    lifted = lockout.unlock(ctx.session, game, player, ctx.now)
    return f"{player.name} <{player.address}> in ?{game.name}: {lifted}"
