"""The outbox: every outgoing mail is a row before any transport sees it.

Rows move queued -> sending -> (data_sent) -> sent; a failed attempt goes
back to queued with a later next_attempt_at (exponential backoff), or to
failed after the configured number of attempts, keeping the last error. The
row's Message-ID is fixed when it is queued, so a retried send is the same
mail.

Nothing is sent twice that the server accepted: the transport calls a commit
point just before the step after which the server may have the mail (SMTP:
the final dot), and the row becomes data_sent in its own transaction. After
a crash, rows still "sending" never reached that point and are queued again;
rows in "data_sent" may have been accepted, so they become "unconfirmed" and
wait for the operator (`judge outbox`, `judge outbox retry ID`) instead of
being sent blindly a second time. SMTP cannot do better than that (RFC 1047).
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from typing import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from judge import audit
from judge.clock import Clock
from judge.config import Config
from judge.mail.outbound import compose, make_message_id
from judge.store.models import Game, OutboxMessage
from judge.transports.base import OutgoingMail, Transport, TransportError
from judge.wording import plural

log = logging.getLogger(__name__)

_INSERT = OutboxMessage.__table__.insert()


def queue_mail(session: Session, config: Config, now: datetime, *, to: Sequence[str], subject: str,
               body: str, kind: str, game_id: int | None = None, inbound_id: int | None = None,
               in_reply_to: str | None = None,
               attachments: Sequence[tuple[str, bytes, str]] = (), run_id: int | None = None,
               private: bool = False) -> int:
    """Put one mail in the outbox; returns its row id. `run_id`: a
    third-party run of the blinding protocol the mail belongs to (it has no
    game here), for its log. `private` (and every mail of kind "token"): for
    its recipients' eyes only, so never posted in a forum topic
    (judge/transports/discourse.py)."""
    message_id = make_message_id(config.domain, uuid.uuid4().hex)
    private = private or kind == "token"
    raw = compose(sender=config.address, sender_name=config.name, to=list(to), subject=subject, body=body,
                  message_id=message_id, date=now, in_reply_to=in_reply_to,
                  references=[in_reply_to] if in_reply_to else (), attachments=attachments,
                  extra_headers={"X-Judge-Private": "yes"} if private else None)
    # A plain INSERT, built once, not an ORM object: a backlog queues one
    # reply per mail.
    row_id = session.connection().execute(_INSERT, {
        "message_id": message_id, "envelope_from": config.address, "recipients": list(to), "subject": subject,
        "raw": raw, "kind": kind, "status": "queued", "attempts": 0, "created_at": now, "next_attempt_at": now,
        "game_id": game_id, "inbound_id": inbound_id}).inserted_primary_key[0]
    audit.record(session, now, "outbound", game_id=game_id, inbound_id=inbound_id, outbox_id=row_id,
                 to=list(to), subject=subject, mail_kind=kind, message_id=message_id,
                 **({"run": run_id} if run_id is not None else {}))
    return row_id


def requeue_interrupted(sessions: sessionmaker[Session]) -> int:
    """After a crash: rows left in 'sending' never reached the commit point and
    go back to the queue; rows left in 'data_sent' may have been accepted and
    become 'unconfirmed' (see the module docstring)."""
    with sessions.begin() as s:
        doubtful = s.execute(update(OutboxMessage).where(OutboxMessage.status == "data_sent")
                             .values(status="unconfirmed",
                                     last_error="the judge stopped after the whole mail was handed over; "
                                                "the server may have it: check, then `judge outbox retry ID`"))
        if doubtful.rowcount:
            log.warning("%d outbox mail(s) may have been sent before a crash: marked unconfirmed, not resent",
                        doubtful.rowcount)
        result = s.execute(update(OutboxMessage).where(OutboxMessage.status == "sending")
                           .values(status="queued"))
        return result.rowcount or 0


def send_due(sessions: sessionmaker[Session], transport: Transport, clock: Clock, config: Config,
             limit: int = 100, claim: int = 50) -> dict[str, int]:
    """Send up to `limit` queued rows that are due, oldest first. Rows are
    claimed (status 'sending') `claim` at a time in one transaction; each
    row's commit point and its outcome are then written on their own."""
    counts = {"sent": 0, "retry": 0, "failed": 0}
    done = 0
    while done < limit:
        with sessions.begin() as s:
            rows = s.scalars(
                select(OutboxMessage)
                .where(OutboxMessage.status == "queued", OutboxMessage.next_attempt_at <= clock.now())
                .order_by(OutboxMessage.id).limit(min(claim, limit - done)).with_for_update(skip_locked=True)
            ).all()
            results = _result_games(s, rows)
            batch = []
            for row in rows:
                row.status = "sending"
                row.attempts += 1
                batch.append((row.id, row.attempts,
                              OutgoingMail(row.message_id, row.envelope_from, tuple(row.recipients), row.raw),
                              results.get(row.id)))
        if not batch:
            break
        for row_id, attempts, mail, result_of in batch:
            try:
                _send_one(sessions, transport, clock, config, row_id, attempts, mail, counts, result_of)
            except Exception as err:
                # A bug (not a TransportError) met this row: it fails alone,
                # with the error kept, and the other rows go out.
                log.exception("outbox %s: unexpected error", row_id)
                error = f"{type(err).__name__}: {err}"[:4000]
                with sessions.begin() as s:
                    row = s.get(OutboxMessage, row_id, with_for_update=True)
                    # Past the commit point the server may have it: never
                    # resent blindly (see the module docstring).
                    row.status = "unconfirmed" if row.status == "data_sent" else "failed"
                    row.last_error = error
                counts["failed"] += 1
        done += len(batch)
    return counts


