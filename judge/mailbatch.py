"""A batch of stored mail run in one transaction (judge.daemon): what the
mail runner reads of the store for each mail, read once for the batch.

A backlog runs a hundred mails a transaction. For each, the runner counted
the sender's mails of the last hour (the flood cap), looked for the day's
one reply to a mail without commands, and wrote the mail's outcome: three
statements a mail, a third of all a backlog ran. Here, for a batch:

* every mail is parsed when the batch starts (parse_message is pure; the
  runner takes the parsed mail from here), so the batch's senders are known;
* the outcomes are written with one statement (executemany) before the
  commit, and before any query that reads the inbound mail (`flush`): the
  batch commits or rolls back as one transaction, as before;
* the senders' mails of the last hour, and their no-command replies of the
  last day, are read once, for all the batch's senders, at the first mail
  that needs them, and the batch's own outcomes are added as the mails run.

The counts stay exact: one process at a time runs mail (the processing
lock, held by the batch's transaction), so no processed mail appears or
changes but the batch's own. Each mail has its own `now`, so its hour
starts a little later than the first mail's: the rows near the start of the
first mail's hour are read with their times and compared mail by mail, and
a mail whose hour starts past that margin (a batch running for minutes, a
clock set back) is counted by the store as before.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import Any, Sequence

from sqlalchemy import bindparam, event, func, select
from sqlalchemy.orm import Session

from judge.config import Config
from judge.mail.inbound import InboundMail, parse_message
from judge.store.models import InboundMessage

_T = InboundMessage.__table__
_STATE = "judge.mailbatch"
NO_COMMAND = "no command"  # the reason of the mail that had the day's one reply to a mail without commands
# The rows of the first mail's hour whose times are kept: those of its first
# minutes. A batch takes well under a second a mail.
MARGIN = timedelta(minutes=10)
_CHUNK = 500  # senders per query

# The outcome of a mail, written with one prepared UPDATE (no ORM object:
# its flush before every later query cost more than a LIST mail's work).
WRITE_OUTCOME = _T.update().where(_T.c.id == bindparam("row_id")).values(
    status=bindparam("status"), reason=bindparam("reason"), sender=bindparam("sender"),
    subject=bindparam("subject"), processed_at=bindparam("processed_at"), authenticated=bindparam("authenticated"))

# Built once: they run for every mail outside a batch, and for a mail the
# batch cannot count (the index of migration 0006 serves them).
SENDER_MAILS_SINCE = select(func.count(_T.c.id)).where(
    _T.c.sender == bindparam("sender"), _T.c.status == "done", _T.c.processed_at >= bindparam("since"),
    _T.c.authenticated == bindparam("authenticated"))
ANSWERED_NO_COMMAND_SINCE = select(_T.c.id).where(
    _T.c.sender == bindparam("sender"), _T.c.processed_at >= bindparam("since"), _T.c.status == "done",
    _T.c.reason == NO_COMMAND).limit(1)

_SENDERS = bindparam("senders", expanding=True)
_DONE_AFTER = (select(_T.c.sender, _T.c.authenticated, func.count(_T.c.id))
               .where(_T.c.sender.in_(_SENDERS), _T.c.status == "done", _T.c.processed_at >= bindparam("edge"))
               .group_by(_T.c.sender, _T.c.authenticated))
_DONE_BETWEEN = select(_T.c.sender, _T.c.authenticated, _T.c.processed_at).where(
    _T.c.sender.in_(_SENDERS), _T.c.status == "done", _T.c.processed_at >= bindparam("since"),
    _T.c.processed_at < bindparam("edge"))
_LAST_NO_COMMAND = (select(_T.c.sender, func.max(_T.c.processed_at))
                    .where(_T.c.sender.in_(_SENDERS), _T.c.status == "done", _T.c.reason == NO_COMMAND,
                           _T.c.processed_at >= bindparam("since"))
                    .group_by(_T.c.sender))


class _Counts:
    """The batch's senders' mails run ("done") since `since` (the first
    counting mail's hour), by (sender, authenticated): a count of those
    from `since` + MARGIN on, the times of those before, and the times of
    the batch's own."""

    def __init__(self, session: Session, senders: Sequence[str], since: datetime) -> None:
        self.since, self.edge = since, since + MARGIN
        self.firm: Counter = Counter()
        self.times: defaultdict[tuple[str, bool], list[datetime]] = defaultdict(list)
        for chunk in _chunks(senders):
            for sender, authenticated, count in session.execute(_DONE_AFTER, {"senders": chunk, "edge": self.edge}):
                self.firm[sender, bool(authenticated)] += count
            for sender, authenticated, at in session.execute(_DONE_BETWEEN, {"senders": chunk, "since": since,
                                                                             "edge": self.edge}):
                self.times[sender, bool(authenticated)].append(at)

    def count(self, sender: str, authenticated: bool, since: datetime) -> int | None:
        if not self.since <= since <= self.edge:
            return None
        key = (sender, authenticated)
        return self.firm[key] + sum(1 for at in self.times.get(key, ()) if at >= since)

    def add(self, outcome: dict[str, Any]) -> None:
        if outcome["status"] == "done":
            self.times[outcome["sender"], bool(outcome["authenticated"])].append(outcome["processed_at"])


class _NoCommandReplies:
    """The newest no-command reply since `since` (the first asking mail's
    day) of each of the batch's senders, the batch's own included."""

    def __init__(self, session: Session, senders: Sequence[str], since: datetime) -> None:
        self.since = since
        self.last: dict[str, datetime] = {}
        for chunk in _chunks(senders):
            self.last.update(tuple(r) for r in session.execute(_LAST_NO_COMMAND, {"senders": chunk, "since": since}))

    def answered(self, sender: str, since: datetime) -> bool | None:
        if since < self.since:
            return None
        last = self.last.get(sender)
        return last is not None and last >= since

    def add(self, outcome: dict[str, Any]) -> None:
        if outcome["status"] == "done" and outcome["reason"] == NO_COMMAND:
            last = self.last.get(outcome["sender"])
            if last is None or outcome["processed_at"] > last:
                self.last[outcome["sender"]] = outcome["processed_at"]


class _Batch:
    def __init__(self, config: Config, rows: Sequence[Any]) -> None:
        self.mails: dict[int, InboundMail] = {
            row.id: parse_message(row.raw, own_addresses=[config.address],
                                  trusted_authserv_ids=config.trusted_authserv_ids) for row in rows}
        self.senders = sorted({m.sender for m in self.mails.values() if m.sender})
        self.known = frozenset(self.senders)
        self.outcomes: list[dict[str, Any]] = []  # not yet written
        self.counts: _Counts | None = None
        self.replies: _NoCommandReplies | None = None


def start(session: Session, config: Config, rows: Sequence[Any]) -> None:
    """The mails `rows` (each with .id and .raw) run next in this session's
    transaction."""
    session.info[_STATE] = _Batch(config, rows)


def parsed(session: Session, row_id: int) -> InboundMail | None:
    """The mail of row `row_id` as the batch parsed it (None outside a batch)."""
    batch = session.info.get(_STATE)
    return batch.mails.pop(row_id, None) if batch is not None else None


def write_outcome(session: Session, outcome: dict[str, Any]) -> None:
    """A run mail's outcome (WRITE_OUTCOME's values): written now outside a
    batch, else with the batch's others at the latest before the commit."""
    batch = session.info.get(_STATE)
    if batch is None:
        session.connection().execute(WRITE_OUTCOME, outcome)
        return
    batch.outcomes.append(outcome)
    if outcome["sender"] in batch.known:
        for kept in (batch.counts, batch.replies):
            if kept is not None:
                kept.add(outcome)


def flush(session: Session) -> None:
    """Write the outcomes not yet written: before a query reads inbound mail."""
    batch = session.info.get(_STATE)
    if batch is not None and batch.outcomes:
        outcomes, batch.outcomes = batch.outcomes, []
        session.connection().execute(WRITE_OUTCOME, outcomes)


def sender_mails_since(session: Session, sender: str, since: datetime, authenticated: bool) -> int:
    """How many mails of `sender`, with a right password or without one,
    were run ("done") since `since`."""
    batch = session.info.get(_STATE)
    if batch is not None and sender in batch.known:
        if batch.counts is None:
            flush(session)  # what ran before is in the store, what runs next is added
            batch.counts = _Counts(session, batch.senders, since)
        count = batch.counts.count(sender, authenticated, since)
        if count is not None:
            return count
    flush(session)
    return session.connection().scalar(SENDER_MAILS_SINCE, {"sender": sender, "since": since,
                                                            "authenticated": authenticated})


def answered_no_command_since(session: Session, sender: str, since: datetime) -> bool:
    """Whether `sender` had a reply to a mail without commands since `since`."""
    batch = session.info.get(_STATE)
    if batch is not None and sender in batch.known:
        if batch.replies is None:
            flush(session)
            batch.replies = _NoCommandReplies(session, batch.senders, since)
        answered = batch.replies.answered(sender, since)
        if answered is not None:
            return answered
    flush(session)
    return session.connection().scalar(ANSWERED_NO_COMMAND_SINCE, {"sender": sender, "since": since}) is not None


def _chunks(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i:i + _CHUNK] for i in range(0, len(items), _CHUNK)]


# -- the transaction's ends ---------------------------------------------


@event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    flush(session)


@event.listens_for(Session, "after_transaction_end")
def _transaction_ended(session: Session, transaction) -> None:
    if transaction.parent is None:  # committed (written) or rolled back (forgotten)
        session.info.pop(_STATE, None)
