"""An Outcome (judge.methods.api) made real: the game row, the audit trail,
the record and the outbox, all in the caller's transaction, which holds the
game's lock (judge.driver.lock)."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.orm import Session

from judge import audit
from judge.config import Config
from judge.games import set_state, tell_observers
from judge.methods.api import KEEP, Outcome
from judge.outbox import queue_mail
from judge.store.models import Game, Resolution
from judge.templating import render_mail

log = logging.getLogger(__name__)


def store_outcome(session: Session, config: Config, now: datetime, game: Game, outcome: Outcome, *,
                  inbound_id: int | None = None) -> None:
    """Write everything `outcome` asks for. The mails are rendered last, so
    that they read the game as it now is."""
    if outcome.params is not None:
        game.params = dict(outcome.params)
    if outcome.powers:
        for p in game.players:
            if p.status == "active" and p.address in outcome.powers:
                p.power = outcome.powers[p.address]
    if outcome.state is not None and outcome.state != game.state:
        set_state(session, game, outcome.state, now)
        if outcome.state == "bidding" and game.started_at is None:
            game.started_at = now
        if outcome.state == "resolved":
            game.resolved_at = now
    if outcome.method_state is not KEEP:
        game.method_state = outcome.method_state
    if outcome.next_tick is not KEEP:
        game.next_tick = outcome.next_tick
    if outcome.deadline is not KEEP:
        game.deadline = outcome.deadline
    for kind, data in outcome.events:
        audit.record(session, now, kind, game_id=game.id, inbound_id=inbound_id, **data)
    if outcome.record is not None:
        r = outcome.record
        session.add(Resolution(game_id=game.id, method=game.method, seed=r.get("seed") or "", input=r["input"],
                               result=r["result"], reveal=r.get("reveal"), created_at=now))
    for m in outcome.mails:
        subject, body = render_mail(m.template, game=game, docs_url=config.docs_url, **m.context)
        queue_mail(session, config, now, to=list(m.to), subject=subject, body=body, kind=m.kind, game_id=game.id,
                   attachments=list(m.attachments), private=m.private)
    if outcome.tell_observers:
        tell_observers(session, config, now, game)
    if outcome.log:
        log.info("%s", outcome.log)