def _result_games(s: Session, rows: Sequence[OutboxMessage]) -> dict[int, str]:
    """The game of each results mail among `rows` (outbox id -> name), for
    the operator's log line when it is sent; one query, only if there are
    results among them."""
    game_of = {r.id: r.game_id for r in rows if r.kind == "result" and r.game_id is not None}
    if not game_of:
        return {}
    names = dict(s.execute(select(Game.id, Game.name).where(Game.id.in_(set(game_of.values())))).all())
    return {row_id: names.get(game_id, str(game_id)) for row_id, game_id in game_of.items()}


def _send_one(sessions: sessionmaker[Session], transport: Transport, clock: Clock, config: Config, row_id: int,
              attempts: int, mail: OutgoingMail, counts: dict[str, int], result_of: str | None = None) -> None:
    def commit_point() -> None:
        with sessions.begin() as s:
            s.execute(update(OutboxMessage).where(OutboxMessage.id == row_id).values(status="data_sent"))

    try:
        transport.send(mail, commit_point)
    except TransportError as err:
        if err.unconfirmed:
            with sessions.begin() as s:
                s.execute(update(OutboxMessage).where(OutboxMessage.id == row_id)
                          .values(status="unconfirmed", last_error=str(err)))
            log.warning("outbox %s: %s", row_id, err)
            counts["unconfirmed"] = counts.get("unconfirmed", 0) + 1
            return
        _failed(sessions, row_id, attempts, err, clock.now(), config, counts)
        return
    with sessions.begin() as s:
        s.execute(update(OutboxMessage).where(OutboxMessage.id == row_id)
                  .values(status="sent", sent_at=clock.now(), last_error=None))
    counts["sent"] += 1
    if result_of is not None:
        # The operator sees results go out (never their text: in a blind
        # game a player's mail names their power).
        log.info("results of ?%s sent: outbox #%s to %s", result_of, row_id, plural(len(mail.recipients), "recipient"))


def _failed(sessions, row_id: int, attempts: int, err: TransportError, now: datetime, config: Config,
            counts: dict[str, int]) -> None:
    final = (not err.temporary) or attempts >= config.max_attempts
    delay = timedelta(seconds=config.retry_seconds * (2 ** (attempts - 1)))
    with sessions.begin() as s:
        s.execute(update(OutboxMessage).where(OutboxMessage.id == row_id).values(
            status="failed" if final else "queued", last_error=str(err),
            next_attempt_at=now if final else now + delay))
    log.warning("outbox %s: attempt %d failed (%s)%s", row_id, attempts, err, "; giving up" if final else "")
    counts["failed" if final else "retry"] += 1


# -- what the operator sees: `judge outbox` and the web console ----------

def listing(session: Session, *, show_all: bool = False) -> list[dict]:
    """The outbox rows that wait or failed (with `show_all`, also those
    sent), oldest first: `judge outbox` and the console's outbox page."""
    query = select(OutboxMessage).order_by(OutboxMessage.id)
    if not show_all:
        query = query.where(OutboxMessage.status != "sent")
    return [{"id": r.id, "status": r.status, "attempts": r.attempts, "to": r.recipients, "subject": r.subject,
             "kind": r.kind, "next_attempt": r.next_attempt_at.isoformat() if r.status == "queued" else None,
             "last_error": r.last_error} for r in session.scalars(query)]


def delivery_states(session: Session, ids: Sequence[int]) -> dict[int, dict]:
    """Where each outbox row of `ids` stands (a game's audit trail shows it
    beside each outbound mail)."""
    if not ids:
        return {}
    rows = session.execute(select(OutboxMessage.id, OutboxMessage.status, OutboxMessage.attempts,
                                  OutboxMessage.sent_at, OutboxMessage.last_error)
                           .where(OutboxMessage.id.in_(set(ids)))).all()
    return {r.id: {"status": r.status, "attempts": r.attempts, "sent_at": r.sent_at, "last_error": r.last_error}
            for r in rows}


def retry(session: Session, row_id: int, now: datetime) -> str | None:
    """Queue a failed (or waiting, or unconfirmed) mail again, for the next
    pass; None when done, else why not (no such mail, sent already)."""
    row = session.get(OutboxMessage, row_id, with_for_update=True)
    if row is None:
        return f"#{row_id}: no such mail"
    if row.status == "sent":
        return f"#{row_id}: sent already at {row.sent_at:%Y-%m-%d %H:%M}; not sent again"
    # A fresh series of attempts: the retry limit counts from here.
    row.status, row.attempts, row.next_attempt_at = "queued", 0, now
    return None
