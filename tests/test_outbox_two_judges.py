"""Two real judge processes (`judge serve`) on one store, sending to one
real SMTP server (aiosmtpd in this process), on PostgreSQL and on one
SQLite file (issue 24, "Outbox claims with an owner and a lease"):

- a second daemon starts while the first is sending a burst: it must not
  take the first one's rows (a judge used to requeue every row "sending" at
  its start: 37 of 40 mails reached the server twice);
- of two daemons sending a burst, one is killed with SIGKILL and started
  again: every mail reaches the server exactly once, or is "unconfirmed"
  (the server may have it), never a Message-ID twice.

The server answers each mail slowly (SLOW seconds after it has it), as a
server that writes each mail to disk does, so that the sending lasts.
"""

from __future__ import annotations

import asyncio
import collections
import email
import email.policy
import mailbox
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests import smtp_server
from tests.harness import make_mail
from tests.smtp_server import SmtpTestServer

JUDGE_ADDRESS = "judge@example.test"
READY = b"judge: sending mail through"
SLOW = 0.05


def judge_command() -> list[str]:
    exe = Path(sys.executable).with_name("judge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "judge"]


class SlowToAnswer(smtp_server._Handler):
    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        reply = await super().handle_DATA(server, session, envelope)
        await asyncio.sleep(SLOW)
        return reply


class Rig:
    """A config on `database_url`, an inbox of `mails` mails (each gets one
    reply), and the judge processes started on it."""

    def __init__(self, tmp_path: Path, database_url: str, smtp_port: int, mails: int) -> None:
        self.data = tmp_path / "data"
        self.database_url = database_url
        self.config = tmp_path / "judge.toml"
        self.config.write_text(f"""
[judge]
address = "{JUDGE_ADDRESS}"
data_dir = "{self.data}"
database = "{database_url}"
poll_interval = 0.2
password_cost = 4

[inbox]
type = "maildir"
path = "inbox"

[outbox]
transport = "smtp"
max_attempts = 1000
retry_seconds = 0.2

[smtp]
host = "127.0.0.1"
port = {smtp_port}
security = "none"
timeout = 5
""")
        self.log = tmp_path / "judge.log"
        self.log.write_bytes(b"")
        self.started = 0
        self.procs: list[subprocess.Popen] = []
        self.data.mkdir(parents=True)
        inbox = mailbox.Maildir(self.data / "inbox", create=True)
        for i in range(mails):
            inbox.add(make_mail(f"p{i}@players.test", "LIST" if i % 2 else "HELP", message_id=f"<two{i}@players.test>"))
        self.engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))

    def start(self) -> subprocess.Popen:
        with self.log.open("ab") as out:
            proc = subprocess.Popen([*judge_command(), "-c", str(self.config), "serve"], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.procs.append(proc)
        self.started += 1
        deadline = time.monotonic() + 60
        while self.log.read_bytes().count(READY) < self.started:
            assert time.monotonic() < deadline, self.log.read_text()[-3000:]
            assert proc.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.01)
        return proc

    def statuses(self) -> collections.Counter:
        try:
            with self.engine.connect() as c:
                return collections.Counter({status: n for status, n in
                                            c.execute(text("SELECT status, count(*) FROM outbox GROUP BY status"))})
        except Exception:  # noqa: BLE001 - the schema may not be made yet
            return collections.Counter()

    def rows(self) -> list[tuple[str, str]]:
        with self.engine.connect() as c:
            return [tuple(r) for r in c.execute(text("SELECT message_id, status FROM outbox"))]

    def wait(self, done, what: str, timeout: float = 180) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"{what}: {self.statuses()}\n{self.log.read_text()[-3000:]}"
            for proc in self.procs:
                assert proc.returncode is not None or proc.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.05)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.engine.dispose()


def received(server: SmtpTestServer) -> collections.Counter:
    return collections.Counter(str(email.message_from_bytes(m.raw, policy=email.policy.default)["Message-ID"]).strip()
                               for m in list(server.messages))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'judge.sqlite3'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def slow_server(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(smtp_server, "_Handler", SlowToAnswer)
    server = SmtpTestServer(mode="plain").start()
    yield server
    server.stop()


@pytest.mark.slow
def test_a_second_daemon_starting_while_the_first_sends_sends_nothing_twice(tmp_path, store_url, slow_server):
    mails = 120
    rig = Rig(tmp_path, store_url, slow_server.port, mails)
    try:
        rig.start()
        rig.wait(lambda: len(slow_server.messages) >= 5, "the first daemon sends")
        rig.start()  # ... and a second one starts while it does
        assert rig.statuses()["sent"] < mails, "the burst was over before the second daemon started"
        rig.wait(lambda: rig.statuses()["sent"] == mails, "every reply sent")
    finally:
        rig.stop()
    got = received(slow_server)
    twice = {m: n for m, n in got.items() if n > 1}
    assert twice == {}, f"{len(twice)} of {mails} mails reached the server more than once"
    assert set(got) == {m for m, _ in rig.rows()} and len(got) == mails


@pytest.mark.slow
def test_a_sender_killed_mid_burst_and_started_again_sends_each_mail_once(tmp_path, store_url, slow_server):
    mails = 160
    rig = Rig(tmp_path, store_url, slow_server.port, mails)
    try:
        first = rig.start()
        rig.start()  # a second daemon, sending beside it
        rig.wait(lambda: len(slow_server.messages) >= 20, "both daemons send")
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        rig.start()  # the killed one, again
        settled = {"sent", "unconfirmed"}
        rig.wait(lambda: sum(rig.statuses()[s] for s in settled) == mails, "every reply sent or unconfirmed")
    finally:
        rig.stop()
    got = received(slow_server)
    rows = rig.rows()
    twice = {m: n for m, n in got.items() if n > 1}
    assert twice == {}, f"{len(twice)} mails reached the server more than once"
    assert {s for _, s in rows} <= {"sent", "unconfirmed"}
    assert {m for m, s in rows if s == "sent"} <= set(got)  # a sent mail is at the server
    assert set(got) <= {m for m, _ in rows}
    unconfirmed = [m for m, s in rows if s == "unconfirmed"]
    print(f"unconfirmed after the kill: {len(unconfirmed)}, of which at the server: "
          f"{sum(m in got for m in unconfirmed)}")
    # One connection sends one mail at a time: a kill leaves at most one
    # mail whose fate is unknown.
    assert len(unconfirmed) <= 1
