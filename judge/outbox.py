"""The outbox: every outgoing mail is a row before any transport sees it.

Rows move queued -> sending -> (data_sent) -> sent; a failed attempt goes
back to queued with a later next_attempt_at (exponential backoff), or to
failed after the configured number of attempts, keeping the last error. The
row's Message-ID is fixed when it is queued, so a retried send is the same
mail.

Claims: a sender claims rows ('sending') under its process's name, with a
lease that it renews while it works (owner, lease_until;
judge/outbox_claims.py). Every later write of the row names that owner, so
a sender whose claim was taken over can write, and send, nothing more of
it. Another process takes over only the rows of a sender that is gone:
certainly (a sender of this process that stopped, a process of this
machine that no longer runs) or presumably (its lease ran out).

Nothing is sent twice that the server accepted: the transport calls a commit
point just before the step after which the server may have the mail (SMTP:
the final dot; one commit point for the mails of one round), and the rows
become data_sent in their own transaction; the sender's journal then notes
which of them passed the dot and what the server answered. The rows of a
sender that is gone: those still "sending" never reached the commit point
and are queued again; those in "data_sent" are settled by the journal where
it can be trusted (not past the dot: queued; accepted: sent) and are
otherwise "unconfirmed": the server may have them. Those wait for the
operator (`judge outbox`, then `judge outbox confirm ID` or `judge outbox
retry ID`), the moderators told once a day, instead of being sent blindly a
second time. SMTP cannot do better than that (RFC 1047).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Sequence

from sqlalchemy import bindparam, case, func, or_, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from judge import audit
from judge import outbox_claims as claims
from judge.clock import Clock
from judge.config import Config
from judge.mail.outbound import compose, make_message_id
from judge.store.models import Game, OutboxMessage
from judge.transports.base import ClaimLost, OutgoingMail, Outcome, Transport, TransportError, private_header
from judge.wording import plural

log = logging.getLogger(__name__)

_INSERT = OutboxMessage.__table__.insert()
# Several rows, their ids in the order of the rows (SQLAlchemy's
# "insertmanyvalues": one statement, on SQLite as on PostgreSQL).
_INSERT_MANY = _INSERT.returning(OutboxMessage.__table__.c.id, sort_by_parameter_order=True)


def queue_mail(session: Session, config: Config, now: datetime, *, to: Sequence[str], subject: str,
               body: str, kind: str, game_id: int | None = None, inbound_id: int | None = None,
               in_reply_to: str | None = None,
               attachments: Sequence[tuple[str, bytes, str]] = (), run_id: int | None = None,
               private: bool = False) -> int:
    """Put one mail in the outbox; returns its row id. `run_id`: a
    third-party run of the blinding protocol the mail belongs to (it has no
    game here), for its log. `private` (and every mail of kind "token"): for
    its recipients' eyes only, marked so for the transport (a transport that
    publishes, a forum's, keeps it to them: judge/transports/base.py)."""
    return queue_mails(session, config, now, [dict(
        to=to, subject=subject, body=body, kind=kind, game_id=game_id, inbound_id=inbound_id,
        in_reply_to=in_reply_to, attachments=attachments, run_id=run_id, private=private)])[0]


