"""SIGNON ?game password [variant] (a player), SIGNON Mgame password (the
master), SIGNON Ogame password (an observer, eml_observe.py) and SIGNON
Xgame password (take over power X, eml_takeover.py): nJudge's forms, also
written SIGN ON.

Every password is tried through judge.lockout (back-off, lock). A new
player's name is cleaned and must not look like another player's
(judge.names). A replacement signs on with the token REPLACE mailed them
(eml_eject.py) and is asked to choose a password of their own.
"""

from __future__ import annotations

from sqlalchemy import bindparam, func, select

from judge import audit, driver, lockout, notices, passwords
from judge.commands.base import CommandRejected, Context, handles
from judge.commands.eml_autostart import starts_by_itself, start_when_full
from judge.commands.eml_observe import observe
from judge.commands.eml_takeover import ask_takeover
from judge.games import active_players, find_game, notify, seats
from judge.methods import method_of
from judge.names import clean_name, looks_like
from judge.store.models import Game, Player
from judge.syntax import nodes


@handles(nodes.Signon)
def signon(ctx: Context, node: nodes.Signon) -> str:
    game = find_game(ctx.session, node.game)
    ctx.game, ctx.role, ctx.player, ctx.named_game = None, None, None, game
    if game is None:
        ctx.stop = True
        raise CommandRejected(_no_such_game(ctx, node))
    if node.variant is not None and node.variant.casefold() != game.variant.casefold():
        # nJudge's check that the player signs on to the game they mean.
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is played on the variant {game.variant}, not {node.variant}; "
                              f"nothing after this line was done. Sign on with SIGNON ?{game.name} yourpassword")
    if node.observer:
        return observe(ctx, game, node.password)
    if node.power is not None:
        return ask_takeover(ctx, game, node.power, node.password)
    if node.master:
        _password(ctx, game, None, node.password)
        ctx.game, ctx.role = game, "master"
        return f"signed on as master of ?{game.name} ({game.state})"
    player = _by_address(ctx, game)
    if player is None:
        return _join(ctx, game, node.password)
    if player.status == "active":
        _password(ctx, game, player, node.password)
        if player.password_is_token:
            return _replacement(ctx, game, player)
        ctx.game, ctx.role, ctx.player = game, "player", player
        return f"signed on to ?{game.name} as {player.name}" + _standing(ctx, game, player)
    if player.status == "observer":
        return _observer_joins(ctx, game, player, node.password)
    ctx.stop = True
    if player.status == "takeover":
        raise CommandRejected(f"your request to take over {player.power} in ?{game.name} waits for its master's "
                              f"answer; you are told when it is approved")
    raise CommandRejected(f"you are no longer in ?{game.name} ({player.status})")


_BY_ADDRESS = select(Player).where(Player.game_id == bindparam("game"),
                                   func.lower(Player.address) == bindparam("address"))


def _by_address(ctx: Context, game: Game) -> Player | None:
    """The sender's row in the game (the active one first), found by one
    query: a player's SIGNON costs the same in a game of 7 and of 100."""
    rows = ctx.session.scalars(_BY_ADDRESS, {"game": game.id, "address": ctx.sender.casefold()}).all()
    return min(rows, key=lambda p: (p.status != "active", p.id), default=None)


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
    if given not in ("", player.address.split("@")[0]):
        # A From with a name of its own (not just the address's local part,
        # as some mail programs put it) replaces the master's choice; "Olga"
        # for olga@ is a name of its own.
        player.name = _name(ctx, game, given, me=player)
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="replacement signed on")
    notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
           player=player, count=len(active_players(game)), seats=seats(game), replacement=True)
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
    ctx.game, ctx.role, ctx.player = game, "player", player
    last = ""
    if _seat_taken(ctx, game, player, count, U):
        last = (". You are the last player: the powers are assigned once this mail's lines have run (a SET "
                "PREFERENCE in this mail counts; without a list you do not mind which power you get), and the "
                "results are mailed to everyone")
    return (f"joined ?{game.name} as {player.name} (player {count} of {U}). The seed of the game's draws is "
            f"committed: SHA-256 {game.commitment}. Keep it: the results reveal the secret seed, so you can "
            f"check it (judge verify). Add ENTROPY with any text to mix in your own randomness{last}")


def _seat_taken(ctx: Context, game: Game, player: Player, count: int, seats_: int) -> bool:
    """After `player` took seat `count` of `seats_`: whether the game starts
    by itself now. Either way the master gets one notice, that the player
    joined (and how the start went): the start runs after the mail's other
    lines, so that a SET PREFERENCE below this SIGNON counts."""
    if count == seats_ and starts_by_itself(game):
        ctx.after.append(lambda: start_when_full(ctx, game, joined=player))
        return True
    if count < seats_ and notices.held(ctx.session, ctx.now, game):
        return False  # in the master's daily digest (SET NOTICES DAILY); the last player is told at once
    notify(ctx.session, ctx.config, ctx.now, "gm/player_joined.txt.j2", [game.gm_address], game=game,
           player=player, count=count, seats=seats_, replacement=False)
    return False


def _observer_joins(ctx: Context, game: Game, observer: Player, password: str) -> str:
    """An observer of a forming game signs on to play: with the observer's
    own password, the observer becomes a player."""
    _password(ctx, game, observer, password)
    if game.state != "forming":
        ctx.game, ctx.role, ctx.player, ctx.named_game = game, "observer", None, game
        raise CommandRejected(f"you observe ?{game.name}, which is not taking new players (it is {game.state}); "
                              f"SIGNON O{game.name} yourpassword signs you on as its observer")
    U = seats(game)
    if len(active_players(game)) >= U:
        ctx.stop = True
        raise CommandRejected(f"?{game.name} is full ({U} players); you still observe it")
    observer.name = _name(ctx, game, observer.name, me=observer)
    observer.status, observer.joined_at = "active", ctx.now
    ctx.session.flush()
    count = len(active_players(game))
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=observer.address, old="observer", new="joined", players=count)
    ctx.game, ctx.role, ctx.player = game, "player", observer
    _seat_taken(ctx, game, observer, count, U)
    return f"you observed ?{game.name}; now you play in it, as {observer.name} (player {count} of {U})"


def _standing(ctx: Context, game: Game, player: Player) -> str:
    """Signing on again shows the player's list as it stands (nJudge)."""
    return driver.standing_line(ctx.session, game, player)


def _no_such_game(ctx: Context, node: nodes.Signon) -> str:
    """Why a SIGNON names no game, and the forms it may take. "SIGNON spring
    pw" reads as power S of a game "pring": if ?spring exists, say so (a
    hint about the name only, never about the password)."""
    forms = ("SIGNON ?game password to play, SIGNON Mgame password as its master, SIGNON Ogame password to "
             "observe it, SIGNON Xgame password to take over power X")
    prefix = "M" if node.master else "O" if node.observer else node.power
    meant = find_game(ctx.session, f"{prefix}{node.game}") if prefix else None
    if meant is not None:
        whole = meant.name
        return (f"there is no game ?{node.game}. Did you mean the game ?{whole}? Then write SIGNON ?{whole} "
                f"yourpassword (the first letter after SIGNON says how you sign on: {forms})")
    return f"there is no game ?{node.game}; send LIST to see the games ({forms})"
