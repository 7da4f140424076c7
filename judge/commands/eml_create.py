"""CREATE ?game password [method] [variant]: a new game, the sender its master.

As on nJudge, CREATE ?game password makes a game of the judge's default
method (config default_method: preference), and CREATE ?game password
VARIANT one of that variant: one word after the password is a method if it
names one, else a variant. Two words are a method and a variant, in either
order.
"""

from __future__ import annotations

import re

from judge import audit, passwords, rng
from judge.commitment import commitment
from judge.commands.base import CommandRejected, Context, handles
from judge.games import describe_params, find_game, new_params
from judge.methods import METHODS, UnknownMethod, get_method
from judge.methods.interface import plays_variant
from judge.store.models import Game
from judge.syntax import nodes
from judge.variants import PowerListError, is_variant, known_variants, variant_powers

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,29}$")


@handles(nodes.Create)
def create(ctx: Context, node: nodes.Create) -> str:
    if not _NAME.match(node.game):
        raise CommandRejected(f"'{node.game}' cannot be a game name: use up to 30 letters, digits, '-', '_' or '.'")
    if find_game(ctx.session, node.game) is not None:
        raise CommandRejected(f"a game ?{node.game} exists already; choose another name")
    method_name, variant = _method_and_variant(ctx, node)
    try:
        method = get_method(method_name)
        powers = variant_powers(variant, ctx.config.variants)
    except (UnknownMethod, PowerListError) as err:
        raise CommandRejected(str(err)) from err
    params = new_params(ctx.config, method, len(powers))
    secret = rng.new_seed()  # revealed with the results; only its hash is known before
    game = Game(name=node.game, method=method.NAME, variant=variant,
                powers=powers.as_json(), params=params, state="forming",
                secret_seed=secret.hex(), commitment=commitment(secret),
                gm_address=ctx.sender, gm_password=passwords.hash_password(node.password, ctx.config.password_cost),
                created_at=ctx.now)
    ctx.session.add(game)
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id, old=None,
                 new="forming", by=ctx.sender)
    ctx.game, ctx.role, ctx.player = game, "master", None
    assignment = method.ASSIGNMENT
    if assignment is not None and assignment.starts_when_full:
        start = (" It starts by itself when the last player has signed on (SET MANUAL START to start it "
                 "yourself with START)")
    elif assignment is not None and assignment.starts_at_deadline:
        start = (" It does not start by itself when the last player is in: you send START (or it starts at its "
                 "deadline, if you set one with SET DEADLINE)")
    elif method.SUBMITS == "bids":
        start = (" It does not start by itself: once all players are in, your START opens the auction, until "
                 "its deadline (SET DEADLINE)")
    else:
        start = " It does not start by itself: you send START once all players are in"
    made = (f"{method.NAME}, variant {game.variant}: {powers.describe()}" if plays_variant(method)
            else method.NAME)  # LUI, PT3: their seats are in describe_params
    return (f"game ?{game.name} created ({made}); "
            f"{describe_params(game)}. You are its master. Players join with: SIGNON ?{game.name} theirpassword. "
            f"The seed of its draws is committed: SHA-256 {game.commitment}.{start}")


def _is_method(word: str) -> bool:
    try:
        get_method(word)
    except UnknownMethod:
        return False
    return True


def _method_and_variant(ctx: Context, node: nodes.Create) -> tuple[str, str]:
    """(method, variant) of CREATE's words after the password."""
    first, second = node.method, node.variant
    if first is None:
        return ctx.config.default_method, "standard"
    if second is None:
        if _is_method(first):
            return first, "standard"
        if is_variant(first, ctx.config.variants):
            return ctx.config.default_method, first
        raise CommandRejected(
            f"{first!r} is neither a method ({', '.join(sorted(METHODS))}) nor a variant "
            f"({', '.join(known_variants(ctx.config.variants))}): write CREATE ?{node.game} password "
            f"[method] [variant], like CREATE ?{node.game} password preference standard")
    if not _is_method(first) and _is_method(second) and not is_variant(second, ctx.config.variants):
        first, second = second, first  # nJudge's order, the variant first
    return first, second