def queue_mails(session: Session, config: Config, now: datetime, mails: Sequence[dict]) -> list[int]:
    """Put several mails in the outbox (each a dict of queue_mail's keyword
    arguments) in one INSERT: one round trip to the store for a game's
    results to all its players. Their row ids, in order."""
    rows, logged = [], []
    for m in mails:
        to, subject, kind = list(m["to"]), m["subject"], m["kind"]
        game_id, inbound_id, in_reply_to = m.get("game_id"), m.get("inbound_id"), m.get("in_reply_to")
        message_id = make_message_id(config.domain, uuid.uuid4().hex)
        private = m.get("private", False) or kind == "token"
        raw = compose(sender=config.address, sender_name=config.name, to=to, subject=subject, body=m["body"],
                      message_id=message_id, date=now, in_reply_to=in_reply_to,
                      references=[in_reply_to] if in_reply_to else (), attachments=m.get("attachments", ()),
                      extra_headers=private_header(private))
        rows.append({"message_id": message_id, "envelope_from": config.address, "recipients": to,
                     "subject": subject, "raw": raw, "kind": kind, "status": "queued", "attempts": 0,
                     "created_at": now, "next_attempt_at": now, "game_id": game_id, "inbound_id": inbound_id})
        run_id = m.get("run_id")
        logged.append(dict(game_id=game_id, inbound_id=inbound_id, to=to, subject=subject, mail_kind=kind,
                           message_id=message_id, **({"run": run_id} if run_id is not None else {})))
    # A plain INSERT, built once, not ORM objects: a backlog queues one
    # reply per mail, a deadline a mail per player of every game.
    if len(rows) == 1:
        ids = [session.connection().execute(_INSERT, rows[0]).inserted_primary_key[0]]
    else:
        ids = list(session.connection().execute(_INSERT_MANY, rows).scalars())
    for row_id, data in zip(ids, logged):
        audit.record(session, now, "outbound", outbox_id=row_id, **data)
    return ids


# How long a claim holds unless its sender renews it; renewed when a
# quarter of it is gone. Longer than a transport's own timeouts, so that a
# live sender waiting on a slow server keeps its rows (if it does not, the
# owner check on every write still keeps it from sending a mail twice).
LEASE = timedelta(seconds=120)
RENEW_AFTER = LEASE / 4
CLAIM = 100  # rows claimed per transaction
# A commit point records this many of the claimed rows at once, the
# group's own and the next ones' (one durable write for them, not one per
# mail); the journal marks each just before its dot. Ahead of its dot, a
# row "data_sent" is settled by the journal after a kill, and is
# "unconfirmed" only where the journal cannot tell (a power loss, a
# sender of another host).
ARM_AHEAD = 32
FLUSH_EVERY = 200  # outcomes written per transaction when no commit point carries them
# A pass sends for this long at most, then lets the daemon read its mail;
# the next pass comes at once while mail is due (judge.daemon).
SEND_BUDGET = timedelta(seconds=10)
NOTICE_EVERY = timedelta(days=1)
_T = OutboxMessage.__table__
_CLAIMED = ("sending", "data_sent")
UNKNOWN = ("the judge stopped after the whole mail was handed over; the server may have it: check its log, "
           "then `judge outbox confirm ID` (it has it) or `judge outbox retry ID` (it has not)")


def _store(sessions: sessionmaker[Session]) -> str:
    """The store's short name (outbox_claims.store_key): each has its own journals."""
    return claims.store_key(sessions.kw["bind"].url)


def _write_lock(s: Session) -> None:
    """On SQLite, take the database's write lock before reading the rows to
    claim (or resolve): a read outside a write transaction would let two
    processes see the same queued rows. PostgreSQL locks the rows read."""
    if s.get_bind().dialect.name == "sqlite":
        s.execute(text("UPDATE outbox SET status = status WHERE 0"))


@dataclass
class _Row:
    row_id: int
    attempts: int
    result_of: str | None
    recipients: int = 1
    recorded: bool = False  # its commit point is in the store (status data_sent)
    armed: bool = False  # ... and in the journal: from its dot on, the server may have it
    settled: bool = False  # its outcome is known (written at the next transaction)


