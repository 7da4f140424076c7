"""FOR player: the lines that follow are that player's submission, as the
master copies it from a forum post (phpBB has no API to read it from)."""

from __future__ import annotations

from judge import audit
from judge.commands.base import Context, handles
from judge.commands.eml_eject import OPEN_STATES, named_player
from judge.syntax import nodes


@handles(nodes.OnBehalf)
def on_behalf(ctx: Context, node: nodes.OnBehalf) -> str:
    if ctx.acting_master:
        ctx.role = "master"  # FOR after FOR: the master moves on to the next player
    game = ctx.require_master_in(OPEN_STATES, "submissions can only be entered before the game is resolved")
    player = named_player(ctx, game, node.player)
    ctx.player, ctx.role, ctx.acting_master = player, "player", True
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="submission entered by the master")
    return (f"the lines that follow count as {player.name} <{player.address}>'s, until the next SIGNON, FOR "
            f"or SIGNOFF (the master's commands are off until then)")
