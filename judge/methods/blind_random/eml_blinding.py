"""The blinding protocol's mail commands (docs/blinding.md).

To this judge as the GM's side of a game: BLINDLIST, BLINDSIN, BLINDS,
WAITING and TRACED (from the game's third party, with the round's key),
CLAIM (from a player). To this judge as a third party: THIRDPARTY,
LISTRECEIVED, FINALSENT and TRACE (from the GM's judge, with the key),
BLINDED and BLIND (from players, with their token). And the master's
SET THIRDPARTY and RERUN.
"""

from __future__ import annotations

from email.utils import parseaddr

from judge import audit, rng
from judge import record as sealed_record
from judge.commands.base import CommandRejected, Context, handles
from judge.deadlines import format_time
from judge.games import deadline_ahead, find_game, notify, set_state
from judge.methods.blind_random import blinding, runs, syntax
from judge.methods.blind_random.engine import NAME, final_key_commitment, final_stream, replay
from judge.methods.blind_random.models import BlindRun
from judge.methods.blind_random.settings import blinding_settings
from judge.rng import DrawStream
from judge.store.models import Game, Resolution
from judge.wording import plural


@handles(syntax.SetThirdParty)
def set_third_party(ctx: Context, node: syntax.SetThirdParty) -> str:
    game = ctx.require_master_in(("forming",), "the third party can only change before the game starts")
    if game.method != NAME:
        raise CommandRejected(f"?{game.name} uses {game.method}: a third party belongs to the blind-random method")
    _, address = parseaddr(node.address)
    if "@" not in address:
        raise CommandRejected(f"{node.address!r} is not a mail address")
    if address.casefold() == ctx.config.address.casefold():
        raise CommandRejected("this judge runs the GM's side: the third party must be someone else "
                              "(a person, or another judge)")
    game.params = {**game.params, "third_party": address.lower()}
    return f"the third party of ?{game.name} is {address.lower()}"


@handles(syntax.Rerun)
def rerun(ctx: Context, node: syntax.Rerun) -> str:
    """A fresh round: new format, G, messages, tokens and key; what the
    players and the third party did in the round before counts no more."""
    game = ctx.require_master_in(("bidding", "waiting"), "only a running blind-random game can run again")
    if game.method != NAME:
        raise CommandRejected(f"?{game.name} uses {game.method}: RERUN belongs to the blinding protocol")
    # (A round that ended has resolved the game: require_master_in refused.)
    if not any(p.status == "active" for p in game.players):
        raise CommandRejected(f"?{game.name} has no players left")
    run = _fresh_round(ctx, game, "the master sent RERUN")
    rnd = runs.gm_state(run).round
    return (f"?{game.name}: round {rnd} of the blinding protocol started; every player was sent a new blinded "
            f"message and token, and the third party {run.third_party} the new round. Deadline: "
            f"{format_time(game.deadline)}")


def _fresh_round(ctx: Context, game, why: str) -> BlindRun:
    """A new round, and the game running again with a deadline ahead."""
    run = runs.start_round(ctx.session, ctx.config, ctx.now, game, why=why)
    if game.state == "waiting":
        set_state(ctx.session, game, "bidding", ctx.now)
    deadline_ahead(ctx.config, game, ctx.now)
    # The master hears of it now (their reply); the daily notice counts from here.
    game.missing_notified_at = ctx.now
    return run


def roster_changed(ctx: Context, game) -> str:
    """EJECT or REPLACE in a running blind-random game: the round's players
    are no longer the game's, so once the mail's lines have run a fresh
    round starts with the players then active (unless the mail's own RERUN
    started one with them). Returns what the master's reply adds."""
    if game.method != NAME or game.state not in ("bidding", "waiting"):
        return ""

    def fresh_round() -> None:
        run = runs.gm_run(ctx.session, game)
        active = {p.address for p in game.players if p.status == "active"}
        if run is None or not active or set(runs.gm_state(run).players) == active:
            return
        _fresh_round(ctx, game, "the players changed")

    ctx.after.append(fresh_round)
    return "; a fresh round of the blinding protocol starts with the players as they are now"


@handles(syntax.Blinding)
def blinding_message(ctx: Context, node: syntax.Blinding) -> str:
    try:
        return _HANDLERS[node.kind](ctx, node)
    except blinding.ProtocolError as err:
        raise CommandRejected(str(err)) from err
    except ValueError as err:  # a malformed number
        raise CommandRejected(str(err)) from err


# --- this judge as the GM's side -------------------------------------------