class _Sender:
    """One pass's sending: claims, the commit points and the outcomes of
    the rows it holds, written with this process's name."""

    def __init__(self, sessions: sessionmaker[Session], clock: Clock, config: Config,
                 counts: dict[str, int]) -> None:
        self.sessions, self.clock, self.config, self.counts = sessions, clock, config, counts
        self.owner = str(claims.me())
        self.store = _store(sessions)
        self.journal = claims.journal(config.data_dir, self.store)
        self.rows: dict[str, _Row] = {}
        self.outcomes: list[tuple[str, str, dict]] = []  # (message id, kind, values) not yet written
        self.renewed_at = clock.now()

    # -- claiming -------------------------------------------------------
    def claim(self, limit: int) -> list[OutgoingMail]:
        now = self.clock.now()
        if not has_due(self.sessions, now):
            return []  # (an idle pass takes no write lock: `judge deliver` beside it never waits)
        taken: list[str] = []
        try:
            with self.sessions.begin() as s:
                _write_lock(s)
                rows = s.execute(
                    select(_T.c.id, _T.c.message_id, _T.c.envelope_from, _T.c.recipients, _T.c.raw, _T.c.attempts,
                           _T.c.kind, _T.c.game_id)
                    .where(_T.c.status == "queued", _T.c.next_attempt_at <= now)
                    .order_by(_T.c.id).limit(limit).with_for_update(skip_locked=True)).all()
                if not rows:
                    return []
                # Held before the claim commits: a recovery in another
                # thread of this process must never take them for orphans.
                taken = [r.message_id for r in rows]
                claims.HELD.take(self.store, taken)
                got = set(s.scalars(
                    update(_T).where(_T.c.id.in_([r.id for r in rows]), _T.c.status == "queued")
                    .values(status="sending", owner=self.owner, lease_until=now + LEASE,
                            attempts=_T.c.attempts + 1).returning(_T.c.id)))
                results = _result_games(s, [r for r in rows if r.id in got])
        except BaseException:
            claims.HELD.release(self.store, taken)
            raise
        mails = []
        for r in rows:
            if r.id not in got:
                claims.HELD.release(self.store, [r.message_id])
                continue
            self.rows[r.message_id] = _Row(r.id, r.attempts + 1, results.get(r.id), len(r.recipients))
            mails.append(OutgoingMail(r.message_id, r.envelope_from, tuple(r.recipients), r.raw))
        return mails

    # -- the commit point of a group --------------------------------------
    def commit(self, mails: Sequence[OutgoingMail]) -> set[str]:
        """Record that `mails` may reach the server from now on: in the
        store (status data_sent; with the outcomes known so far, and for the
        rows that come next, up to ARM_AHEAD, in one transaction) unless it
        is there already; then in the journal. Returns those still ours."""
        group = [m.message_id for m in mails if m.message_id in self.rows]
        if any(not self.rows[m].recorded for m in group):
            now = self.clock.now()
            ahead = [m for m, row in self.rows.items() if not (row.recorded or row.settled) and m not in group]
            ids = {self.rows[m].row_id: m for m in group + ahead[:max(0, ARM_AHEAD - len(group))]}
            with self.sessions.begin() as s:
                self._write_outcomes(s)
                recorded = set(s.scalars(
                    update(_T).where(_T.c.id.in_(list(ids)), _T.c.owner == self.owner, _T.c.status.in_(_CLAIMED))
                    .values(status="data_sent", lease_until=now + LEASE).returning(_T.c.id)))
                self._renew(s, now)
            self._written()
            for row_id in recorded:
                self.rows[ids[row_id]].recorded = True
        armed = [m for m in group if m in self.rows and self.rows[m].recorded]
        try:
            self.journal.write("A", armed)
        except OSError as err:
            # Without the journal's line a recovery would take the mail for
            # one that never went out: it does not go out.
            log.error("outbox: the journal %s cannot be written (%s): the mails wait", self.journal.path, err)
            for message_id in armed:
                self._outcome(message_id, TransportError(f"the outbox journal cannot be written: {err}",
                                                         temporary=True))
            return set()
        for message_id in armed:
            self.rows[message_id].armed = True
        return set(armed)

    # -- outcomes -------------------------------------------------------
    def done(self, mail: OutgoingMail, outcome: Outcome) -> None:
        row = self.rows.get(mail.message_id)
        if row is None:
            return  # resolved already (its journal line failed)
        if isinstance(outcome, ClaimLost):
            # Another sender holds it now: nothing more is written here.
            log.warning("outbox %s: the claim lapsed before its commit point; another sender has it", row.row_id)
            del self.rows[mail.message_id]
            claims.HELD.release(self.store, [mail.message_id])
            return
        if row.armed and (outcome is None or (isinstance(outcome, TransportError) and not outcome.unconfirmed)):
            # The server's word, kept until the row says it: a recovery
            # after a kill reads it (judge/outbox_claims.py).
            try:
                self.journal.write("S" if outcome is None else "R", [mail.message_id])
            except OSError:
                pass  # the row may then end "unconfirmed" after a crash: never sent twice
        self._outcome(mail.message_id, outcome)
        if len(self.outcomes) >= FLUSH_EVERY:
            self.flush()

    def _outcome(self, message_id: str, outcome: Outcome) -> None:
        row = self.rows[message_id]
        row.settled = True
        now = self.clock.now()
        if outcome is None:
            self.outcomes.append((message_id, "sent", {"at": now}))
            self.counts["sent"] += 1
            if row.result_of is not None:
                # The operator sees results go out (never their text: in a
                # blind game a player's mail names their power).
                log.info("results of ?%s sent: outbox #%s to %s", row.result_of, row.row_id,
                         plural(row.recipients, "recipient"))
            return
        if not isinstance(outcome, TransportError):
            # A bug met this mail: it fails alone, with the error kept; past
            # the commit point the server may have it: never resent blindly.
            log.error("outbox %s: unexpected error", row.row_id, exc_info=outcome)
            error = f"{type(outcome).__name__}: {outcome}"[:4000]
            self.outcomes.append((message_id, "unconfirmed", {"error": error}) if row.armed
                                 else (message_id, "failed", {"error": error, "next": now}))
            self.counts["failed"] += 1
            return
        if outcome.unconfirmed:
            log.warning("outbox %s: %s", row.row_id, outcome)
            self.outcomes.append((message_id, "unconfirmed", {"error": str(outcome)}))
            self.counts["unconfirmed"] = self.counts.get("unconfirmed", 0) + 1
            return
        final = (not outcome.temporary) or row.attempts >= self.config.max_attempts
        delay = timedelta(seconds=self.config.retry_seconds * (2 ** (row.attempts - 1)))
        self.outcomes.append((message_id, "failed" if final else "queued",
                              {"error": str(outcome), "next": now if final else now + delay}))
        log.warning("outbox %s: attempt %d failed (%s)%s", row.row_id, row.attempts, outcome,
                    "; giving up" if final else "")
        self.counts["failed" if final else "retry"] += 1

    def _write_outcomes(self, s: Session) -> None:
        """The outcomes not yet written, one statement per kind, each row
        only if this sender still holds it."""
        mine = _T.c.owner == self.owner
        # (No IN in these WHEREs: SQLAlchemy's executemany cannot expand one.)
        held = or_(*(_T.c.status == status for status in (*_CLAIMED, "unconfirmed")))
        by_kind: dict[str, list[dict]] = {}
        for message_id, kind, values in self.outcomes:
            by_kind.setdefault(kind, []).append({"rid": self.rows[message_id].row_id, **values})
        if "sent" in by_kind:
            s.execute(update(_T).where(_T.c.id == bindparam("rid"), mine, held)
                      .values(status="sent", sent_at=bindparam("at"), last_error=None, lease_until=None),
                      by_kind["sent"])
        for kind in ("queued", "failed"):
            if kind in by_kind:
                s.execute(update(_T).where(_T.c.id == bindparam("rid"), mine, held)
                          .values(status=kind, last_error=bindparam("error"), next_attempt_at=bindparam("next"),
                                  owner=None, lease_until=None), by_kind[kind])
        if "unconfirmed" in by_kind:
            s.execute(update(_T).where(_T.c.id == bindparam("rid"), mine,
                                       or_(*(_T.c.status == status for status in _CLAIMED)))
                      .values(status="unconfirmed", last_error=bindparam("error"), lease_until=None),
                      by_kind["unconfirmed"])

    def _written(self) -> None:
        """The outcomes are committed: their rows are no longer held."""
        done = [message_id for message_id, _, _ in self.outcomes]
        self.outcomes.clear()
        for message_id in done:
            self.rows.pop(message_id, None)
        claims.HELD.release(self.store, done)

    def _renew(self, s: Session, now: datetime) -> None:
        if now - self.renewed_at < RENEW_AFTER:
            return
        # Every row this process holds, whichever of its senders: the lease
        # says that the process lives.
        s.execute(update(_T).where(_T.c.owner == self.owner, _T.c.status.in_(_CLAIMED))
                  .values(lease_until=now + LEASE))
        self.renewed_at = now

    def flush(self) -> None:
        with self.sessions.begin() as s:
            self._write_outcomes(s)
            self._renew(s, self.clock.now())
        self._written()

    def close(self, error: BaseException | None) -> None:
        """The pass ends: outcomes written. The rows an error (a bug in a
        transport, a dropped store) left without one wait for their next
        attempt, or are unconfirmed past their commit point; if even that
        cannot be written (or the process is being stopped), they stay
        claimed and a recovery settles them from the journal."""
        try:
            if isinstance(error, Exception):
                for message_id, row in list(self.rows.items()):
                    if not row.settled:
                        self._outcome(message_id, TransportError(f"unexpected {type(error).__name__}: {error}",
                                                                 temporary=True, unconfirmed=row.armed))
            self.flush()
        except Exception:
            log.exception("outbox: outcomes could not be written; the next pass resolves them")
        finally:
            if self.rows:
                self.journal.keep = True
                claims.HELD.release(self.store, list(self.rows))
                self.rows.clear()
            else:
                try:
                    self.journal.trim()
                except OSError:
                    pass


