"""SIGNON Ogame password: an observer (nJudge's OBSERVE).

An observer is a player row of status "observer": it never takes a seat
(judge.games.active_players leaves it out) and is sent the game's public
mail only (judge.games.observers): the start of an auction, the results as
the master gets them, never a player's own mail. Its password goes
through judge.lockout like a player's. The master ends it with EJECT
address (eml_eject.py).
"""

from __future__ import annotations

from judge import audit, passwords
from judge.commands.base import CommandRejected, Context
from judge.games import player_at
from judge.names import clean_name
from judge.store.models import Game, Player


def observe(ctx: Context, game: Game, password: str) -> str:
    from judge.commands.eml_signon import _password  # the lockout's one entry for a SIGNON

    ctx.named_game = game
    me = player_at(game, ctx.sender)
    if me is not None and me.status == "observer":
        _password(ctx, game, me, password)
        ctx.inbound.authenticated = True
        ctx.game, ctx.role, ctx.player = game, "observer", None
        return f"signed on as an observer of ?{game.name} ({game.state})"
    if me is not None:
        ctx.stop = True
        if me.status == "active":
            raise CommandRejected(f"you play in ?{game.name}: sign on with SIGNON ?{game.name} yourpassword")
        raise CommandRejected(f"you are no longer in ?{game.name} ({me.status})")
    me = Player(game=game, address=ctx.sender, name=clean_name(ctx.mail.sender_name, ctx.sender.split("@")[0]),
                password=passwords.hash_password(password, ctx.config.password_cost), status="observer",
                joined_at=ctx.now)
    ctx.session.add(me)
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=me.address, new="observer")
    ctx.game, ctx.role, ctx.player = game, "observer", None
    return (f"you observe ?{game.name} ({game.state}): you are sent its public mail (the auction's opening, "
            f"the results) and never a player's own. To stop, ask its master ({game.gm_address}) to send "
            f"EJECT {ctx.sender}")
