"""/metrics in the Prometheus text format (prometheus_client).

Every figure is read from the store when Prometheus scrapes, by a custom
collector: the mails are stored, run and sent by other processes (`judge
serve`, `judge deliver`), so counters kept in this process's memory would be
wrong; the store's rows are right whichever process wrote them, and after
any restart. Only counts and durations: no address, name or subject.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from sqlalchemy import case, extract, func, literal_column, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from judge.store.models import Game, InboundMessage, OutboxMessage, SourceState

# Seconds from a mail's storing to its outcome; from a game's deadline to its resolution.
MAIL_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 3600.0)
RESOLUTION_BUCKETS = (1.0, 10.0, 60.0, 300.0, 900.0, 3600.0, 6 * 3600.0, 86400.0)


def _seconds_between(session: Session, start, end):
    """end - start in seconds, in the store's own SQL (the rows stay in the database)."""
    if session.get_bind().dialect.name == "sqlite":
        return (func.julianday(end) - func.julianday(start)) * literal_column("86400.0")
    return extract("epoch", end - start)


def _histogram(session: Session, name: str, doc: str, seconds, where, buckets) -> HistogramMetricFamily:
    columns = [func.sum(case((seconds <= b, 1), else_=0)) for b in buckets]
    row = session.execute(select(*columns, func.count(), func.sum(case((seconds > 0, seconds), else_=0)))
                          .where(*where)).one()
    counts, total, summed = row[:len(buckets)], row[len(buckets)], row[len(buckets) + 1]
    cumulative = [(repr(b), int(c or 0)) for b, c in zip(buckets, counts)] + [("+Inf", int(total or 0))]
    return HistogramMetricFamily(name, doc, buckets=cumulative, sum_value=float(summed or 0.0))


def _counts(name: str, doc: str, label: str, counts: dict[str, int], known=()) -> GaugeMetricFamily:
    """A gauge of counts by one label, its values sorted; every `known`
    value is shown, 0 when none counts (a series that comes and goes is
    hard to graph or alert on)."""
    g = GaugeMetricFamily(name, doc, labels=[label])
    for value in sorted({*known, *counts}):
        g.add_metric([value], counts.get(value, 0))
    return g


class StoreCollector:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def collect(self):
        with self.sessions() as s:
            yield from self._mails_in(s)
            yield from self._mails_out(s)
            yield from self._games(s)
            yield from self._sources(s)

    def _mails_in(self, s: Session):
        by_status = dict(s.execute(select(InboundMessage.status, func.count()).group_by(InboundMessage.status)).all())
        yield CounterMetricFamily("judge_mails_received", "Mails stored by the judge, from every source.",
                                  value=sum(by_status.values()))
        yield _counts("judge_inbound_mails", "Stored mails by status: new (waiting to be run), done, ignored (no "
                      "reply due), quarantined (a bug met them).", "status", by_status,
                      ("new", "done", "ignored", "quarantined"))
        seconds = _seconds_between(s, InboundMessage.received_at, InboundMessage.processed_at)
        yield _histogram(s, "judge_mail_processing_seconds", "From a mail's storing to its outcome (its reply "
                         "queued), over every mail run.", seconds,
                         (InboundMessage.processed_at.is_not(None),), MAIL_BUCKETS)

    def _mails_out(self, s: Session):
        rows = s.execute(select(OutboxMessage.status, OutboxMessage.kind, func.count())
                         .group_by(OutboxMessage.status, OutboxMessage.kind)).all()
        sent = CounterMetricFamily("judge_mails_sent", "Mails the outbox sent, by kind (reply, result, notice...).",
                                   labels=["kind"])
        waiting: dict[str, int] = {"queued": 0, "sending": 0, "failed": 0, "unconfirmed": 0}
        sent_by_kind: dict[str, int] = {}
        for status, kind, n in rows:
            if status == "sent":
                sent_by_kind[kind] = sent_by_kind.get(kind, 0) + n
            else:
                waiting[status] = waiting.get(status, 0) + n
        for kind in sorted(sent_by_kind):
            sent.add_metric([kind], sent_by_kind[kind])
        yield sent
        yield _counts("judge_outbox_mails", "Outbox mails not sent, by status: queued, sending, failed (gave up: "
                      "`judge outbox retry`), unconfirmed (the server may have it).", "status", waiting)

    def _games(self, s: Session):
        by_state = dict(s.execute(select(Game.state, func.count()).group_by(Game.state)).all())
        yield _counts("judge_games", "Games by state (stuck: a bug met the game's work).", "state", by_state,
                      ("forming", "bidding", "resolved", "stuck"))
        seconds = _seconds_between(s, Game.deadline, Game.resolved_at)
        yield _histogram(s, "judge_resolution_delay_seconds", "From a game's deadline to its resolution, over "
                         "the games resolved that had a deadline.", seconds,
                         (Game.resolved_at.is_not(None), Game.deadline.is_not(None)), RESOLUTION_BUCKETS)

    def _sources(self, s: Session):
        g = GaugeMetricFamily("judge_source_last_error_timestamp_seconds", "When an IMAP or forum source last "
                              "failed (Unix time; it retries by itself).", labels=["source"])
        for name, at in s.execute(select(SourceState.source, SourceState.last_error_at)
                                  .where(SourceState.last_error_at.is_not(None))):
            g.add_metric([name], at.timestamp())
        yield g


def registry_of(request: Request) -> CollectorRegistry:
    state = request.app.state
    if getattr(state, "metrics_registry", None) is None:
        registry = CollectorRegistry(auto_describe=False)  # no store read at registering
        registry.register(StoreCollector(state.sessions))
        state.metrics_registry = registry
    return state.metrics_registry


def endpoint(request: Request) -> Response:
    return Response(generate_latest(registry_of(request)), media_type=CONTENT_TYPE_LATEST)