def _result_games(s: Session, rows: Sequence) -> dict[int, str]:
    """The game of each results mail among `rows` (outbox id -> name), for
    the operator's log line when it is sent; one query, only if there are
    results among them."""
    game_of = {r.id: r.game_id for r in rows if r.kind == "result" and r.game_id is not None}
    if not game_of:
        return {}
    names = dict(s.execute(select(Game.id, Game.name).where(Game.id.in_(set(game_of.values())))).all())
    return {row_id: names.get(game_id, str(game_id)) for row_id, game_id in game_of.items()}


def send_due(sessions: sessionmaker[Session], transport: Transport, clock: Clock, config: Config,
             limit: int | None = None, claim: int | None = None) -> dict[str, int]:
    """Send the queued rows that are due, oldest first, `claim` rows to a
    claim and a batch (the transport sends a batch side by side where it
    can), until none is due (or `limit` were taken, or SEND_BUDGET is
    spent: judge.daemon comes back at once). The rows of senders that are
    gone are resolved first (recover)."""
    counts = {"sent": 0, "retry": 0, "failed": 0}
    claim = claim or CLAIM
    recover(sessions, clock.now(), config.data_dir)
    sender = _Sender(sessions, clock, config, counts)
    started = clock.now()
    taken = 0
    error: BaseException | None = None
    try:
        while limit is None or taken < limit:
            batch = sender.claim(claim if limit is None else min(claim, limit - taken))
            if not batch:
                break
            taken += len(batch)
            transport.send_batch(batch, sender.commit, sender.done)
            sender.flush()
            if clock.now() - started >= SEND_BUDGET:
                break
    except BaseException as err:
        error = err
        raise
    finally:
        sender.close(error)
    return counts