def _gm_game(ctx: Context, node: syntax.Blinding):
    """The game, its current round and state, for a line from the game's
    third party: from its address and with the round's key."""
    game = find_game(ctx.session, node.game)
    if game is None or game.method != NAME:
        raise CommandRejected(f"?{node.game} is no blind-random game of this judge")
    ctx.named_game = game
    run = runs.gm_run(ctx.session, game)
    if run is None:
        raise CommandRejected(f"?{game.name} has not started")
    if ctx.sender.casefold() != run.third_party.casefold():
        raise CommandRejected(f"only the third party of ?{game.name} sends this")
    if blinding.normal_token(node.password) != run.state.get("key"):
        # A forged line, or one of a round the master has replaced.
        raise CommandRejected(f"that is not the key of ?{game.name}'s current round")
    return game, run, runs.gm_state(run)


def _blind_list(ctx: Context, node: syntax.Blinding) -> str:
    game, run, state = _gm_game(ctx, node)
    runs.save(run, blinding.third_party_list(state, list(node.values)))
    run.state = {**run.state, "tp_waiting": None}
    runs.send(ctx.session, ctx.config, ctx.now, "list_received", [run.third_party], game.id, kind="token",
                   game=game.name, key=run.state["key"])
    return f"the list of {len(node.values)} blinded messages of ?{game.name} is in; the third party was told"


def _blinds_in(ctx: Context, node: syntax.Blinding) -> str:
    game, run, state = _gm_game(ctx, node)
    state = blinding.blinds_collected(state)
    state, final = blinding.unblind(state, final_stream(runs.gm_seed(run), runs.final_key(run),
                                                        state.round))
    fmt = blinding.public_format(state)
    runs.save(run, state)
    run.state = {**run.state, "tp_waiting": None}
    for player, message in final.items():
        runs.send(ctx.session, ctx.config, ctx.now, "player_final", [player], game.id, game=game.name,
                       message=message, pattern=fmt, third_party=run.third_party,
                       powers=", ".join(f"{k} {p}" for k, p in enumerate(state.powers)))
    runs.send(ctx.session, ctx.config, ctx.now, "final_sent", [run.third_party], game.id, kind="token",
                   game=game.name, key=run.state["key"])
    return f"the final messages of ?{game.name} are sent and the format published ({fmt})"


def _blinds(ctx: Context, node: syntax.Blinding) -> str:
    game, run, state = _gm_game(ctx, node)
    state, record = blinding.blinds_published(state, list(node.values))
    runs.save(run, state)
    if not record.ok:
        # Two or more corrupted messages: the third party traces its list
        # (docs/blinding.md); the master may RERUN instead.
        runs.send(ctx.session, ctx.config, ctx.now, "trace", [run.third_party], game.id, kind="token",
                       game=game.name, key=run.state["key"], reason=record.rerun_reason)
        notify(ctx.session, ctx.config, ctx.now, f"{runs.TEMPLATES}/master_trace.txt.j2", [game.gm_address], game=game,
               reason=record.rerun_reason, third_party=run.third_party)
        audit.record(ctx.session, ctx.now, "state", game_id=game.id, blinding="trace asked",
                     reason=record.rerun_reason)
        return f"?{game.name}: {record.rerun_reason}; the third party was asked to trace its list"
    _finish(ctx, game, run, state, record)
    return f"?{game.name} is assigned: every player was told their own power, the master the whole record"


def _traced(ctx: Context, node: syntax.Blinding) -> str:
    game, run, state = _gm_game(ctx, node)
    state, record = blinding.traced(state, list(node.values))
    runs.save(run, state)
    _finish(ctx, game, run, state, record)
    return f"?{game.name} is assigned by the third party's trace"


