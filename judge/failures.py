"""Failure domains: one game's bug never stops the others.

Each game's deadline work runs in a transaction of its own; an error there
rolls that work back and puts the game in quarantine: state `stuck`, the
error kept in the game's row, its master and the moderators told once (a
stuck game is never picked up again, so it cannot fail again). A moderator
resumes it with `judge unstick GAME` once the cause is mended. A mail that
meets a bug is quarantined on its own (judge.daemon), and an outbox row on
its own (judge.outbox).
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge import audit
from judge.config import Config
from judge.store.models import Game, InboundMessage

log = logging.getLogger(__name__)

STUCK = "stuck"


def quarantine_game(sessions: sessionmaker[Session], config: Config, now: datetime, game_id: int,
                    error: str) -> None:
    """Mark the game stuck with `error` (a traceback) and tell its master
    and the moderators, in a transaction of its own."""
    from judge.games import notify  # games imports the resolution stack: only when a game fails

    log.error("game %s stuck:\n%s", game_id, error)
    with sessions.begin() as s:
        game = s.get(Game, game_id, with_for_update=True)
        if game is None or game.state == STUCK:
            return
        game.stuck_from, game.error = game.state, error[-4000:]
        audit.record(s, now, "state", game_id=game.id, old=game.state, new=STUCK, error=last_line(error))
        game.state = STUCK
        notify(s, config, now, "gm/stuck.txt.j2", [game.gm_address, *config.moderators], game=game,
               error=last_line(error))


def unstick(session: Session, game: Game, now: datetime) -> str:
    """Resume a stuck game in the state it had; returns that state."""
    if game.state != STUCK:
        raise ValueError(f"?{game.name} is not stuck (it is {game.state})")
    state = game.stuck_from or "forming"
    audit.record(session, now, "state", game_id=game.id, old=STUCK, new=state, error_was=last_line(game.error))
    game.state, game.stuck_from, game.error = state, None, None
    return state


def quarantined_mails(session: Session) -> list[dict]:
    """The mails a bug (or an unusable From) put aside, oldest first, with
    their error: `judge quarantine` and the console's page of them. The
    error is masked: a bug's traceback may quote the mail's command,
    password and all (judge.masking)."""
    from judge.masking import mask_known, secrets_of_mail

    rows = session.execute(select(InboundMessage.id, InboundMessage.received_at, InboundMessage.processed_at,
                                  InboundMessage.source, InboundMessage.sender, InboundMessage.subject,
                                  InboundMessage.reason, InboundMessage.raw)
                           .where(InboundMessage.status == "quarantined").order_by(InboundMessage.id)).all()
    out = []
    for r in rows:
        secrets = secrets_of_mail(r.raw)
        out.append({"id": r.id, "received_at": r.received_at.isoformat(),
                    "quarantined_at": r.processed_at.isoformat() if r.processed_at else None, "source": r.source,
                    "sender": r.sender, "subject": r.subject, "error": mask_known(last_line(r.reason), secrets),
                    "traceback": mask_known(r.reason or "", secrets)})
    return out


def rerun_mail(session: Session, mail_id: int, now: datetime, by: str | None = None) -> str | None:
    """Put a quarantined mail back in the queue (after its cause is mended):
    the next pass runs it as a new mail. None when done, else why not."""
    row = session.get(InboundMessage, mail_id, with_for_update=True)
    if row is None:
        return f"#{mail_id}: no such mail"
    if row.status != "quarantined":
        return f"#{mail_id}: not quarantined (it is {row.status})"
    from judge.masking import mask_known, secrets_of_mail

    # The error may quote the mail's command: the event keeps it masked.
    audit.record(session, now, "rerun", inbound_id=row.id, by=by,
                 error_was=mask_known(last_line(row.reason), secrets_of_mail(row.raw)))
    row.status, row.reason, row.processed_at = "new", None, None
    return None


def last_line(error: str | None) -> str:
    lines = [line for line in (error or "").strip().splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""