def has_due(sessions: sessionmaker[Session], now: datetime) -> bool:
    """Whether a queued mail is due (the daemon's next pass then comes at
    once instead of after its poll interval)."""
    with sessions() as s:
        return s.execute(select(_T.c.id).where(_T.c.status == "queued", _T.c.next_attempt_at <= now)
                         .limit(1)).first() is not None


# -- senders that are gone ------------------------------------------------

def requeue_interrupted(sessions: sessionmaker[Session], now: datetime | None = None,
                        data_dir: Path | None = None) -> int:
    """At a start: resolve the rows of senders that are gone (recover),
    and remove the journals of dead senders that nothing needs any more.
    Returns how many rows went back to the queue. Without `now`, only
    senders certainly gone count (no lease is judged)."""
    counts = recover(sessions, now, data_dir)
    if data_dir is not None:
        with sessions() as s:
            owners = set(s.scalars(select(_T.c.owner).where(_T.c.status.in_(_CLAIMED)).distinct()))
        store = _store(sessions)
        for owner in claims.stale_journals(data_dir, store):
            if str(owner) not in owners:
                claims.forget_journal(data_dir, owner, store)
    return counts.get("queued", 0)


def recover(sessions: sessionmaker[Session], now: datetime | None, data_dir: Path | None) -> dict[str, int]:
    """The rows still claimed by a sender that is gone: a sender of this
    process that stopped, a process of this machine that no longer runs
    (both certain), or one whose lease ran out by `now`. 'sending' rows go
    back to the queue (they never reached their commit point); 'data_sent'
    rows by the sender's journal where it can be trusted (a certain death
    on this machine), else 'unconfirmed'. Every write names the owner and
    the status it found, so a live sender's rows are never touched."""
    with sessions() as s:
        rows = s.execute(select(_T.c.id, _T.c.message_id, _T.c.owner, _T.c.status, _T.c.lease_until)
                         .where(_T.c.status.in_(_CLAIMED))).all()
    if not rows:
        return {}
    by_owner: dict[str | None, list] = {}
    for r in rows:
        by_owner.setdefault(r.owner, []).append(r)
    here = claims.me()
    store = _store(sessions)
    mine = False
    plan: list[tuple[object, str, dict]] = []  # (row, new status, values)
    gone: list[claims.Identity] = []
    for owner_name, its_rows in by_owner.items():
        owner = claims.parse(owner_name)
        fates = None
        if owner is None:
            dead = its_rows  # claimed by a judge from before claims had owners
        elif owner == here:
            dead = [r for r in its_rows if not claims.HELD.holds(store, r.message_id)]
            fates = claims.read_journal(data_dir, owner, store) if dead else None
            mine = bool(dead)
        elif claims.certainly_dead(owner):
            dead = its_rows
            fates = claims.read_journal(data_dir, owner, store)
            gone.append(owner)
        elif now is not None and all(r.lease_until is None or r.lease_until <= now for r in its_rows):
            dead = its_rows
        else:
            continue
        for r in dead:
            plan.append((r, *_fate(r, fates)))
    if not plan:
        return {}
    counts: dict[str, int] = {}
    with sessions.begin() as s:
        _write_lock(s)
        for r, status, values in plan:
            owned = _T.c.owner.is_(None) if r.owner is None else _T.c.owner == r.owner
            changed = s.execute(update(_T).where(_T.c.id == r.id, owned, _T.c.status == r.status)
                                .values(status=status, lease_until=None, **values)).rowcount
            if changed:
                counts[status] = counts.get(status, 0) + 1
    if counts:
        log.warning("outbox: mails of a sender that stopped: %s",
                    ", ".join(f"{n} {_SAID[status]}" for status, n in sorted(counts.items())))
    if data_dir is not None:
        for owner in gone:
            claims.forget_journal(data_dir, owner, store)
    if mine:
        # What this process's stopped senders left is settled: its journal
        # may be emptied again.
        claims.journal_settled(store)
    return counts


