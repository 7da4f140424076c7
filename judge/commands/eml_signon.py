"""SIGNON ?game password (a player) and SIGNON Mgame password (the master)."""

from __future__ import annotations

from judge import audit, passwords
from judge.commands.base import CommandRejected, Context, handles
from judge.games import active_players, find_game, find_player, notify, seats
from judge.store.models import Player
from judge.syntax import nodes


@handles(nodes.Signon)
def signon(ctx: Context, node: nodes.Signon) -> str:
    game = find_game(ctx.session, node.game)
    ctx.game, ctx.role, ctx.player, ctx.named_game = None, None, None, game
    if game is None:
        ctx.stop = True
        raise CommandRejected(f"there is no game ?{node.game}; send LIST to see the games")
    if node.master:
        if not passwords.check_password(node.password, game.gm_password):
            ctx.stop = True
            raise CommandRejected(f"wrong master password for ?{game.name}; nothing after this line was done")
        ctx.game, ctx.role = game, "master"
        return f"signed on as master of ?{game.name} ({game.state})"
    player = find_player(game, ctx.sender)
    if player is not None and player.address.casefold() == ctx.sender.casefold() and player.status == "active":
        if player.password is None:  # a replacement named by the GM, signing on for the first time
            player.password = passwords.hash_password(node.password, ctx.config.password_cost)
            player.name = ctx.mail.sender_name or player.name
            audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                         player=player.address, new="replacement signed on")
            notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
                   player=player, count=len(active_players(game)), replacement=True)
        elif not passwords.check_password(node.password, player.password):
            ctx.stop = True
            raise CommandRejected(f"wrong password for ?{game.name}; nothing after this line was done. "
                                  f"Ask the master if you forgot it")
        ctx.game, ctx.role, ctx.player = game, "player", player
        return f"signed on to ?{game.name} as {player.name}"
    if player is not None and player.address.casefold() == ctx.sender.casefold():
        ctx.stop = True
        raise CommandRejected(f"you are no longer in ?{game.name} ({player.status})")
    if game.state != "forming":
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is not taking new players (it is {game.state})")
    U = seats(game)
    if len(active_players(game)) >= U:
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is full ({U} players)")
    player = Player(game=game, address=ctx.sender, name=ctx.mail.sender_name or ctx.sender.split("@")[0],
                    password=passwords.hash_password(node.password, ctx.config.password_cost),
                    status="active", joined_at=ctx.now)
    ctx.session.add(player)
    ctx.session.flush()
    count = len(active_players(game))
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="joined", players=count)
    notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
           player=player, count=count, replacement=False)
    ctx.game, ctx.role, ctx.player = game, "player", player
    return (f"joined ?{game.name} as {player.name} (player {count} of {U}). The seed of the game's draws is "
            f"committed: SHA-256 {game.commitment}. Keep it: the results reveal the secret seed, so you can "
            f"check it (judge verify). Add ENTROPY with any text to mix in randomness of your own")
