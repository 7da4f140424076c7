"""The store keeps every mail: raw before processing, once per Message-ID,
outbox rows before any transport; on SQLite and PostgreSQL."""

from __future__ import annotations

import socket

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select

from judge import commands
from judge.daemon import Judge
from judge.store.db import make_engine, upgrade
from judge.store.models import Base, Event, InboundMessage, OutboxMessage
from judge.syntax import nodes
from judge.transports.smtp import SmtpSettings, SmtpTransport
from tests.harness import make_mail


def test_migrations_match_models(database_url):
    engine = make_engine(database_url)
    upgrade(engine)
    upgrade(engine)  # idempotent
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


@pytest.mark.postgresql
def test_outbox_mails_are_compressed_with_lz4_where_postgresql_has_it(postgres_url):
    """Migration 0018: pglz took more of a deadline burst's time than the
    store's own work (issue 29)."""
    from sqlalchemy import text

    engine = make_engine(postgres_url)
    upgrade(engine)
    with engine.connect() as conn:
        has_lz4 = conn.execute(text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                                    "WHERE name = 'default_toast_compression'")).scalar()
        method = conn.execute(text("SELECT attcompression FROM pg_attribute "
                                   "WHERE attrelid = 'outbox'::regclass AND attname = 'raw'")).scalar()
    engine.dispose()
    if not has_lz4:
        pytest.skip("this PostgreSQL has no lz4")
    assert method == "l"


def test_duplicate_message_id_is_processed_once(harness):
    raw = make_mail("ann@example.test", "LIST", message_id="<same@players.test>")
    harness.inbox.add(raw)
    harness.inbox.add(raw)  # the MTA delivered it twice
    harness.run()
    assert harness.judge.receive(raw, "deliver") is None  # and once more by pipe
    harness.run()
    with harness.judge.sessions() as s:
        assert len(s.scalars(select(InboundMessage)).all()) == 1
        assert len(s.scalars(select(OutboxMessage)).all()) == 1
    assert len(harness.sent_to("ann@example.test")) == 1


def test_a_bug_quarantines_the_mail_and_the_daemon_goes_on(harness, monkeypatch):
    def broken(ctx, node):
        raise RuntimeError("boom")

    monkeypatch.setitem(commands.HANDLERS, nodes.Help, broken)
    # One batch: the mails before and after the broken one are done, once.
    harness.send("cat@example.test", "LIST")
    harness.send("ann@example.test", "HELP", subject="help me")
    harness.send("bob@example.test", "LIST")
    harness.run()
    with harness.judge.sessions() as s:
        rows = {r.sender: r for r in s.scalars(select(InboundMessage))}
        assert rows["ann@example.test"].status == "quarantined"
        assert "RuntimeError: boom" in rows["ann@example.test"].reason
        assert b"HELP" in rows["ann@example.test"].raw
        assert rows["bob@example.test"].status == "done" and rows["cat@example.test"].status == "done"
        # Nothing of the rolled-back batch is left behind: one reply and one
        # "inbound" event per mail.
        assert sorted(r.recipients[0] for r in s.scalars(select(OutboxMessage))) == [
            "ann@example.test", "bob@example.test", "cat@example.test"]
        inbound_events = s.scalars(select(Event.inbound_id).where(Event.kind == "inbound")).all()
        assert sorted(inbound_events) == sorted(r.id for r in rows.values() if r.sender != "ann@example.test")
    apology = harness.body(harness.last_to("ann@example.test"))
    assert "internal" in apology and "kept" in apology
    assert "There are no games yet" in harness.body(harness.last_to("bob@example.test"))


class Crash(BaseException):
    """Stands for the process dying: not caught by the daemon's handlers."""