_SAID = {"queued": "queued again (they never reached the server)", "sent": "sent (their server said so)",
         "unconfirmed": "unconfirmed (the server may have them: `judge outbox`)"}


def _fate(r, fates: claims.Fates | None) -> tuple[str, dict]:
    """What becomes of one row of a sender that is gone."""
    if r.status == "sending":
        return "queued", {"owner": None}
    if fates is not None:
        if r.message_id in fates.accepted:
            return "sent", {"last_error": None}
        if r.message_id not in fates.armed or r.message_id in fates.refused:
            return "queued", {"owner": None}
    return "unconfirmed", {"last_error": UNKNOWN}


# -- the moderators' notice of unconfirmed mail ---------------------------

def notice_unconfirmed(sessions: sessionmaker[Session], config: Config, now: datetime) -> int:
    """Tell the moderators (config.moderators) about the mails whose fate is
    unknown: when one is new, and then once a day while any is left. One
    mail listing them all (or, with no moderators, a warning in the log).
    Returns how many were listed."""
    since = now - NOTICE_EVERY
    with sessions() as s:
        waiting, fresh, last = s.execute(
            select(func.count(_T.c.id), func.sum(case((_T.c.notified_at.is_(None), 1), else_=0)),
                   func.max(_T.c.notified_at)).where(_T.c.status == "unconfirmed")).one()
    if not waiting or not (fresh or last is None or last <= since):
        return 0
    with sessions.begin() as s:
        _write_lock(s)
        rows = s.execute(select(_T.c.id, _T.c.message_id, _T.c.recipients, _T.c.subject, _T.c.created_at,
                                _T.c.notified_at)
                         .where(_T.c.status == "unconfirmed").order_by(_T.c.id).with_for_update()).all()
        fresh = [r for r in rows if r.notified_at is None]
        told = [r.notified_at for r in rows if r.notified_at is not None]
        if not rows or (not fresh and max(told) > since):
            return 0  # another judge process told them meanwhile
        if config.moderators:
            from judge.templating import render_mail

            subject, body = render_mail("moderators/unconfirmed.txt.j2", rows=rows, fresh=len(fresh),
                                        judge_name=config.name, docs_url=config.docs_url)
            queue_mail(s, config, now, to=list(config.moderators), subject=subject, body=body, kind="notice")
        else:
            log.warning("outbox: %d mail(s) may or may not have reached the server (unconfirmed: #%s); "
                        "no moderators to tell: see `judge outbox`", len(rows), ", #".join(str(r.id) for r in rows))
        s.execute(update(_T).where(_T.c.id.in_([r.id for r in rows])).values(notified_at=now))
    return len(rows)