def _finish(ctx: Context, game, run: BlindRun, state: blinding.GMState, record: blinding.Record) -> None:
    """The round is done: the master gets the whole record, each player their
    own power with what they need to check their own part, and nothing
    else (docs/blinding.md)."""
    run.finished = True
    seed, fkey = runs.gm_seed(run), runs.final_key(run)
    data = {"players": list(state.players), "powers": list(state.powers), "third_party": run.third_party,
            "round": state.round, "blinded_list": list(state.blinded_list), "blinds": list(state.blinds),
            "final_key": fkey.hex() if fkey else None}
    if state.trace:
        data["trace"] = list(state.trace)
    result = replay(data, seed)
    assert result["assignment"] == dict(record.assignment), "the replay must give the run's record"
    reveal = {"commitment": game.commitment, "secret": game.secret_seed, "entropy": run.state["entropy"]}
    ctx.session.add(Resolution(game_id=game.id, method=game.method, seed=seed.hex(), input=data,
                               result=result, reveal=reveal, created_at=ctx.now))
    powers = record.powers
    players = {p.address: p for p in game.players if p.status == "active"}
    first, final = dict(state.first), dict(state.final)
    corrected = {c.player: c for c in record.corrections}
    for place, player in enumerate(state.players):
        if player in players:
            players[player].power = powers[player]
        # The player's own record: their place, their two messages and what
        # was published; never another player's message or the final key.
        mine = {"player": player, "place": place, "players": len(state.players), "powers": list(state.powers),
                "round": state.round, "first_message": first[player], "final_message": final[player],
                "blinded_list": list(state.blinded_list), "blinds": list(state.blinds), "power": powers[player],
                "final_key_commitment": final_key_commitment(fkey) if fkey else None}
        own = replay(mine, seed)
        sealed = {**sealed_record.sealed(game.name, game.method, mine, reveal, own), "role": "player"}
        runs.send(ctx.session, ctx.config, ctx.now, "player_power", [player], game.id, game=game.name,
                       power=powers[player], seed=seed.hex(), commitment=game.commitment, own=own,
                       correction=corrected.get(player), blinds=list(state.blinds),
                       attachments=[(sealed_record.FILENAME, sealed_record.to_bytes(sealed), "application/json")])
    names = {p.address: p.name for p in game.players}
    runs.send(ctx.session, ctx.config, ctx.now, "master_record", [game.gm_address], game.id,
                   game=game.name, record=record, names=names, pattern=state.fmt.pattern, gm_blind=state.gm_blind,
                   seed=seed.hex(), commitment=game.commitment,
                   attachments=[(sealed_record.FILENAME, sealed_record.to_bytes(
                       sealed_record.sealed(game.name, game.method, data, reveal, result, names)),
                       "application/json")])
    set_state(ctx.session, game, "resolved", ctx.now)
    game.resolved_at = ctx.now
    audit.record(ctx.session, ctx.now, "resolution", game_id=game.id, seed=seed.hex(), assignment=powers,
                 corrections=[c.as_dict() for c in record.corrections])


def _waiting(ctx: Context, node: syntax.Blinding) -> str:
    game, run, state = _gm_game(ctx, node)
    step = node.values[0].lower()
    if step not in ("blinded", "blind", "none"):
        raise CommandRejected(f"WAITING: the step is BLINDED, BLIND or NONE, not {node.values[0]}")
    known = {p.casefold(): p for p in state.players}
    players = [known[p.casefold()] for p in node.values[1:] if p.casefold() in known]
    run.state = {**run.state, "tp_waiting": {"step": step if step != "none" else "", "players": players,
                                             "at": ctx.now.isoformat()}}
    return f"?{game.name}: the third party waits for {plural(len(players), 'player')}"


def _claim(ctx: Context, node: syntax.Blinding) -> str:
    game = find_game(ctx.session, node.game)
    if game is None or game.method != NAME:
        raise CommandRejected(f"?{node.game} is no blind-random game of this judge")
    ctx.named_game = game
    run = runs.gm_run(ctx.session, game)
    state = runs.gm_state(run) if run is not None else None
    if state is None or ctx.sender not in state.players:
        raise CommandRejected(f"you are not a player of ?{game.name}")
    verdict = blinding.check_claim(state, ctx.sender, node.values[0])
    # The answer names the player's power: it goes to the player's own
    # address, never to a Reply-To (docs/security.md).
    ctx.reveal_to = ctx.sender
    return verdict.explanation


# --- this judge as the third party -----------------------------------------

def _log(ctx: Context, run: BlindRun) -> None:
    ctx.blind_run_id = run.id


