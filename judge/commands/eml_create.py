"""CREATE ?game password [method] [variant]: a new game, the sender its master."""

from __future__ import annotations

import re

from judge import audit, passwords, rng
from judge.commitment import commitment
from judge.commands.base import CommandRejected, Context, handles
from judge.games import describe_params, find_game
from judge.methods import UnknownMethod, get_method
from judge.store.models import Game
from judge.syntax import nodes
from judge.variants import PowerListError, variant_powers

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,29}$")


@handles(nodes.Create)
def create(ctx: Context, node: nodes.Create) -> str:
    if not _NAME.match(node.game):
        raise CommandRejected(f"'{node.game}' cannot be a game name: use up to 30 letters, digits, '-', '_' or '.'")
    if find_game(ctx.session, node.game) is not None:
        raise CommandRejected(f"a game ?{node.game} exists already; choose another name")
    try:
        method = get_method(node.method or "blind-auction")
        powers = variant_powers(node.variant or "standard", ctx.config.variants)
    except (UnknownMethod, PowerListError) as err:
        raise CommandRejected(str(err)) from err
    params = method.default_params(len(powers))
    secret = rng.new_seed()  # revealed with the results; only its hash is known before
    game = Game(name=node.game, method=method.NAME, variant=node.variant or "standard",
                powers=powers.as_json(), params=params.as_dict(), state="forming",
                secret_seed=secret.hex(), commitment=commitment(secret),
                gm_address=ctx.sender, gm_password=passwords.hash_password(node.password, ctx.config.password_cost),
                created_at=ctx.now)
    ctx.session.add(game)
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id, old=None,
                 new="forming", by=ctx.sender)
    ctx.game, ctx.role, ctx.player = game, "master", None
    return (f"game ?{game.name} created ({method.NAME}, variant {game.variant}: {powers.describe()}); "
            f"{describe_params(game)}. You are its master. Players join with: SIGNON ?{game.name} theirpassword. "
            f"The seed of its draws is committed: SHA-256 {game.commitment}")
