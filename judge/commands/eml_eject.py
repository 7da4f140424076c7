"""EJECT player, REPLACE player newaddress, NO PREFERENCE FOR player (master)."""

from __future__ import annotations

from email.utils import parseaddr

from judge import audit
from judge.commands.base import CommandRejected, Context, handles
from judge.games import find_player, notify, standings
from judge.store.models import Game, Player
from judge.syntax import nodes


OPEN_STATES = ("forming", "bidding", "waiting")


def named_player(ctx: Context, game: Game, who: str) -> Player:
    player = find_player(game, who)
    if player is None or player.status != "active":
        names = ", ".join(f"{p.name} <{p.address}>" for p in game.players if p.status == "active")
        raise CommandRejected(f"no player {who!r} in ?{game.name}; the players are: {names or 'none'}")
    return player


@handles(nodes.Eject)
def eject(ctx: Context, node: nodes.Eject) -> str:
    game = ctx.require_master_in(OPEN_STATES, "players can only change before the auction is resolved")
    player = named_player(ctx, game, node.player)
    player.status = "ejected"
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="ejected")
    notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [player.address], game=game, player=player)
    return f"{player.name} <{player.address}> ejected from ?{game.name}"


@handles(nodes.Replace)
def replace(ctx: Context, node: nodes.Replace) -> str:
    game = ctx.require_master_in(OPEN_STATES, "players can only change before the auction is resolved")
    old = named_player(ctx, game, node.player)
    _, address = parseaddr(node.new_player)
    if "@" not in address:
        raise CommandRejected(f"{node.new_player!r} is not a mail address; write REPLACE {node.player} new@example.com")
    address = address.lower()
    if find_player(game, address) is not None:
        raise CommandRejected(f"{address} has been in ?{game.name} already")
    old.status = "replaced"
    new = Player(game=game, address=address, name=address.split("@")[0], password=None, status="active",
                 joined_at=ctx.now)
    ctx.session.add(new)
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=old.address, new="replaced", by=address)
    notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [old.address], game=game, player=old)
    notify(ctx.session, ctx.config, ctx.now, "player/replacement.txt.j2", [address], game=game, old=old)
    return f"{old.name} <{old.address}> replaced by {address}, who was asked to sign on and bid"


@handles(nodes.NoPreference)
def no_preference_for(ctx: Context, node: nodes.NoPreference) -> str:
    # The player's own "No Preference" is part of their submission (runner);
    # this handler is the master's decision for a player who sent nothing.
    game = ctx.require_master_in(("bidding", "waiting"), "only during the auction")
    if game.method != "blind-auction":
        raise CommandRejected(f"?{game.name} has no bids: a player without a list simply does not mind")
    player = named_player(ctx, game, node.player or "")
    standing = next(s for s in standings(ctx.session, game) if s.player.id == player.id)
    if standing.latest is not None:
        raise CommandRejected(f"{player.name} has sent bids; their own submission counts")
    player.gm_no_preference = True
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="no preference (master's decision)")
    if game.state == "waiting":
        return f"{player.name} <{player.address}> bids No Preference (D on every power)"
    return f"{player.name} <{player.address}> will bid No Preference unless they send bids first"