def _third_party_start(ctx: Context, node: syntax.Blinding) -> str:
    """One THIRDPARTY line per player: ?game KEY player token-hash."""
    player, hash_ = node.values
    _, address = parseaddr(player)
    if "@" not in address:
        raise CommandRejected(f"{player!r} is not a player's mail address")
    run = runs.tp_run_by_key(ctx.session, node.game, ctx.sender, node.password)
    if run is None:
        if ctx.sender.casefold() == ctx.config.address.casefold():
            raise CommandRejected("this judge cannot be its own third party")
        trusted = ctx.sender.casefold() in blinding_settings(ctx.config).trusted_judges
        if not trusted and runs.pending_request(ctx.session, ctx.sender) is not None:
            # One waiting request per sender, whatever the game: a stranger
            # cannot fill the store or the moderators' mailbox with them.
            raise CommandRejected("a request of yours waits for this judge's operator already")
        state = blinding.ThirdPartyState.new([address.lower()], gm=ctx.sender, key=node.password,
                                             hashes={address.lower(): hash_})
        run = BlindRun(role="third-party", game=node.game, game_id=None, gm=ctx.sender,
                       third_party=ctx.config.address, created_at=ctx.now,
                       state={**state.as_dict(), "pending": not trusted, "shuffle_seed": rng.new_seed().hex(),
                              "draws": []})
        ctx.session.add(run)
        ctx.session.flush()
        _log(ctx, run)
        audit.record(ctx.session, ctx.now, "state", run=run.id, blinding="third party asked", gm=ctx.sender,
                     game=node.game, trusted=trusted)
        if not trusted:
            runs.send(ctx.session, ctx.config, ctx.now, "operator_confirm", list(ctx.config.moderators), None,
                           run_id=run.id, game=node.game, gm=ctx.sender)
            return (f"this judge is not configured to trust {ctx.sender}: its operator was asked to accept being "
                    f"the third party of ?{node.game}")
        return f"this judge is the third party of ?{node.game}"
    _log(ctx, run)
    state = runs.tp_state(run).with_player(address.lower(), hash_)
    runs.save(run, state)
    return f"?{node.game}: {address.lower()} is a player"


def _tp_from_gm(ctx: Context, node: syntax.Blinding, *, finished: bool = False) -> BlindRun:
    run = runs.tp_run_by_key(ctx.session, node.game, ctx.sender, node.password, finished=finished)
    if run is None or (run.state.get("closed") and not finished):
        raise CommandRejected(f"this judge is not the third party of a game ?{node.game} of yours with that key")
    _log(ctx, run)
    return run


def _tp_from_player(ctx: Context, node: syntax.Blinding) -> tuple[BlindRun, str, blinding.ThirdPartyState]:
    run, player = runs.tp_run_by_token(ctx.session, node.game, node.password)
    if run is None or player is None:
        raise CommandRejected(f"this judge is the third party of no game ?{node.game} with that token: copy "
                              "the token from the mail the game's judge sent you when the round started")
    _log(ctx, run)
    if run.state.get("pending"):
        raise CommandRejected(f"this judge's operator has not yet accepted being the third party of ?{run.game}; "
                              "send it again later")
    _close_older_rounds(ctx, run)
    return run, player, runs.tp_state(run)


def _close_older_rounds(ctx: Context, run: BlindRun) -> None:
    """A player's token proves the run real (only the GM's judge mails
    tokens): older unfinished runs of the game from that judge are closed.
    Not earlier: a forged THIRDPARTY could otherwise close the real run."""
    for old in runs.tp_runs(ctx.session, run.game):
        if old.id < run.id and old.gm.casefold() == run.gm.casefold():
            old.finished = True
            old.state = {**old.state, "closed": "a newer round of the game started"}


def _tell_gm_waiting(ctx: Context, run: BlindRun, before: tuple[str, list[str]],
                     state: blinding.ThirdPartyState) -> None:
    """The GM's judge learns whom the third party waits for when that
    changes (its LIST and the master's notices name them)."""
    now = state.waiting_for()
    if now != before and now[1]:
        runs.send(ctx.session, ctx.config, ctx.now, "waiting", [run.gm], None, kind="token", run_id=run.id,
                       game=run.game, key=state.key, step=now[0].upper(), players=now[1])


def _remaining(state: blinding.ThirdPartyState) -> str:
    # A player is told how many others are awaited, never who: in a blind
    # game the players' addresses are not shared.
    step, who = state.waiting_for()
    if not who:
        return ""
    what = "blinded message" if step == "blinded" else "blinding factor"
    return f" Waiting for the {what} of {plural(len(who), 'more player')}."


def _blinded(ctx: Context, node: syntax.Blinding) -> str:
    run, player, state = _tp_from_player(ctx, node)
    before = state.waiting_for()
    had = dict(state.messages).get(player)
    state = state.receive(player, node.values[0])
    if not state.missing_messages:
        stream = DrawStream(bytes.fromhex(run.state["shuffle_seed"]))  # the third party's own chance
        state, shuffled = state.shuffle(stream)
        draws = stream.records()
        run.state = {**run.state, "draws": draws}
        for d in draws:
            audit.record(ctx.session, ctx.now, "draw", run=run.id, **d)
        runs.send(ctx.session, ctx.config, ctx.now, "blind_list", [run.gm], None, kind="token", run_id=run.id,
                       game=run.game, key=state.key, messages=shuffled)
    else:
        _tell_gm_waiting(ctx, run, before, state)
    runs.save(run, state)
    replaced = " It replaces the one you sent before." if had and had != node.values[0] else ""
    done = " Every player's is in: the shuffled list went to the GM's judge." if state.shuffled else ""
    return f"your blinded message for ?{run.game} is in.{replaced}{done}{_remaining(state)}"


