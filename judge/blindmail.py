"""The blinding protocol by mail (docs/blinding.md): the shell around the
pure steps of judge.methods.blinding.

This judge plays the GM's side of its own `blind-random` games, and the
third party's side when another GM (a judge, or a person) asks it with
THIRDPARTY. Protocol mail between two judges carries only protocol commands
and gets no reply (both sides send Auto-Submitted mail: no loops).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judge import audit
from judge.config import Config
from judge.methods import blinding
from judge.outbox import queue_mail
from judge.games import committed_seed
from judge.methods.blind_random import step_stream
from judge.store.models import BlindRun, Game
from judge.templating import render_mail

# Commands that one judge sends another: accepted even in auto-generated mail.
JUDGE_TO_JUDGE = {"thirdparty", "listreceived", "finalsent", "blindlist", "blindsin", "blinds"}


def gm_state(run: BlindRun) -> blinding.GMState:
    return blinding.GMState.from_dict(run.state["protocol"])


def gm_seed(run: BlindRun) -> bytes:
    return bytes.fromhex(run.state["seed"])


def send(session: Session, config: Config, now: datetime, template: str, to: list[str], game_id: int | None,
         attachments: Any = (), **context: Any) -> None:
    subject, body = render_mail(f"blind/{template}.txt.j2", judge=config.address, **context)
    queue_mail(session, config, now, to=to, subject=subject, body=body, kind="blinding", game_id=game_id,
               attachments=attachments)


def gm_run(session: Session, game: Game) -> BlindRun | None:
    return session.scalars(select(BlindRun).where(BlindRun.role == "gm", BlindRun.game_id == game.id)).first()


def third_party_run(session: Session, game: str, *, gm: str | None = None, player: str | None = None
                    ) -> BlindRun | None:
    """The newest unfinished run where this judge is the third party of `game`
    (of that GM's judge, or with that player)."""
    runs = session.scalars(select(BlindRun).where(BlindRun.role == "third-party", BlindRun.finished.is_(False))
                           .order_by(BlindRun.id.desc())).all()
    for run in runs:
        if run.game.casefold() != game.casefold():
            continue
        if gm and run.gm.casefold() != gm.casefold():
            continue
        if player and player.casefold() not in [p.casefold() for p in run.state["players"]]:
            continue
        return run
    return None


def start(session: Session, config: Config, now: datetime, game: Game, players: list[str], powers: list[str]
          ) -> None:
    """Steps 1-2: messages, G, one GM-blinded message to each player; the
    third party is told who will send it what."""
    third_party = game.params["third_party"]
    seed, entropy = committed_seed(session, game)  # the GM side's draws: commit and reveal too
    state, first = blinding.start(players, powers, step_stream(seed, "start"), third_party=third_party)
    run = BlindRun(role="gm", game=game.name, game_id=game.id, gm=config.address, third_party=third_party,
                   state={"protocol": state.as_dict(), "seed": seed.hex(), "entropy": entropy}, created_at=now)
    session.add(run)
    session.flush()
    for player, message in first.items():
        send(session, config, now, "player_first", [player], game.id, game=game.name, message=message,
             third_party=third_party, digits=len(message))
    send(session, config, now, "third_party_start", [third_party], game.id, game=game.name,
         players=list(state.players))
    audit.record(session, now, "state", game_id=game.id, blinding="started", third_party=third_party)


def save(run: BlindRun, state: Any) -> None:
    if run.role == "gm":
        run.state = {**run.state, "protocol": state.as_dict()}
    else:
        run.state = state.as_dict()