def test_a_crash_while_processing_loses_nothing_and_does_nothing_twice(harness, monkeypatch):
    import judge.daemon as daemon_module

    harness.send("gm@example.test", "CREATE ?g1 pw\nSIGNOFF")
    real = daemon_module.process_inbound

    def crash_after_work(session, config, now, row):
        real(session, config, now, row)  # the work is done, the reply queued...
        raise Crash()  # ...and the process dies before the commit

    monkeypatch.setattr(daemon_module, "process_inbound", crash_after_work)
    with pytest.raises(Crash):
        harness.run()
    with harness.judge.sessions() as s:
        row = s.scalars(select(InboundMessage)).one()
        assert row.status == "new"  # stored raw before processing; effects rolled back
        assert s.scalars(select(OutboxMessage)).all() == []
    monkeypatch.setattr(daemon_module, "process_inbound", real)
    restarted = Judge(config=harness.config, sessions=harness.judge.sessions, clock=harness.clock,
                      sources=harness.judge.sources, transport=harness.judge.transport)
    restarted.run_once()
    restarted.run_once()
    with harness.judge.sessions() as s:
        assert s.scalars(select(InboundMessage)).one().status == "done"
        assert len(s.scalars(select(OutboxMessage)).all()) == 1
    assert "Done: game ?g1 created" in harness.body(harness.last_to("gm@example.test"))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_outbox_row_exists_before_sending_and_keeps_the_error(harness):
    harness.judge.transport = SmtpTransport(SmtpSettings(host="127.0.0.1", port=_closed_port(), timeout=2))
    harness.mail("ann@example.test", "LIST")
    with harness.judge.sessions() as s:
        row = s.scalars(select(OutboxMessage)).one()
        assert row.status == "queued" and row.attempts == 1 and row.last_error
        assert row.next_attempt_at > harness.clock.now()
        assert b"Auto-Submitted: auto-generated" in row.raw
    for _ in range(harness.config.max_attempts):
        harness.clock.advance(days=3)
        harness.run()
    with harness.judge.sessions() as s:
        row = s.scalars(select(OutboxMessage)).one()
        assert row.status == "failed" and row.attempts == harness.config.max_attempts
        assert row.last_error


def test_the_source_watermark_commits_with_the_raw_mail(harness):
    """A source's progress (its watermark) is written in the transaction that
    stores the raw mail: if it fails, the mail is not stored either, so the
    mail is fetched again and never skipped."""
    raw = make_mail("ann@example.test", "HELP", message_id="<atomic@players.test>")
    seen = []

    def progress(session):
        seen.append(session)
        raise RuntimeError("watermark write failed")

    with pytest.raises(RuntimeError):
        harness.judge.receive(raw, "test-source", progress=progress)
    with harness.judge.sessions() as s:
        assert s.scalars(select(InboundMessage)).all() == []
    assert harness.judge.receive(raw, "test-source", progress=lambda s: seen.append(s)) is not None
    assert len(seen) == 2


def test_one_process_at_a_time_runs_mail(harness):
    """A second judge process (another daemon, or `judge deliver` beside the
    daemon) never runs mail while one is at it: otherwise both could answer
    the same mail, or take one sender's mails in the wrong order."""
    import threading

    from sqlalchemy import update

    from judge.app import build_judge
    from judge.daemon import processing_lock

    for who in ("ann", "bob", "cat"):
        harness.send(f"{who}@example.test", "LIST")
    assert harness.judge.poll_sources() == 3
    other = build_judge(harness.config, harness.clock, with_io=False)
    result: list[int] = []
    with harness.judge.sessions() as s:
        assert processing_lock(s)
        # The other process tries now: it must not run the mails (PostgreSQL:
        # it gives up at once; SQLite: it waits for the lock).
        worker = threading.Thread(target=lambda: result.append(other.process_pending()))
        worker.start()
        worker.join(1.0)
        # The lock holder deals with the mails and commits.
        s.execute(update(InboundMessage).values(status="done"))
        s.commit()
    worker.join(30)
    assert result == [0]
    with harness.judge.sessions() as s:
        assert s.scalars(select(OutboxMessage)).all() == []
    # Once nobody holds it, the other process runs mail as usual.
    harness.send("dan@example.test", "LIST")
    harness.judge.poll_sources()
    assert other.process_pending() == 1


def test_two_judges_on_postgresql_answer_every_mail_once(postgres_url, tmp_path):
    """PostgreSQL is the way to run several judge processes: each stores,
    runs and sends, and every mail still gets exactly one reply."""
    import collections
    import threading

    from judge.app import build_judge
    from tests.harness import Harness

    h = Harness(tmp_path / "data", postgres_url)
    try:
        for n in range(300):
            h.send(f"p{n % 40}@players.test", "LIST" if n % 3 else "HELP", message_id=f"<two{n}@players.test>")
        other = build_judge(h.config, h.clock)  # its own engine, Maildir source and transport
        errors: list[BaseException] = []

        def work(judge):
            try:
                while any(judge.run_once()[k] for k in ("stored", "processed")):
                    pass
            except BaseException as err:  # noqa: BLE001 - reported below
                errors.append(err)

        threads = [threading.Thread(target=work, args=(j,)) for j in (h.judge, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        h.run()
        with h.judge.sessions() as s:
            statuses = collections.Counter(s.scalars(select(InboundMessage.status)))
            replies = collections.Counter(s.scalars(select(OutboxMessage.inbound_id)))
        assert statuses == {"done": 300}
        assert len(replies) == 300 and set(replies.values()) == {1}
    finally:
        h.close()