# -- what the operator sees: `judge outbox` and the web console ----------

def listing(session: Session, *, show_all: bool = False) -> list[dict]:
    """The outbox rows that wait or failed (with `show_all`, also those
    sent), oldest first: `judge outbox` and the console's outbox page."""
    query = select(OutboxMessage).order_by(OutboxMessage.id)
    if not show_all:
        query = query.where(OutboxMessage.status != "sent")
    return [{"id": r.id, "status": r.status, "attempts": r.attempts, "to": r.recipients, "subject": r.subject,
             "kind": r.kind, "next_attempt": r.next_attempt_at.isoformat() if r.status == "queued" else None,
             "last_error": r.last_error, "message_id": r.message_id,
             "sender": r.owner if r.status in _CLAIMED else None} for r in session.scalars(query)]


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
    if row.status in _CLAIMED:
        return f"#{row_id}: being sent now ({row.status}); not queued again"
    # A fresh series of attempts: the retry limit counts from here.
    row.status, row.attempts, row.next_attempt_at = "queued", 0, now
    row.owner = row.lease_until = None
    return None


def confirm(session: Session, row_id: int, now: datetime) -> str | None:
    """An unconfirmed mail that the server's log shows it got: marked sent
    (and no longer in the moderators' notice); None when done, else why not."""
    row = session.get(OutboxMessage, row_id, with_for_update=True)
    if row is None:
        return f"#{row_id}: no such mail"
    if row.status != "unconfirmed":
        return f"#{row_id}: {row.status}, not unconfirmed; nothing changed"
    row.status, row.sent_at, row.last_error = "sent", now, None
    return None
