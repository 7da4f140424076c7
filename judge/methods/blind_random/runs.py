"""The blinding protocol's runs in the store and the mails they send
(docs/blinding.md): the shell around the pure steps of blinding.py.

This judge plays the GM's side of its own `blind-random` games, and the
third party's side when another GM (a judge, or a person) asks it with
THIRDPARTY. Protocol mail between two judges carries only protocol commands
and gets no reply (both sides send Auto-Submitted mail: no loops).

Who may send what is shown by a secret, not by the From header: each player
gets a one-time token at the start of a round (the third party gets only the
tokens' hashes) and every BLINDED and BLIND line carries it; the two judges'
lines carry the round's key, which only they hold. In a blind game nobody
learns another player's address from this judge: every mail goes to one
recipient.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judge import audit
from judge.config import Config
from judge.games import active_players, committed_seed
from judge.methods.blind_random import blinding
from judge.methods.blind_random.engine import final_key_commitment, start_stream
from judge.methods.blind_random.models import BlindRun
from judge.outbox import queue_mail
from judge.passwords import one_time_token
from judge.store.models import Game
from judge.templating import render_mail

TEMPLATES = "blind_random"  # its mails' folder under templates/, named as the method's package

# Tokens and keys are words of capitals without I and O (no 1/I or 0/O to
# mistake when copied by hand), and without digits, so that the grammar
# tells them from the protocol's numbers. 24^12 is about 2^55.
TOKEN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ"
TOKEN_LENGTH = 12


def new_token() -> str:
    return one_time_token(TOKEN_ALPHABET, TOKEN_LENGTH)


def send(session: Session, config: Config, now: datetime, template: str, to: list[str], game_id: int | None,
         attachments: Any = (), kind: str = "blinding", run_id: int | None = None, **context: Any) -> None:
    """The mail `template`, to each address of `to` in a mail of its own:
    in a blind game the players' addresses are not shared."""
    subject, body = render_mail(f"{TEMPLATES}/{template}.txt.j2", judge=config.address,
                                docs_url=config.docs_url, **context)
    for address in to:
        # Private: a blind game's mail shows a token, a message or a power
        # that is for its one recipient (never a forum topic).
        queue_mail(session, config, now, to=[address], subject=subject, body=body, kind=kind, game_id=game_id,
                   attachments=attachments, run_id=run_id, private=True)


# --- this judge as the GM's side -------------------------------------------

def gm_run(session: Session, game: Game) -> BlindRun | None:
    """The game's current round (the newest)."""
    return session.scalars(select(BlindRun).where(BlindRun.role == "gm", BlindRun.game_id == game.id)
                           .order_by(BlindRun.id.desc())).first()


def gm_state(run: BlindRun) -> blinding.GMState:
    return blinding.GMState.from_dict(run.state["protocol"])


def gm_seed(run: BlindRun) -> bytes:
    return bytes.fromhex(run.state["seed"])


def final_key(run: BlindRun) -> bytes | None:
    key = run.state.get("final_key")
    return bytes.fromhex(key) if key else None


def start_round(session: Session, config: Config, now: datetime, game: Game, *, why: str | None = None
                ) -> BlindRun:
    """Steps 1-2 of a round: messages, G, one GM-blinded message and one
    token to each player; the third party gets the round's key, the players
    and their tokens' hashes. A round before this one is closed."""
    old = gm_run(session, game)
    rnd, closing = 1, None
    if old is not None:
        closing = old.state.get("key")
        rnd = gm_state(old).round + 1
        old.finished = True
        old.state = {**old.state, "closed": why or "a fresh round started"}
    players = [p.address for p in active_players(game)]
    powers = [p["name"] for p in game.powers]
    third_party = game.params["third_party"]
    seed, entropy = committed_seed(session, game)  # commit and reveal, like every draw of the judge
    fkey = secrets.token_bytes(32)
    key = new_token()
    state, first = blinding.start(players, powers, start_stream(seed, rnd), third_party=third_party, round=rnd)
    tokens = {p: new_token() for p in state.players}
    run = BlindRun(role="gm", game=game.name, game_id=game.id, gm=config.address, third_party=third_party,
                   state={"protocol": state.as_dict(), "seed": seed.hex(), "entropy": entropy,
                          "final_key": fkey.hex(), "key": key, "tp_waiting": None}, created_at=now)
    session.add(run)
    session.flush()
    fcommit = final_key_commitment(fkey)
    names = {p.address: p.name for p in game.players}
    for player, message in first.items():
        # kind "token": the raw-mail retention clears the token from the
        # outbox later (judge.retention).
        send(session, config, now, "player_first", [player], game.id, kind="token", game=game.name,
             player_name=names.get(player, player), message=message, token=tokens[player], third_party=third_party,
             digits=len(message), round=rnd, why=why, commitment=game.commitment, final_commitment=fcommit)
    send(session, config, now, "third_party_start", [third_party], game.id, kind="token", game=game.name,
         key=key, players=[(p, blinding.token_hash(tokens[p])) for p in state.players], round=rnd, why=why,
         closing=closing)
    audit.record(session, now, "state", game_id=game.id, blinding=f"round {rnd} started", third_party=third_party,
                 players=len(players), why=why)
    return run