def _list_received(ctx: Context, node: syntax.Blinding) -> str:
    run = _tp_from_gm(ctx, node)
    state = runs.tp_state(run)
    before = state.waiting_for()
    state = state.confirm_list()
    runs.save(run, state)
    # Each player's own token is in the mail the GM's judge sent them;
    # this judge never had it.
    runs.send(ctx.session, ctx.config, ctx.now, "ask_blind", list(state.players), None, run_id=run.id,
                   game=run.game)
    _tell_gm_waiting(ctx, run, before, state)
    return f"?{run.game}: the players were asked for their blinds"


def _blind(ctx: Context, node: syntax.Blinding) -> str:
    run, player, state = _tp_from_player(ctx, node)
    before = state.waiting_for()
    had = dict(state.blinds).get(player)
    state = state.receive_blind(player, node.values[0])
    if state.has_all_blinds:
        runs.send(ctx.session, ctx.config, ctx.now, "blinds_in", [run.gm], None, kind="token", run_id=run.id,
                       game=run.game, key=state.key)
    else:
        _tell_gm_waiting(ctx, run, before, state)
    runs.save(run, state)
    replaced = " It replaces the one you sent before." if had and had != node.values[0] else ""
    return f"your blinding factor for ?{run.game} is in.{replaced}{_remaining(state)}"


def _final_sent(ctx: Context, node: syntax.Blinding) -> str:
    run = _tp_from_gm(ctx, node)
    state = runs.tp_state(run).final_messages_sent()
    blinds = state.publish()
    runs.save(run, state)
    run.finished = True
    runs.send(ctx.session, ctx.config, ctx.now, "publish", [run.gm], None, kind="token", run_id=run.id,
                   game=run.game, key=state.key, blinds=blinds)
    runs.send(ctx.session, ctx.config, ctx.now, "publish_player", list(state.players), None, run_id=run.id,
                   game=run.game, blinds=blinds)
    return f"?{run.game}: the blinds are published"


def _close_round(ctx: Context, node: syntax.Blinding) -> str:
    """The GM's judge replaced this round (its key shows it is the GM's
    judge): its players' tokens count no more."""
    run = _tp_from_gm(ctx, node, finished=True)
    if not run.state.get("closed"):
        run.finished = True
        run.state = {**run.state, "closed": "the GM's judge started a new round"}
    return f"?{run.game}: that round is closed"


def _trace(ctx: Context, node: syntax.Blinding) -> str:
    run = _tp_from_gm(ctx, node, finished=True)
    senders = runs.tp_state(run).trace()
    runs.send(ctx.session, ctx.config, ctx.now, "traced", [run.gm], None, kind="token", run_id=run.id,
                   game=run.game, key=runs.tp_state(run).key, senders=senders)
    return f"?{run.game}: the trace went to the GM's judge"


_HANDLERS = {
    "blindlist": _blind_list, "blindsin": _blinds_in, "blinds": _blinds, "claim": _claim, "waiting": _waiting,
    "traced": _traced,
    "thirdparty": _third_party_start, "blinded": _blinded, "listreceived": _list_received,
    "blind": _blind, "finalsent": _final_sent, "trace": _trace, "closeround": _close_round,
}


def list_view(ctx: Context, game: Game, master: bool) -> dict:
    """What LIST shows of a blind-random game: the protocol's step and whom
    it waits for, and a power only to its own player and the master -- in a
    reply that then goes to that one's registered address, never to a
    Reply-To (docs/security.md)."""
    step, waiting = runs.game_status(ctx.session, game)
    if game.state == "forming":
        step, waiting = "not started", []
    me = ctx.player if ctx.role == "player" and ctx.game is game else None
    shown = {}
    if game.state == "resolved":
        for p in game.players:
            if master or (me is not None and p.id == me.id):
                shown[p.id] = p.power or "no power"
        if shown:
            ctx.reveal_to = game.gm_address if master else me.address
    return {"step": step, "waiting": waiting, "shown": shown}
