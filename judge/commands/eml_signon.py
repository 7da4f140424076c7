"""SIGNON ?game password (a player) and SIGNON Mgame password (the master).

Every password is tried through judge.lockout (back-off, lock). A new
player's name is cleaned and must not look like another player's
(judge.names). A replacement signs on with the token REPLACE mailed them
(eml_eject.py) and is asked to choose a password of their own.
"""

from __future__ import annotations

from judge import audit, lockout, passwords
from judge.commands.base import CommandRejected, Context, handles
from judge.games import active_players, find_game, find_player, notify, seats
from judge.names import clean_name, looks_like
from judge.store.models import Game, Player
from judge.syntax import nodes


@handles(nodes.Signon)
def signon(ctx: Context, node: nodes.Signon) -> str:
    game = find_game(ctx.session, node.game)
    ctx.game, ctx.role, ctx.player, ctx.named_game = None, None, None, game
    if game is None:
        ctx.stop = True
        raise CommandRejected(f"there is no game ?{node.game}; send LIST to see the games")
    if node.master:
        _password(ctx, game, None, node.password)
        ctx.game, ctx.role = game, "master"
        return f"signed on as master of ?{game.name} ({game.state})"
    player = find_player(game, ctx.sender)
    if player is not None and player.address.casefold() == ctx.sender.casefold() and player.status == "active":
        _password(ctx, game, player, node.password)
        if player.password_is_token:
            return _replacement(ctx, game, player)
        ctx.game, ctx.role, ctx.player = game, "player", player
        return f"signed on to ?{game.name} as {player.name}"
    if player is not None and player.address.casefold() == ctx.sender.casefold():
        ctx.stop = True
        raise CommandRejected(f"you are no longer in ?{game.name} ({player.status})")
    return _join(ctx, game, node.password)


def _password(ctx: Context, game: Game, player: Player | None, password: str) -> None:
    verdict = lockout.attempt(ctx.session, ctx.config, ctx.now, game, player, password)
    if not verdict.ok:
        ctx.stop = True
        raise CommandRejected(f"{verdict.refusal}; nothing after this line was done")


def _name(ctx: Context, game: Game, name: str, me: Player | None = None) -> str:
    """`name` for the sender in `game`, refused if it looks like another player's."""
    other = looks_like(name, [(p.name, p) for p in active_players(game) if p is not me])
    if other is not None:
        ctx.stop = True
        raise CommandRejected(
            f"your name {name!r} looks like the name of the player {other.name!r} of ?{game.name}, and the results "
            f"must not mix you up. Nothing after this line was done: send your SIGNON again from a mail whose "
            f"From shows a name of your own (add a surname or an initial)")
    return name


def _replacement(ctx: Context, game: Game, player: Player) -> str:
    """The replacement signed on with the token that REPLACE mailed them."""
    given = clean_name(ctx.mail.sender_name)
    if given.casefold() not in ("", player.address.split("@")[0].casefold()):
        # A From with a name of its own (not just the address, as the mail
        # reader reports a From without one) replaces the master's choice.
        player.name = _name(ctx, game, given, me=player)
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="replacement signed on")
    notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
           player=player, count=len(active_players(game)), replacement=True)
    ctx.game, ctx.role, ctx.player = game, "player", player
    return (f"signed on to ?{game.name} as {player.name}, with the one-time token of your invitation. Choose "
            f"your own password now: send SET PASSWORD yourpassword (until you do, the token is your password)")


def _join(ctx: Context, game: Game, password: str) -> str:
    if game.state != "forming":
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is not taking new players (it is {game.state})")
    U = seats(game)
    if len(active_players(game)) >= U:
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is full ({U} players)")
    name = _name(ctx, game, clean_name(ctx.mail.sender_name, ctx.sender.split("@")[0]))
    player = Player(game=game, address=ctx.sender, name=name,
                    password=passwords.hash_password(password, ctx.config.password_cost),
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
            f"check it (judge verify). Add ENTROPY with any text to mix in your own randomness")
