"""How far a UID-based source (IMAP) has got: one row of `source_state` per source.

The watermark is the highest UID whose mail is stored durably, for one
mailbox and UIDVALIDITY. It only moves forward within a UIDVALIDITY; a new
UIDVALIDITY starts over at 0 (`reset`). `advance` takes the caller's session,
so that it can share the transaction that stores the mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge.store.models import SourceState


@dataclass(frozen=True)
class Watermark:
    mailbox: str
    uidvalidity: int
    last_uid: int


def _now() -> datetime:
    return datetime.now(UTC)


class WatermarkStore:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def get(self, source_name: str) -> Watermark | None:
        with self.sessions() as s:
            row = s.get(SourceState, source_name)
            # uidvalidity 0: a row note_error made before any mail was stored.
            return None if row is None or not row.uidvalidity else Watermark(row.mailbox, row.uidvalidity,
                                                                               row.last_uid)

    def advance(self, session: Session, source_name: str, uidvalidity: int, uid: int,
                mailbox: str | None = None) -> Watermark:
        """Raise the watermark to `uid` (never lowers it) for `uidvalidity`.

        A different UIDVALIDITY than the stored one replaces it (the caller
        has logged the change). The caller commits `session`.
        """
        row = session.scalars(select(SourceState).where(SourceState.source == source_name)
                              .with_for_update()).first()
        if row is None:
            row = SourceState(source=source_name, mailbox=mailbox or "", uidvalidity=uidvalidity, last_uid=uid,
                              updated_at=_now())
            session.add(row)
        elif row.uidvalidity != uidvalidity or (mailbox is not None and row.mailbox != mailbox):
            row.uidvalidity, row.last_uid, row.updated_at = uidvalidity, uid, _now()
            if mailbox is not None:
                row.mailbox = mailbox
        elif uid > row.last_uid:
            row.last_uid, row.updated_at = uid, _now()
        session.flush()
        return Watermark(row.mailbox, row.uidvalidity, row.last_uid)

    def reset(self, source_name: str, mailbox: str, uidvalidity: int, last_uid: int = 0) -> Watermark:
        """Start over (new UIDVALIDITY or mailbox), in a transaction of its own."""
        with self.sessions.begin() as s:
            row = s.get(SourceState, source_name, with_for_update=True)
            if row is None:
                s.add(SourceState(source=source_name, mailbox=mailbox, uidvalidity=uidvalidity, last_uid=last_uid,
                                  updated_at=_now()))
            else:
                row.mailbox, row.uidvalidity, row.last_uid, row.updated_at = mailbox, uidvalidity, last_uid, _now()
        return Watermark(mailbox, uidvalidity, last_uid)

    def note_error(self, source_name: str, mailbox: str, error: str) -> None:
        """Keep the source's last failure for the web console (another
        process than the daemon's, so it is kept in the store). Never raises:
        the store may be what fails, and the source's own retry goes on."""
        try:
            with self.sessions.begin() as s:
                row = s.get(SourceState, source_name, with_for_update=True)
                if row is None:
                    row = SourceState(source=source_name, mailbox=mailbox, uidvalidity=0, last_uid=0,
                                      updated_at=_now())
                    s.add(row)
                row.last_error, row.last_error_at = error[:2000], _now()
        except Exception:  # noqa: BLE001 - logged by the caller's warning already
            pass


def source_states(session: Session) -> list[dict]:
    """Every source with a row: where its watermark stands and its last
    failure (the console's page of the sources)."""
    return [{"source": r.source, "mailbox": r.mailbox, "uidvalidity": r.uidvalidity or None,
             "last_uid": r.last_uid if r.uidvalidity else None, "updated_at": r.updated_at,
             "last_error": r.last_error, "last_error_at": r.last_error_at}
            for r in session.scalars(select(SourceState).order_by(SourceState.source))]
