"""SIGNON Xgame password: ask to take over power X of a game whose powers
are assigned (nJudge's replacement players), and the master's approval,
REPLACE player asker@address (eml_eject.py).

The request is a player row of status "takeover" holding the power asked
for and the asker's password (hashed); the master is mailed it. REPLACE
makes it the power's player, with the asker's own password, and tells the
asker. A blind game never says who plays which power: there, every
request gets the same answer, whatever the letter.
"""

from __future__ import annotations

from judge import audit, passwords
from judge.commands.base import CommandRejected, Context
from judge.games import active_players, notify, player_at, power_list
from judge.methods import method_of
from judge.names import clean_name
from judge.store.models import Game, Player


def holder_of(game: Game, power: str) -> Player | None:
    """The active player who plays `power` (a duplex player holds several)."""
    return next((p for p in active_players(game) if power in (p.power or "").split(", ")), None)


def pending(game: Game, address: str) -> Player | None:
    """The waiting take-over request of `address` in `game`."""
    return player_at(game, address, "takeover")


def ask_takeover(ctx: Context, game: Game, letter: str, password: str) -> str:
    from judge.commands.eml_signon import _password  # the lockout's one entry for a SIGNON

    ctx.named_game = game
    refusal = method_of(game).refusal("TAKEOVER", game)
    if refusal is not None:
        raise CommandRejected(refusal)
    powers = power_list(game)
    power = next((p for p in powers if p.letter.upper() == letter), None)
    if power is None:
        letters = ", ".join(f"{p.letter} ({p.name})" for p in powers)
        raise CommandRejected(f"?{game.name} has no power with the letter {letter}: its powers are {letters}. "
                              f"SIGNON Xgame password takes over power X; SIGNON ?{game.name} password joins")
    if game.state == "forming":
        raise CommandRejected(f"?{game.name} is still forming and its powers are not assigned: join it with "
                              f"SIGNON ?{game.name} yourpassword")
    if game.state != "resolved":
        raise CommandRejected(f"the powers of ?{game.name} are not assigned yet (it is {game.state}): there is "
                              f"no power to take over. Ask its master ({game.gm_address}) to REPLACE a player")
    holder = holder_of(game, power.name)
    if holder is None:
        raise CommandRejected(f"nobody plays {power.name} in ?{game.name}: there is no seat to take over")
    me = player_at(game, ctx.sender)
    if me is not None and me.status == "active":
        raise CommandRejected(f"you play in ?{game.name} already")
    if me is not None and me.status not in ("takeover", "observer"):
        raise CommandRejected(f"you are no longer in ?{game.name} ({me.status})")
    if me is not None:
        # A request or an observer's row: its own password, so a forged
        # mail cannot change the password the master would approve.
        _password(ctx, game, me, password)
    else:
        me = Player(game=game, address=ctx.sender, joined_at=ctx.now,
                    password=passwords.hash_password(password, ctx.config.password_cost))
        ctx.session.add(me)
    me.name = clean_name(ctx.mail.sender_name, ctx.sender.split("@")[0])
    me.status, me.power = "takeover", power.name
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=me.address, new="takeover asked", power=power.name)
    notify(ctx.session, ctx.config, ctx.now, "gm/takeover_request.txt.j2", [game.gm_address], game=game,
           asker=me, holder=holder, power=power.name)
    return (f"your request to take over {power.name} in ?{game.name} was sent to its master; you are told when "
            f"it is approved. Your password for the game is the one on this line")


def approve(ctx: Context, game: Game, old: Player, asker: Player) -> str:
    """REPLACE old asker: the asker takes over the old player's powers."""
    if asker.power not in (old.power or "").split(", "):
        holder = holder_of(game, asker.power or "")
        who = f"REPLACE {holder.address} {asker.address}" if holder else "nobody plays it now"
        raise CommandRejected(f"{asker.address} asked to take over {asker.power}, which {old.name} does not "
                              f"play ({who})")
    old.status = "replaced"
    asker.status, asker.power, asker.joined_at = "active", old.power, ctx.now
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=old.address, new="replaced", by=asker.address, power=old.power)
    notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [old.address], game=game, player=old)
    notify(ctx.session, ctx.config, ctx.now, "player/takeover_approved.txt.j2", [asker.address], game=game,
           player=asker)
    return (f"{old.name} <{old.address}> replaced by {asker.name} <{asker.address}>, who now plays "
            f"{asker.power} (with the password of their request) and was told")
