"""The outbox's claims (issue 24): a row being sent names its sender and
holds a lease; only a sender that is gone loses its rows, and what it left
is settled by its journal where that can be trusted, else left
"unconfirmed" for the operator, the moderators told once a day.

The races of real judge processes are in tests/test_outbox_two_judges.py.
"""

from __future__ import annotations

import collections
import email
import email.policy
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select, update

from judge import outbox
from judge import outbox_claims as claims
from judge.cli import main
from judge.store.models import OutboxMessage
from judge.transports.base import Transport
from judge.transports.smtp import SmtpTransport
from tests.harness import Harness


def queue(h: Harness, n: int, prefix: str = "p") -> list[int]:
    with h.judge.sessions.begin() as s:
        return [outbox.queue_mail(s, h.config, h.clock.now(), to=[f"{prefix}{i}@players.test"], subject=f"mail {i}",
                                  body=f"mail number {i}\n", kind="reply") for i in range(n)]


def rows(h: Harness) -> dict[int, OutboxMessage]:
    with h.judge.sessions() as s:
        return {r.id: r for r in s.scalars(select(OutboxMessage).order_by(OutboxMessage.id))}


def set_rows(h: Harness, ids, **values) -> None:
    with h.judge.sessions.begin() as s:
        s.execute(update(OutboxMessage).where(OutboxMessage.id.in_(list(ids))).values(**values))


def message_ids(server) -> collections.Counter:
    return collections.Counter(str(email.message_from_bytes(m.raw, policy=email.policy.default)["Message-ID"])
                               for m in list(server.messages))


def identity_of(pid: int) -> claims.Identity:
    """What a judge process with this pid names itself (outbox_claims.me())."""
    fields = claims._stat_fields(pid)
    return claims.Identity(claims.me().host, pid, f"{claims._kernel()}.{fields[19]}")


