"""The blinding protocol's mail commands (docs/blinding.md).

To this judge as the GM's side of a game: BLINDLIST, BLINDSIN, BLINDS (from
the game's third party), CLAIM (from a player). To this judge as a third
party: THIRDPARTY, LISTRECEIVED, FINALSENT (from the GM's judge), BLINDED and
BLIND (from players). And the master's SET THIRDPARTY.
"""

from __future__ import annotations

from email.utils import parseaddr

from judge import audit, blindmail, rng
from judge import record as sealed_record
from judge.methods.blind_random import replay, step_stream
from judge.commands.base import CommandRejected, Context, handles
from judge.games import active_players, find_game, set_state
from judge.methods import blinding
from judge.rng import DrawStream
from judge.store.models import BlindRun, Resolution
from judge.syntax import nodes


@handles(nodes.SetThirdParty)
def set_third_party(ctx: Context, node: nodes.SetThirdParty) -> str:
    game = ctx.require_master_in(("forming",), "the third party can only change before the game starts")
    if game.method != "blind-random":
        raise CommandRejected(f"?{game.name} uses {game.method}: a third party belongs to the blind-random method")
    _, address = parseaddr(node.address)
    if "@" not in address:
        raise CommandRejected(f"{node.address!r} is not a mail address")
    if address.casefold() == ctx.config.address.casefold():
        raise CommandRejected("this judge runs the GM's side: the third party must be someone else "
                              "(a person, or another judge)")
    game.params = {**game.params, "third_party": address.lower()}
    return f"the third party of ?{game.name} is {address.lower()}"


@handles(nodes.Blinding)
def blinding_message(ctx: Context, node: nodes.Blinding) -> str:
    try:
        return _HANDLERS[node.kind](ctx, node)
    except blinding.ProtocolError as err:
        raise CommandRejected(str(err)) from err
    except ValueError as err:  # a malformed number
        raise CommandRejected(str(err)) from err


# --- this judge as the GM's side -------------------------------------------

def _gm_game(ctx: Context, node: nodes.Blinding, *, from_third_party: bool):
    game = find_game(ctx.session, node.game)
    if game is None or game.method != "blind-random":
        raise CommandRejected(f"?{node.game} is no blind-random game of this judge")
    run = blindmail.gm_run(ctx.session, game)
    if run is None:
        raise CommandRejected(f"?{game.name} has not started")
    if from_third_party and ctx.sender.casefold() != run.third_party.casefold():
        raise CommandRejected(f"only the third party of ?{game.name} sends this")
    ctx.named_game = game
    return game, run, blindmail.gm_state(run)


def _blind_list(ctx: Context, node: nodes.Blinding) -> str:
    game, run, state = _gm_game(ctx, node, from_third_party=True)
    blindmail.save(run, blinding.third_party_list(state, list(node.values)))
    blindmail.send(ctx.session, ctx.config, ctx.now, "list_received", [run.third_party], game.id, game=game.name)
    return f"the list of {len(node.values)} blinded messages of ?{game.name} is in; the third party was told"


def _blinds_in(ctx: Context, node: nodes.Blinding) -> str:
    game, run, state = _gm_game(ctx, node, from_third_party=True)
    state = blinding.blinds_collected(state)
    state, final = blinding.unblind(state, step_stream(blindmail.gm_seed(run), "final"))
    fmt = blinding.public_format(state)
    blindmail.save(run, state)
    for player, message in final.items():
        blindmail.send(ctx.session, ctx.config, ctx.now, "player_final", [player], game.id, game=game.name,
                       message=message, pattern=fmt, third_party=run.third_party,
                       powers=", ".join(f"{k} {p}" for k, p in enumerate(state.powers)))
    blindmail.send(ctx.session, ctx.config, ctx.now, "final_sent", [run.third_party], game.id, game=game.name)
    return f"the final messages of ?{game.name} are sent and the format published ({fmt})"


