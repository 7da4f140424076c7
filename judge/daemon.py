"""The daemon: sources -> store -> commands -> outbox -> transport, in a loop.

One iteration (run_once) takes new mail from every source and stores it raw
(commit, with the source's watermark) before acknowledging it to the source,
processes the stored mails (a batch per transaction: each mail's effects,
reply and status commit together with its batch's), handles deadlines, and
sends the outbox. A crash at any point leaves either the raw mail in the
source (fetched again, and dropped by its Message-ID) or in the store with
status 'new' (processed again, its batch's earlier effects rolled back).
Between passes the loop sleeps its poll interval, or until `judge deliver`
wakes it after storing a mail (judge.wake).
"""

from __future__ import annotations

import logging
import signal
from typing import Callable, Sequence
import threading
import traceback
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from judge import mailbatch, outbox, retention, scheduler
from judge.clock import Clock
from judge.config import Config
from judge.mail.inbound import dedup_key_of, parse_message
from judge.mailrunner import NEW_MAILS, InboundRow, process_inbound
from judge.outbox import queue_mail
from judge.sources.base import RawMail, Source
from judge.games import LOCK_GAMES
from judge.store.lock import is_transient, retrying, write_lock
from judge.store.models import Game, InboundMessage, OutboxMessage
from judge.syntax import mask_secret
from judge.templating import render_mail
from judge.transports.base import Transport
from judge.wake import WakeChannel, wake_path

log = logging.getLogger(__name__)

# Mails stored per transaction (with the source's watermark), and processed
# per transaction: one commit per mail made a backlog cost a disk flush each.
STORE_BATCH = 200
FETCH_LIMIT = 1000  # per source and pass, so that a large backlog is worked through in steps
PROCESS_BATCH = 100


# Any number fixed for the judge: the key of its PostgreSQL advisory lock.
_PROCESSING_LOCK_KEY = 0x6A756467  # "judg"


def processing_lock(session: Session) -> bool:
    """Take the right to run stored mail until this transaction ends; False
    if another process holds it. One process at a time runs mail, so that a
    sender's mails take effect in the order they arrived (a resubmitted list
    must replace the earlier one, never the reverse), even with several judge
    processes or `judge deliver` beside the daemon; they all still store and
    send mail in parallel.

    PostgreSQL: a transaction-scoped advisory lock, not waited for. SQLite:
    the database's write lock, taken now (waiting up to the busy timeout)
    rather than at the first write, so that the mails read next are the
    newest state, which no other process can change before the commit."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return bool(session.execute(text("SELECT pg_try_advisory_xact_lock(:key)"),
                                    {"key": _PROCESSING_LOCK_KEY}).scalar())
    if dialect == "sqlite":
        session.execute(text("UPDATE inbound_messages SET status = status WHERE 0"))
    return True


def _reply_games(session: Session, inbound_ids: list[int]) -> dict[int, str]:
    """The game each mail's reply is about (its outbox row's game), for the
    operator's log: one query per batch."""
    return dict(session.execute(select(OutboxMessage.inbound_id, Game.name)
                                .join(Game, OutboxMessage.game_id == Game.id)
                                .where(OutboxMessage.inbound_id.in_(inbound_ids))).all())


def _log_mail(row: InboundRow, game: str | None) -> None:
    """One line per mail processed: sender, game, outcome. The reason is
    the judge's own words (a refusal, "no reply: ..."), never the mail's
    text, so never a password; cut to one short line."""
    reason = " ".join((row.reason or "").split())[:200]
    log.info("mail %s from %s%s: %s%s", row.id, row.sender or "(no usable From)", f" (?{game})" if game else "",
             row.status, f" ({reason})" if reason else "")