def save(run: BlindRun, state: Any) -> None:
    if run.role == "gm":
        run.state = {**run.state, "protocol": state.as_dict()}
    else:
        run.state = {**run.state, **state.as_dict()}


def game_status(session: Session, game: Game) -> tuple[str, list[str]]:
    """status() of the game's current round, players shown by name."""
    return status(gm_run(session, game), {p.address: p.name for p in game.players})


def awaited(run: BlindRun) -> tuple[str | None, list[str]]:
    """(step, players) of a round that waits on its players: step "blinded"
    or "blind" (None at any other step), and the addresses the third party
    said it waits for (WAITING) at that step, as it told them."""
    step = {blinding.AWAITING_LIST: "blinded", blinding.AWAITING_BLINDS: "blind"}.get(gm_state(run).phase)
    told = run.state.get("tp_waiting") or {}
    return step, (list(told.get("players", [])) if step is not None and told.get("step") == step else [])


def status(run: BlindRun | None, names: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """(step, whom it waits for) of the GM side's current round, in words,
    for LIST and the master's notices: names, never a secret. `names` maps
    addresses to the names to show."""
    names = names or {}
    if run is None:
        return "not started", []
    state = gm_state(run)
    tp = state.third_party
    told = run.state.get("tp_waiting")
    shown = [names.get(p, p) for p in awaited(run)[1]]
    rnd = f"round {state.round}, " if state.round > 1 else ""
    if state.phase == blinding.AWAITING_LIST:
        step = f"{rnd}steps 3-4: the players send their blinded messages to the third party"
        if shown:
            return step, shown
        return step, [f"the third party {tp}" + ("" if told else " (it has not said whom it waits for)")]
    if state.phase == blinding.AWAITING_BLINDS:
        step = f"{rnd}step 5: the players send their blinding factors to the third party"
        if shown:
            return step, shown
        return step, [f"the third party {tp}"]
    if state.phase in (blinding.READY, blinding.AWAITING_RECEIPTS):
        return f"{rnd}step 7: the final messages go out", [f"the third party {tp}"]
    if state.phase == blinding.AWAITING_PUBLICATION:
        return f"{rnd}step 8: the third party publishes the blinding factors", [f"the third party {tp}"]
    if state.phase == blinding.AWAITING_TRACE:
        return (f"{rnd}the third party traces its list ({state.rerun_reason}); or the master sends RERUN",
                [f"the third party {tp}"])
    if state.phase == blinding.DONE:
        return "done: every player knows their power", []
    return f"{rnd}this round failed ({state.rerun_reason}): the master sends RERUN", ["the master"]


# --- this judge as the third party -----------------------------------------

def tp_runs(session: Session, game: str, *, finished: bool = False) -> list[BlindRun]:
    """This judge's third-party runs of a game (by name), newest first;
    with `finished`, the finished ones too."""
    query = select(BlindRun).where(BlindRun.role == "third-party").order_by(BlindRun.id.desc())
    if not finished:
        query = query.where(BlindRun.finished.is_(False))
    return [r for r in session.scalars(query) if r.game.casefold() == game.casefold()]


def pending_request(session: Session, gm: str) -> BlindRun | None:
    """An unfinished run that `gm` asked for and no operator has accepted."""
    runs = session.scalars(select(BlindRun).where(BlindRun.role == "third-party", BlindRun.finished.is_(False)))
    return next((r for r in runs if r.state.get("pending") and r.gm.casefold() == gm.casefold()), None)


def tp_run_by_key(session: Session, game: str, gm: str, key: str, *, finished: bool = False) -> BlindRun | None:
    """The run of that game, GM's judge and key."""
    key = blinding.normal_token(key)
    return next((r for r in tp_runs(session, game, finished=finished)
                 if r.gm.casefold() == gm.casefold() and r.state.get("key") == key), None)


def tp_run_by_token(session: Session, game: str, token: str) -> tuple[BlindRun | None, str | None]:
    """The unfinished run of that game in which `token` is a player's, and
    that player: the token, not the From header, says who sends."""
    for run in tp_runs(session, game):
        player = blinding.ThirdPartyState.from_dict(run.state).player_for(token)
        if player is not None:
            return run, player
    return None, None


def tp_state(run: BlindRun) -> blinding.ThirdPartyState:
    return blinding.ThirdPartyState.from_dict(run.state)


def tp_status(run: BlindRun) -> str:
    """The third party's run in one line, for `judge games`."""
    state = tp_state(run)
    if run.state.get("pending"):
        return f"waits for an operator: judge thirdparty accept {run.game} (asked by {run.gm})"
    if run.state.get("closed"):
        return f"closed: {run.state['closed']}"
    if run.finished:
        return "done: the blinds are published"
    return state.awaiting()