def _blinds(ctx: Context, node: nodes.Blinding) -> str:
    game, run, state = _gm_game(ctx, node, from_third_party=True)
    state, record = blinding.blinds_published(state, list(node.values))
    blindmail.save(run, state)
    run.finished = True
    # The sealed record: with the revealed secret, anyone holding it can
    # re-run the GM's side (judge verify); it is the master's alone.
    data = {"players": list(state.players), "powers": list(state.powers), "third_party": run.third_party,
            "blinded_list": list(state.blinded_list), "blinds": list(state.blinds)}
    seed = blindmail.gm_seed(run)
    result = replay(data, seed)
    assert result["assignment"] == dict(record.assignment), "the replay must give the run's record"
    reveal = {"commitment": game.commitment, "secret": game.secret_seed, "entropy": run.state["entropy"]}
    ctx.session.add(Resolution(game_id=game.id, method=game.method, seed=seed.hex(), input=data,
                               result=result, reveal=reveal, created_at=ctx.now))
    if not record.ok:
        blindmail.send(ctx.session, ctx.config, ctx.now, "rerun", [game.gm_address], game.id, game=game.name,
                       reason=record.rerun_reason)
        return f"?{game.name}: the protocol must run again: {record.rerun_reason}"
    powers = record.powers
    by_address = {p.address: p for p in active_players(game)}
    for player, power in powers.items():
        if player in by_address:
            by_address[player].power = power
        blindmail.send(ctx.session, ctx.config, ctx.now, "player_power", [player], game.id, game=game.name,
                       power=power)
    blindmail.send(ctx.session, ctx.config, ctx.now, "master_record", [game.gm_address], game.id,
                   game=game.name, record=record, pattern=state.fmt.pattern, gm_blind=state.gm_blind,
                   attachments=[(sealed_record.FILENAME, sealed_record.to_bytes(
                       sealed_record.sealed(game.name, game.method, data, reveal, result)), "application/json")])
    set_state(ctx.session, game, "resolved", ctx.now)
    game.resolved_at = ctx.now
    audit.record(ctx.session, ctx.now, "resolution", game_id=game.id, assignment=powers,
                 corrections=[c.as_dict() for c in record.corrections])
    return f"?{game.name} is assigned: every player was told their own power, the master the whole record"


def _claim(ctx: Context, node: nodes.Blinding) -> str:
    game, run, state = _gm_game(ctx, node, from_third_party=False)
    if ctx.sender not in state.players:
        raise CommandRejected(f"you are not a player of ?{game.name}")
    verdict = blinding.check_claim(state, ctx.sender, node.values[0])
    return verdict.explanation


# --- this judge as the third party -----------------------------------------

def _third_party_start(ctx: Context, node: nodes.Blinding) -> str:
    if blindmail.third_party_run(ctx.session, node.game, gm=ctx.sender):
        raise CommandRejected(f"this judge is the third party of ?{node.game} already")
    state = blinding.ThirdPartyState.new(list(node.values), gm=ctx.sender)
    ctx.session.add(BlindRun(role="third-party", game=node.game, game_id=None, gm=ctx.sender,
                             third_party=ctx.config.address, state=state.as_dict(), created_at=ctx.now))
    return f"this judge is the third party of ?{node.game} for {len(node.values)} players"


def _tp(ctx: Context, node: nodes.Blinding, *, from_gm: bool) -> tuple[BlindRun, blinding.ThirdPartyState]:
    run = (blindmail.third_party_run(ctx.session, node.game, gm=ctx.sender) if from_gm
           else blindmail.third_party_run(ctx.session, node.game, player=ctx.sender))
    if run is None:
        raise CommandRejected(f"this judge is not the third party of a game ?{node.game} "
                              + ("of yours" if from_gm else "with you as a player"))
    return run, blinding.ThirdPartyState.from_dict(run.state)


def _blinded(ctx: Context, node: nodes.Blinding) -> str:
    run, state = _tp(ctx, node, from_gm=False)
    state = state.receive(ctx.sender, node.values[0])
    if not state.missing_messages:
        state, shuffled = state.shuffle(DrawStream(rng.new_seed()))  # the third party's own chance
        blindmail.send(ctx.session, ctx.config, ctx.now, "blind_list", [run.gm], None, game=run.game,
                       messages=shuffled)
    blindmail.save(run, state)
    return f"your blinded message for ?{run.game} is in. {state.awaiting()}"


def _list_received(ctx: Context, node: nodes.Blinding) -> str:
    run, state = _tp(ctx, node, from_gm=True)
    state = state.confirm_list()
    blindmail.save(run, state)
    blindmail.send(ctx.session, ctx.config, ctx.now, "ask_blind", list(state.players), None, game=run.game)
    return f"?{run.game}: the players were asked for their blinds"


def _blind(ctx: Context, node: nodes.Blinding) -> str:
    run, state = _tp(ctx, node, from_gm=False)
    state = state.receive_blind(ctx.sender, node.values[0])
    if state.has_all_blinds:
        blindmail.send(ctx.session, ctx.config, ctx.now, "blinds_in", [run.gm], None, game=run.game)
    blindmail.save(run, state)
    return f"your blind for ?{run.game} is in. {state.awaiting()}"


def _final_sent(ctx: Context, node: nodes.Blinding) -> str:
    run, state = _tp(ctx, node, from_gm=True)
    state = state.final_messages_sent()
    blinds = state.publish()
    blindmail.save(run, state)
    run.finished = True
    blindmail.send(ctx.session, ctx.config, ctx.now, "publish", [run.gm, *state.players], None, game=run.game,
                   blinds=blinds)
    return f"?{run.game}: the blinds are published"


_HANDLERS = {
    "blindlist": _blind_list, "blindsin": _blinds_in, "blinds": _blinds, "claim": _claim,
    "thirdparty": _third_party_start, "blinded": _blinded, "listreceived": _list_received,
    "blind": _blind, "finalsent": _final_sent,
}