@dataclass
class Judge:
    config: Config
    sessions: sessionmaker[Session]
    clock: Clock
    sources: list[Source] = field(default_factory=list)
    transport: Transport | None = None
    stopping: bool = False
    _scrubbed_at: datetime | None = None

    # -- intake ---------------------------------------------------------
    def receive(self, raw: bytes, source: str, progress: Callable[[Session], None] | None = None,
                oversize: int | None = None) -> int | None:
        """Store one raw mail; None if its Message-ID was seen before (from
        the same sender). `progress` records the source's watermark in the
        same transaction. `oversize`: `raw` is only the header of a mail of
        that many bytes, over the size limit (RawMail.oversize)."""
        try:
            ids = self._store([raw], source, progress, [oversize])
        except IntegrityError:  # another process stored it first
            return None
        return ids[0] if ids else None

    def receive_batch(self, source: Source, mails: Sequence[RawMail]) -> int:
        """Store fetched mails in one transaction with the source's progress;
        returns how many were new. If another process stores one of them
        meanwhile, the batch is stored again one mail at a time."""
        if not mails:
            return 0
        try:
            return len(self._store([m.raw for m in mails], source.name, lambda s: source.progress_batch(mails, s),
                                   [m.oversize for m in mails]))
        except IntegrityError:
            return sum(self.receive(m.raw, source.name, progress=lambda s, m=m: source.progress(m, s),
                                    oversize=m.oversize) is not None
                       for m in mails)

    def _store(self, raws: Sequence[bytes], source: str, progress: Callable[[Session], None] | None,
               oversizes: Sequence[int | None]) -> list[int]:
        """Insert the mails whose Message-ID is new (also within `raws`), run
        `progress`, commit; the new rows' ids. IntegrityError if another
        process stored one of them meanwhile (nothing is stored then)."""
        keys = [dedup_key_of(raw) for raw in raws]
        now = self.clock.now()
        with self.sessions() as s:
            seen = {tuple(r) for r in s.execute(select(InboundMessage.message_id, InboundMessage.from_key)
                                                .where(InboundMessage.message_id.in_({k[0] for k in keys})))}
            rows = []
            for raw, key, oversize in zip(raws, keys, oversizes):
                if key in seen:
                    log.info("duplicate %s from %s dropped", key[0], source)
                    continue
                seen.add(key)
                rows.append({"source": source, "message_id": key[0], "from_key": key[1], "raw": raw,
                             "received_at": now, "status": "new", "oversize": oversize})
            try:
                new = list(s.scalars(insert(InboundMessage).returning(InboundMessage.id), rows)) if rows else []
                if progress is not None:
                    progress(s)
                s.commit()
            except IntegrityError:
                s.rollback()
                raise
            return new

    def poll_sources(self) -> int:
        stored = 0
        for source in self.sources:
            # A fetch stops at a byte budget (a few large mails), so a pass
            # fetches again until FETCH_LIMIT mails or the source is empty.
            taken = 0
            while taken < FETCH_LIMIT:
                mails = source.fetch(limit=FETCH_LIMIT - taken)
                if not mails:
                    break
                taken += len(mails)
                for i in range(0, len(mails), STORE_BATCH):
                    batch = mails[i:i + STORE_BATCH]
                    stored += self.receive_batch(source, batch)
                    source.ack_batch(batch)  # after the commit: marking on the server, moving the files
        return stored

    # -- processing -----------------------------------------------------
    def process_pending(self, limit: int = 1000, batch: int = PROCESS_BATCH) -> int:
        """Run up to `limit` stored mails, oldest first, `batch` to a
        transaction."""
        count = 0
        while count < limit:
            taken = self._run(NEW_MAILS.limit(min(batch, limit - count)))
            if not taken:
                break
            count += taken
        return count

    def _run(self, query) -> int:
        """Run the waiting mails `query` selects in one transaction; how many
        it took (0 if another process holds the processing lock). A
        transient fault of the store (a dropped connection, a failover, a
        stale game version) runs the batch again on a fresh connection, and
        if the store stays away the mails stay waiting for the next pass:
        never quarantined for it. A mail that meets a bug rolls the
        transaction back: alone, it is quarantined; in a batch, the batch is
        run again one mail per transaction, so that only that mail is
        quarantined and the others are done as usual."""
        try:
            outcome = self._run_batch(query)
        except Exception as err:
            if not is_transient(err):
                raise
            # Tried again mail by mail: a batch that cannot finish between
            # two faults would be tried whole for ever.
            outcome = self._one_by_one(query, err)
        if isinstance(outcome, int):
            return outcome
        rows, error = outcome
        if len(rows) == 1:
            retrying(lambda: self._quarantine(rows[0].id, error), "quarantining a mail")
        else:
            for row in rows:
                self._run(NEW_MAILS.where(InboundMessage.__table__.c.id == row.id))
        return len(rows)

    def _one_by_one(self, query, fault: BaseException) -> int | tuple[list[InboundRow], str]:
        """After a transient fault of a batch: its mails, each in a
        transaction of its own, each tried again on a fresh connection; if
        the store stays away, the mails wait for the next pass."""
        log.warning("running stored mail met %s; trying again mail by mail", type(fault).__name__)
        done = 0
        try:
            with self.sessions() as s:
                ids = list(s.scalars(query.with_only_columns(InboundMessage.__table__.c.id)))
            for row_id in ids:
                one = retrying(lambda row_id=row_id: self._run_batch(NEW_MAILS.where(
                    InboundMessage.__table__.c.id == row_id)), "running a stored mail")
                if not isinstance(one, int):
                    return one  # a bug: quarantined by the caller
                done += one
        except Exception as err:
            if not is_transient(err):
                raise
            log.warning("stored mail waits for the store (%s); the next pass runs it", type(err).__name__)
        return done

    def _run_batch(self, query) -> int | tuple[list[InboundRow], str]:
        """One try of _run: how many mails were run, or the batch's rows and
        the bug one of them met (rolled back). A transient fault is raised."""
        with self.sessions() as s:
            s.info[LOCK_GAMES] = True  # every game a mail names is locked until the commit
            if not processing_lock(s):
                return 0  # another judge process is running mail now; it takes these too
            rows = [InboundRow(*r) for r in s.execute(query.with_for_update(skip_locked=True))]
            if not rows:
                return 0
            try:
                mailbatch.start(s, self.config, rows)
                for row in rows:
                    process_inbound(s, self.config, self.clock.now(), row)
                games = _reply_games(s, [row.id for row in rows])
                s.commit()
            except Exception as err:
                s.rollback()
                if is_transient(err):
                    raise
                return rows, traceback.format_exc()
        for row in rows:
            _log_mail(row, games.get(row.id))
        return len(rows)

    def _quarantine(self, row_id: int, error: str) -> None:
        """A bug met this mail: keep it, tell the sender, never crash. The
        status is written first, on its own: whatever the reply meets, the
        mail is out of the queue (a mail left 'new' would be run first on
        every pass and hold up all the mail behind it)."""
        log.error("mail %s quarantined:\n%s", row_id, error)
        now = self.clock.now()
        with self.sessions.begin() as s:
            row = s.get(InboundMessage, row_id)
            row.status, row.reason, row.processed_at = "quarantined", error[-4000:], now
        try:
            with self.sessions.begin() as s:
                row = s.get(InboundMessage, row_id)
                mail = parse_message(row.raw, own_addresses=[self.config.address])
                row.sender, row.subject = mail.sender, mask_secret(mail.subject[:500])
                if mail.sender and not mail.auto:
                    # To the From address only (no backscatter through Reply-To).
                    subject, body = render_mail("quarantined.txt.j2", mail=mail, judge_name=self.config.name)
                    queue_mail(s, self.config, now, to=[mail.sender], subject=subject, body=body, kind="reply",
                               inbound_id=row.id, in_reply_to=mail.message_id)
        except Exception:
            log.exception("mail %s: no apology could be queued either", row_id)

    # -- the loop -------------------------------------------------------
    def run_once(self, games: bool = True) -> dict[str, object]:
        """One pass. Each stage is a failure domain of its own: a fault in
        one (a database or network fault; bugs are caught closer, per mail,
        per game and per outbox row) is logged and the next stages still
        run, so replies go out whatever else fails. `games`: the games'
        timed work (deadlines, timers, reminders) too; `judge serve` runs
        it in a thread of its own instead (GameWorker)."""
        out: dict[str, object] = {}
        stages: list[tuple[str, Callable[[], object]]] = [
            ("stored", self.poll_sources),
            ("processed", self.process_pending),
            *([("deadlines", self.game_work)] if games else []),
            ("scrubbed", self._scrub),
            ("unconfirmed", lambda: outbox.notice_unconfirmed(self.sessions, self.config, self.clock.now())),
            ("sent", lambda: outbox.send_due(self.sessions, self.transport, self.clock, self.config)
             if self.transport else {}),
        ]
        failed = []
        for name, stage in stages:
            try:
                out[name] = stage()
            except Exception:
                log.exception("%s: this stage of the pass failed; the others go on", name)
                failed.append(name)
        if failed:
            out["failed"] = failed
        return out

    def game_work(self) -> list[str]:
        """The games' timed work due now (judge.scheduler)."""
        return scheduler.tick(self.sessions, self.config, self.clock.now())

    def _scrub(self) -> int:
        """Raw-mail retention (judge.retention), at most once an hour: its
        query reads the old rows, which need not be looked at every pass."""
        now = self.clock.now()
        if self._scrubbed_at is not None and (now - self._scrubbed_at).total_seconds() < 3600:
            return 0
        self._scrubbed_at = now
        return retention.scrub_due(self.sessions, self.config, now)

    def check_store(self) -> None:
        """The store takes a write now, or this raises: a database locked
        past its busy timeout, or away, stops `judge serve` at its start,
        before run_forever (exit 75, and its service manager tries again),
        where later in the loop the same fault is only waited out
        (judge.store.lock.retrying)."""
        with self.sessions.begin() as s:
            write_lock(s)
            s.execute(select(Game.id).limit(1))

    def run_forever(self) -> None:
        outbox.requeue_interrupted(self.sessions, self.clock.now(), self.config.data_dir)
        if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
            signal.signal(signal.SIGTERM, lambda *_: self.stop("SIGTERM"))
            signal.signal(signal.SIGINT, lambda *_: self.stop("SIGINT"))
        waiter = next((s for s in self.sources if hasattr(s, "wait")), None)
        # `judge deliver` stores a mail and wakes this loop (judge.wake),
        # unless it waits in IMAP IDLE and could not answer at once: then
        # nobody reads the FIFO, and deliver runs its mail itself.
        wake = self._open_wake() if waiter is None else None
        # The games' timed work (a Payola phase, a resolution) runs in a
        # thread of its own, so that mail is read and answered meanwhile.
        worker = GameWorker(self)
        worker.start()
        log.info("judge: running; polling every %s s", self.config.poll_interval)
        try:
            while not self.stopping:
                try:
                    out = self.run_once(games=False)
                    if out.get("processed"):
                        worker.wake.set()  # a mail may have made work due (PROCESS, a full game)
                except Exception:  # a database or network fault: log, wait, go on
                    log.exception("iteration failed; retrying after %s s", self.config.poll_interval)
                    out = {}
                if self._more_to_send(out):
                    continue  # a burst is being sent: the next pass at once
                if waiter is not None and not self.stopping:
                    # IMAP IDLE: back at once when new mail arrives, and
                    # within a second of a SIGTERM.
                    try:
                        waiter.wait(self.config.poll_interval, should_stop=lambda: self.stopping)
                    except Exception:  # a network fault: the next pass reconnects
                        log.exception("waiting for new mail failed")
                        self.clock.sleep(min(1.0, self.config.poll_interval))
                    continue
                waited = 0.0
                while not self.stopping and waited < self.config.poll_interval:
                    # Short naps, so that SIGTERM stops the daemon within a second.
                    nap = min(0.5, self.config.poll_interval - waited)
                    if wake is None:
                        self.clock.sleep(nap)
                    elif wake.wait(nap):
                        break  # a mail was delivered: a pass now
                    waited += nap
                    if worker.queued.is_set():
                        worker.queued.clear()
                        break  # the games' work queued mail: sent now
        finally:
            self.stopping = True
            worker.wake.set()
            worker.join()
            if wake is not None:
                self._close_wake(wake)
        log.info("judge: stopped")

    def _more_to_send(self, out: dict[str, object]) -> bool:
        """Whether the pass stopped sending with mail still due (a burst
        longer than outbox.SEND_BUDGET): asked only after a pass that sent."""
        sent = out.get("sent")
        if self.stopping or not isinstance(sent, dict) or not any(sent.values()):
            return False
        try:
            return outbox.has_due(self.sessions, self.clock.now())
        except Exception:
            return False

    def _open_wake(self) -> WakeChannel | None:
        path = wake_path(self.config.data_dir, self.config.database_url)
        try:
            return WakeChannel(path)
        except OSError as err:  # deliver then runs its mail itself: slower, nothing lost
            log.warning("judge deliver cannot wake this daemon (%s): it will run its mails itself", err)
            return None

    def _close_wake(self, wake: WakeChannel) -> None:
        """Stop being woken. A `judge deliver` that woke this loop after its
        last pass has stored a mail that nobody else will run: the mail is
        committed before the wake-up, and the wake-up before this close, so
        one more look at the stored mail, after the close, finds it. (A
        deliver that comes later finds no reader, and runs its mail itself.)"""
        wake.close()
        try:
            if self.process_pending() and self.transport:
                outbox.send_due(self.sessions, self.transport, self.clock, self.config)
        except Exception:  # stored, or queued: the next pass of a judge process runs or sends it
            log.exception("the mail delivered while stopping was not all run and answered now")

    def stop(self, why: str | None = None) -> None:
        if why and not self.stopping:
            # (A logging handler's lock is re-entrant: logging here, in the
            # signal handler, cannot deadlock the main thread.)
            log.info("judge: %s received, finishing the current pass and stopping", why)
        self.stopping = True


class GameWorker(threading.Thread):
    """`judge serve`'s thread for the games' timed work (deadlines, timers,
    reminders, daily notices), each game in a transaction of its own under
    its lock: a phase played or an assignment drawn never holds up the mail
    loop. Woken when mail was run (it may have made work due), else every
    poll interval; it tells the mail loop when it queued mail to send."""

    def __init__(self, judge: Judge) -> None:
        super().__init__(name="judge-games", daemon=True)
        self.judge = judge
        self.wake = threading.Event()
        self.queued = threading.Event()

    def run(self) -> None:
        while not self.judge.stopping:
            try:
                if self.judge.game_work():
                    self.queued.set()
            except Exception:  # a database fault: logged, tried again at the next pass
                log.exception("deadlines: this pass of the games' timed work failed")
            self.wake.wait(self.judge.config.poll_interval)
            self.wake.clear()
