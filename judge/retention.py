"""Raw-mail retention: a stored mail keeps its raw bytes (passwords and
all) for [limits] raw_mail_retention_days; then the bytes are replaced by
the mail's masked text (a few headers and the body with every password
position masked, judge.syntax.mask_secret), and the row is marked
scrubbed. The commands' outcomes, events and replies never held a password
(they are masked when written), so after this no password is kept in clear
anywhere in the store (docs/security.md)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from judge.config import Config
from judge.store.models import InboundMessage, OutboxMessage

BATCH = 500


def masked_text(raw: bytes, config: Config) -> bytes:
    """What is kept of a mail past the retention period."""
    from judge.mail.inbound import parse_message
    from judge.syntax import mask_secret

    mail = parse_message(raw, own_addresses=[config.address])
    head = [f"From: {mail.sender_name} <{mail.sender or ''}>",
            f"Subject: {mask_secret(mail.subject)}",
            f"Date: {mail.date.isoformat() if mail.date else ''}",
            f"Message-ID: {mail.message_id}",
            f"X-Judge-Scrubbed: the raw mail ({len(raw)} bytes) was replaced by its masked text"]
    body = [mask_secret(line) for line in mail.text.split("\n")]
    return ("\n".join(head) + "\n\n" + "\n".join(body)).encode("utf-8")


def scrub_due(sessions: sessionmaker[Session], config: Config, now: datetime, limit: int = 5000) -> int:
    """Replace the raw bytes of processed mails older than the retention
    period; at most `limit` a pass, BATCH to a transaction."""
    cutoff = now - timedelta(days=config.raw_mail_retention_days)
    done = _scrub_tokens(sessions, cutoff, now)
    while done < limit:
        with sessions.begin() as s:
            rows = s.execute(select(InboundMessage.id, InboundMessage.raw)
                             .where(InboundMessage.scrubbed_at.is_(None), InboundMessage.received_at < cutoff,
                                    InboundMessage.status != "new")
                             .order_by(InboundMessage.id).limit(min(BATCH, limit - done))).all()
            for row_id, raw in rows:
                s.execute(update(InboundMessage).where(InboundMessage.id == row_id)
                          .values(raw=masked_text(raw, config), scrubbed_at=now))
        if not rows:
            break
        done += len(rows)
    return done


# Outbox rows whose text holds a secret (a replacement's one-time token,
# judge/commands/eml_eject.py): the same retention applies once they left.
SECRET_KINDS = ("token",)
_GONE = ("sent", "failed", "unconfirmed")


def _scrub_tokens(sessions: sessionmaker[Session], cutoff: datetime, now: datetime) -> int:
    with sessions.begin() as s:
        rows = s.execute(select(OutboxMessage.id, OutboxMessage.recipients, OutboxMessage.created_at)
                         .where(OutboxMessage.kind.in_(SECRET_KINDS), OutboxMessage.status.in_(_GONE),
                                OutboxMessage.created_at < cutoff)).all()
        for row_id, recipients, created in rows:
            note = (f"X-Judge-Scrubbed: {now.isoformat()}\n\nThe one-time token mailed to {', '.join(recipients)} "
                    f"on {created.isoformat()} was removed after the retention period.\n")
            s.execute(update(OutboxMessage).where(OutboxMessage.id == row_id)
                      .values(raw=note.encode(), kind="token-scrubbed"))
    return len(rows)
