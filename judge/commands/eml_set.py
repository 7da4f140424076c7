"""SET PASSWORD, SET DEADLINE, SET T|M|D, SET VARIANT, SET METHOD."""

from __future__ import annotations

from judge import audit, passwords
from judge.commands.base import CommandRejected, Context, handles
from judge.deadlines import DeadlineError, format_time, parse_deadline
from judge.games import (active_players, describe_params, judge_params, new_params, notify, observers, param_warnings,
                         raw_params, set_state)
from judge.methods import UnknownMethod, get_method, method_of
from judge.methods.interface import bids_of
from judge.syntax import nodes
from judge.variants import PowerListError, variant_powers
from judge.wording import plural, were


@handles(nodes.SetPassword)
def set_password(ctx: Context, node: nodes.SetPassword) -> str:
    game = ctx.require_game()
    if ctx.acting_master and ctx.role == "player":
        # FOR copies a player's forum post; a password would let the master
        # sign on as the player from then on.
        raise CommandRejected(f"the master cannot set a player's password: FOR enters only bids, NO PREFERENCE "
                              f"and SET PREFERENCE. {ctx.require_player().name} sets their own with SET PASSWORD "
                              f"after their own SIGNON")
    hashed = passwords.hash_password(node.password, ctx.config.password_cost)
    if ctx.role == "master":
        game.gm_password = hashed
        return f"master password of ?{game.name} changed"
    player = ctx.require_player()
    player.password = hashed
    if player.password_is_token:
        # A replacement's own password replaces the token REPLACE mailed them.
        player.password_is_token = False
        return f"your password for ?{game.name} is set; the one-time token no longer works"
    return f"your password for ?{game.name} changed"


@handles(nodes.SetDeadline)
def set_deadline(ctx: Context, node: nodes.SetDeadline) -> str:
    game = ctx.require_master_in(("forming", "bidding", "waiting"), "the deadline cannot change now")
    try:
        when = parse_deadline(node.text, ctx.now)
    except DeadlineError as err:
        raise CommandRejected(str(err)) from err
    before, game.deadline = game.deadline, when
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 deadline=when.isoformat())
    bidding = bids_of(method_of(game))
    reopens = game.state == "waiting" and bidding is not None
    if reopens and game.bids_closed_at is None:
        # The auction's first deadline closed the bids in: they stand, and
        # the new deadline is for those whose bids were not in (window.py).
        game.bids_closed_at = before
    told = ""
    if before != when:
        # Every player hears of it, in a mail of their own (in a blind game
        # the players' addresses are not shared).
        players = active_players(game)
        for p in players:
            notify(ctx.session, ctx.config, ctx.now, "player/deadline_moved.txt.j2", [p.address], game=game,
                   player=p, before=before, when=when, observer=False,
                   bids_stand=bidding is not None and bidding.stand(ctx.session, game, p))
        for o in observers(game):
            # Observers get every public mail of the game (nJudge's SIGNON Ogame).
            notify(ctx.session, ctx.config, ctx.now, "player/deadline_moved.txt.j2", [o.address], game=game,
                   player=o, before=before, when=when, observer=True)
        told = f"; {plural(len(players), 'player')} {were(len(players))} told" if players else ""
    extra = ""
    if game.state == "waiting":
        # A new deadline reopens bidding for the players whose bids were not in.
        set_state(ctx.session, game, "bidding", ctx.now)
        game.missing_notified_at = None
        extra = ("; bidding is open again until then for the players whose bids were not in (the bids in "
                 "stand)" if bidding is not None else "; the game runs on until then")
    return f"deadline of ?{game.name} set to {format_time(when)}{extra}{told}"


@handles(nodes.SetParam)
def set_param(ctx: Context, node: nodes.SetParam) -> str:
    game = ctx.require_master()
    if bids_of(method_of(game)) is None:
        # Whatever its state: a game of another method has no T, M or D.
        raise CommandRejected(f"?{game.name} uses {game.method}, which has no T, M or D")
    game = ctx.require_master_in(("forming",), "T, M and D can only change before the auction starts")
    if node.value == "T/U" and node.name != "D":
        raise CommandRejected("only D can be T/U")
    value: int | str = node.value if node.value == "T/U" else int(node.value)
    params = dict(game.params)
    params[node.name] = value
    game.params = params
    shown = ", ".join(f"{k} = {v}" for k, v in raw_params(game).items())
    try:
        warnings = param_warnings(game)
    except ValueError as err:  # the method's ParamError
        return f"{node.name} set ({shown}), but the auction cannot start like this: {err}"
    return f"{node.name} set ({shown})" + "".join(f"\n  Warning: {w}" for w in warnings)


@handles(nodes.SetVariant)
def set_variant(ctx: Context, node: nodes.SetVariant) -> str:
    game = ctx.require_master_in(("forming",), "the variant can only change before the game starts")
    try:
        powers = variant_powers(node.name, ctx.config.variants)
    except PowerListError as err:
        raise CommandRejected(str(err)) from err
    if len(active_players(game)) > len(powers):
        raise CommandRejected(f"{len(active_players(game))} players have joined; {node.name} has only {len(powers)} powers")
    game.variant = node.name
    game.powers = powers.as_json()
    method = get_method(game.method)
    params = new_params(ctx.config, method, len(powers))
    assignment = method.ASSIGNMENT
    for key in assignment.kept_by_variant if assignment is not None else ():  # settings that do not depend on the powers
        if key in params and game.params.get(key):
            params[key] = game.params[key]
    game.params = {**params, **judge_params(game)}
    reset = "back to the defaults: " if assignment is not None and assignment.tunable else ""
    return f"variant of ?{game.name} is now {node.name}: {powers.describe()}; {reset}{describe_params(game)}"


@handles(nodes.SetMethod)
def set_method(ctx: Context, node: nodes.SetMethod) -> str:
    game = ctx.require_master_in(("forming",), "the method can only change before the game starts")
    try:
        method = get_method(node.name)
    except UnknownMethod as err:
        raise CommandRejected(str(err)) from err
    if method.NAME != game.method:
        game.method = method.NAME
        game.params = {**new_params(ctx.config, method, len(game.powers)), **judge_params(game)}
    return f"method of ?{game.name} is {method.NAME}: {describe_params(game)}"
