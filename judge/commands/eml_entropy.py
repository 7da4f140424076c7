"""ENTROPY text: a player's contribution to the seed of the game's draws,
so that the judge's operator cannot steer them alone."""

from __future__ import annotations

from judge import audit
from judge.commands.base import CommandRejected, Context, handles
from judge.store.models import Entropy
from judge.syntax import nodes


@handles(nodes.Entropy)
def entropy(ctx: Context, node: nodes.Entropy) -> str:
    player = ctx.require_player()
    game = ctx.require_game()
    if ctx.acting_master:
        # ENTROPY is each player's own share of the seed: the master adding
        # it in a player's name would make it the master's share.
        raise CommandRejected(f"the master cannot add ENTROPY for {player.name}: FOR enters only bids, "
                              f"NO PREFERENCE and SET PREFERENCE. Players send their own ENTROPY")
    if game.state == "resolved":
        raise CommandRejected(f"?{game.name} is resolved: its seed is fixed")
    if not node.text:
        raise CommandRejected("write some text after ENTROPY, anything you like: ENTROPY blue whale 1742")
    ctx.session.add(Entropy(game_id=game.id, player_id=player.id, inbound_id=ctx.inbound.id,
                            received_at=ctx.now, text=node.text))
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 entropy_from=ctx.player.address)
    return (f"entropy noted for ?{game.name}: it will be mixed with the judge's secret seed "
            f"(committed as SHA-256 {game.commitment or 'n/a'}); the results will show it")