@pytest.fixture
def other_process():
    """Another process of this machine, which the test may kill."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


linux = pytest.mark.skipif(claims._kernel() is None, reason="needs /proc")


def test_a_row_being_sent_names_its_sender_and_holds_a_lease(harness):
    h = harness
    ids = queue(h, 3)
    seen = []

    class Watching(Transport):
        name = "watching"

        def send(self, mail, commit_point):
            with h.judge.sessions() as s:
                row = s.scalars(select(OutboxMessage).where(OutboxMessage.message_id == mail.message_id)).one()
                seen.append((row.status, row.owner, row.lease_until))
            commit_point()
            with h.judge.sessions() as s:
                seen.append(s.scalar(select(OutboxMessage.status).where(OutboxMessage.message_id == mail.message_id)))

    assert outbox.send_due(h.judge.sessions, Watching(), h.clock, h.config) == {"sent": 3, "retry": 0, "failed": 0}
    me = str(claims.me())
    assert me.split(":")[1] == str(os.getpid()) and me.startswith(claims.me().host + ":")
    claimed = seen[0::2]
    # Claimed ("sending"), or with its commit point recorded already: the
    # first commit point records the rows that come next as well.
    assert claimed[0][:2] == ("sending", me)
    assert [c[:2] for c in claimed[1:]] == [("data_sent", me)] * 2
    assert all(c[2] > h.clock.now() for c in claimed)  # a lease into the future
    assert seen[1::2] == ["data_sent"] * 3  # the commit point, before the step that hands the mail over
    assert {r.status for r in rows(h).values()} == {"sent"} and set(rows(h)) == set(ids)


@linux
def test_a_live_senders_rows_are_left_alone_and_a_dead_ones_taken_at_once(harness, other_process):
    """A starting judge (and every pass) takes over only the rows of a
    sender that is gone: here another process of this machine, alive, then
    killed: its rows are settled at once, without waiting for its lease."""
    h = harness
    ids = queue(h, 3)
    owner = identity_of(other_process.pid)
    set_rows(h, ids[:2], status="sending", owner=str(owner), lease_until=h.clock.now() + timedelta(seconds=100))
    set_rows(h, ids[2:], status="data_sent", owner=str(owner), lease_until=h.clock.now() + timedelta(seconds=100))

    assert outbox.requeue_interrupted(h.judge.sessions, h.clock.now(), h.config.data_dir) == 0
    h.run()  # a pass sends what is due: not those
    assert [r.status for r in rows(h).values()] == ["sending", "sending", "data_sent"]

    other_process.kill()
    other_process.wait()
    h.run()
    # The dead sender's rows that never reached their commit point went out
    # now; the one past it may have reached the server: unconfirmed.
    assert [r.status for r in rows(h).values()] == ["sent", "sent", "unconfirmed"]
    assert "may have it" in rows(h)[ids[2]].last_error
    assert len(h.sent()) == 2


def test_a_sender_of_another_host_loses_its_rows_when_its_lease_runs_out(harness):
    h = harness
    ids = queue(h, 2)
    elsewhere = "judge2.example.net:4242:r0123456789abcdef"
    lease = h.clock.now() + outbox.LEASE
    set_rows(h, ids[:1], status="sending", owner=elsewhere, lease_until=lease)
    set_rows(h, ids[1:], status="data_sent", owner=elsewhere, lease_until=lease)
    assert outbox.recover(h.judge.sessions, h.clock.now() + outbox.LEASE / 2, h.config.data_dir) == {}
    assert outbox.recover(h.judge.sessions, lease + timedelta(seconds=1), h.config.data_dir) == \
        {"queued": 1, "unconfirmed": 1}
    first, second = rows(h).values()
    assert (first.status, first.owner, first.lease_until) == ("queued", None, None)
    assert second.status == "unconfirmed" and "may have it" in second.last_error


@linux
def test_a_dead_senders_journal_settles_what_it_left(harness, other_process):
    """Its journal says which mails passed their commit point (A), and what
    the server answered (S: accepted, R: refused). Only a mail with A and
    no answer is truly unknown."""
    h = harness
    ids = queue(h, 5)
    owner = identity_of(other_process.pid)
    other_process.kill()
    other_process.wait()
    mids = {i: r.message_id for i, r in rows(h).items()}
    set_rows(h, ids[:4], status="data_sent", owner=str(owner), lease_until=h.clock.now() + outbox.LEASE)
    set_rows(h, ids[4:], status="sending", owner=str(owner), lease_until=h.clock.now() + outbox.LEASE)
    journal = h.config.data_dir / claims.JOURNALS / owner.journal_name(outbox._store(h.judge.sessions))
    journal.parent.mkdir(parents=True, exist_ok=True)
    a, b, c, d, _ = ids
    journal.write_text(f"A {mids[a]}\nA {mids[b]}\nA {mids[d]}\nS {mids[a]}\nR {mids[d]}\n")

    counts = outbox.requeue_interrupted(h.judge.sessions, h.clock.now(), h.config.data_dir)
    assert counts == 3
    assert {i: r.status for i, r in rows(h).items()} == \
        {a: "sent", b: "unconfirmed", c: "queued", d: "queued", ids[4]: "queued"}
    assert not journal.exists()  # read, and no longer needed


def test_a_sender_killed_inside_its_commit_point_sends_the_mail_once_after_all(harness, smtp_server, monkeypatch):
    """The kill lands after the commit point is in the store and before the
    journal's line (the store's commit waits for the disk: the widest
    window): the dot never left, and the journal says so, so the mails go
    out at the next start instead of waiting for the operator."""
    h = harness
    transport = SmtpTransport(smtp_server.settings())
    ids = queue(h, 3)
    write = claims.Journal.write

    def dies_before_the_line(self, mark, message_ids):
        if mark == "A":
            raise SystemExit("SIGKILL")
        write(self, mark, message_ids)

    monkeypatch.setattr(claims.Journal, "write", dies_before_the_line)
    with pytest.raises(SystemExit):
        outbox.send_due(h.judge.sessions, transport, h.clock, h.config)
    transport.close()
    assert {r.status for r in rows(h).values()} == {"data_sent"} and smtp_server.messages == []
    monkeypatch.setattr(claims.Journal, "write", write)

    outbox.requeue_interrupted(h.judge.sessions, h.clock.now(), h.config.data_dir)  # the next start
    outbox.send_due(h.judge.sessions, transport, h.clock, h.config)
    transport.close()
    assert {r.status for r in rows(h).values()} == {"sent"}
    assert message_ids(smtp_server) == collections.Counter({r.message_id: 1 for r in rows(h).values()})
    assert set(rows(h)) == set(ids)


def test_the_moderators_hear_of_unconfirmed_mail_at_once_then_once_a_day(tmp_path, database_url):
    h = Harness(tmp_path / "data", database_url, moderators=["mod@example.test", "vera@example.test"])
    try:
        ids = queue(h, 3)
        set_rows(h, ids[:2], status="unconfirmed", last_error=outbox.UNKNOWN)
        h.run()
        (notice,) = h.sent_to("mod@example.test")
        assert "2 mails may or may not have reached the mail server" in str(notice["Subject"])
        text = h.body(notice)
        assert f"#{ids[0]}" in text and f"#{ids[1]}" in text and "judge outbox confirm ID" in text
        assert "vera@example.test" in str(notice["To"])
        h.run()
        h.clock.advance(hours=23)
        h.run()
        assert len(h.sent_to("mod@example.test")) == 1  # not again within the day

        set_rows(h, ids[2:], status="unconfirmed", last_error=outbox.UNKNOWN)
        h.run()  # a new one: told at once, with the others
        assert len(h.sent_to("mod@example.test")) == 2
        assert "1 is new since the last notice" in h.body(h.sent_to("mod@example.test")[-1])

        h.clock.advance(days=1, minutes=1)
        with h.judge.sessions.begin() as s:
            for row_id in ids:
                assert outbox.confirm(s, row_id, h.clock.now()) is None
        h.run()
        assert len(h.sent_to("mod@example.test")) == 2  # nothing is left to tell
        assert {rows(h)[i].status for i in ids} == {"sent"}
    finally:
        h.close()


def test_without_moderators_the_log_says_it_daily(harness, caplog):
    h = harness
    ids = queue(h, 1)
    set_rows(h, ids, status="unconfirmed", last_error=outbox.UNKNOWN)
    h.run()
    h.run()
    warned = [r for r in caplog.records if "may or may not have reached the server" in r.getMessage()]
    assert len(warned) == 1 and f"#{ids[0]}" in warned[0].getMessage()


def test_judge_outbox_confirm_marks_an_unconfirmed_mail_sent(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    ids = queue(h, 2)
    set_rows(h, ids[:1], status="unconfirmed", last_error=outbox.UNKNOWN)
    h.close()
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                      f'data_dir = "{tmp_path / "data"}"\n')
    runner = CliRunner()
    listed = runner.invoke(main, ["-c", str(config), "outbox"]).output
    assert f"#{ids[0]:<6} unconfirmed" in listed and "judge outbox confirm ID" in listed
    assert listed.count("<judge.") == 1  # the unconfirmed one's Message-ID, to look for in the server's log
    done = runner.invoke(main, ["-c", str(config), "outbox", "confirm", str(ids[0]), str(ids[1])])
    assert done.exit_code == 1
    assert f"#{ids[0]}: marked sent" in done.output and f"#{ids[1]}: queued, not unconfirmed" in done.output
    listed = json.loads(runner.invoke(main, ["-c", str(config), "outbox", "--all", "--format", "json"]).output)
    assert [r["status"] for r in listed] == ["sent", "queued"]


def test_a_burst_goes_out_in_one_pass(harness):
    """No cap of 100 mails a pass, one pass per poll interval: a deadline's
    burst goes out at once."""
    queue(harness, 250)
    assert harness.run()["sent"] == {"sent": 250, "retry": 0, "failed": 0}
    assert len(harness.sent()) == 250


def test_retry_refuses_a_mail_being_sent(harness):
    ids = queue(harness, 1)
    set_rows(harness, ids, status="data_sent", owner=str(claims.me()))
    with harness.judge.sessions.begin() as s:
        assert "being sent now" in outbox.retry(s, ids[0], harness.clock.now())


def test_journal_is_emptied_when_nothing_is_held(harness):
    queue(harness, 5)
    harness.run()
    store = outbox._store(harness.judge.sessions)
    journal = claims.journal(harness.config.data_dir, store)
    assert journal.path.exists() and journal.path.stat().st_size == 0
    assert claims.HELD.idle(store)


def test_identity_parses_back(tmp_path: Path):
    me = claims.me()
    assert claims.parse(str(me)) == me
    assert claims.parse(None) is None and claims.parse("nonsense") is None
    assert not claims.certainly_dead(me)  # this process's claims are judged by what it holds


def test_a_bug_past_the_commit_point_leaves_the_mail_unconfirmed_not_failed(harness):
    """The transport raised something unexpected after the step that may
    have handed the mail over: it may be at the server, so it is never
    sent again by itself (the old rule, kept)."""
    ids = queue(harness, 2)

    class BreaksAfterTheDot(Transport):
        name = "breaks"

        def send(self, mail, commit_point):
            commit_point()
            if mail.recipients == ("p0@players.test",):
                raise ValueError("a bug after the dot")

    counts = outbox.send_due(harness.judge.sessions, BreaksAfterTheDot(), harness.clock, harness.config)
    assert counts == {"sent": 1, "retry": 0, "failed": 1}
    first, second = (rows(harness)[i] for i in ids)
    assert (first.status, second.status) == ("unconfirmed", "sent")
    assert "a bug after the dot" in first.last_error


def test_a_pass_that_stops_sending_with_mail_due_is_followed_at_once(harness, monkeypatch):
    """A burst longer than a pass may send (SEND_BUDGET) is not left to the
    next poll: the daemon's loop comes back at once while mail is due."""

    class Ticking(type(harness.clock)):
        def now(self):  # every look at the clock takes a second
            return self.advance(seconds=1)

    harness.judge.clock = clock = Ticking(harness.clock.now())
    monkeypatch.setattr(outbox, "SEND_BUDGET", timedelta(seconds=0))
    monkeypatch.setattr(outbox, "CLAIM", 10)
    queue(harness, 25)
    clock.advance(seconds=5)  # the queued mails are due
    out = harness.run()
    assert out["sent"]["sent"] == 10  # one batch, then the budget is spent
    assert harness.judge._more_to_send(out) is True
    while harness.judge._more_to_send(out):
        out = harness.run()
    assert {r.status for r in rows(harness).values()} == {"sent"}
    assert harness.judge._more_to_send(out) is False
