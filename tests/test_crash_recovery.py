"""The kill test with real processes: `judge serve` is SIGKILLed again and again
while it works through a backlog of 500 mails, then allowed to finish.

Afterwards every inbound mail must have been processed exactly once (one
reply row each), and every reply must have reached the SMTP server (an
aiosmtpd in this process that keeps each message). Replies the server got
more than once (a kill after the server's 250 but before the outbox row's
'sent' commit: judge/outbox.py send_due, then requeue_interrupted at the next
start) are counted and printed; see the report in the test's output.
"""

from __future__ import annotations

import asyncio
import collections
import email
import email.policy
import mailbox
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import smtp_server
from tests.harness import make_mail
from tests.smtp_server import SmtpTestServer

JUDGE_ADDRESS = "judge@example.test"
MAILS = 500
KILLS = 25
SEED = 20260321
STORE_SECONDS = 0.01


def judge_command() -> list[str]:
    exe = Path(sys.executable).with_name("judge")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "judge"]


def write_config(tmp_path: Path, smtp_port: int) -> tuple[Path, Path, Path]:
    data = tmp_path / "data"
    db = tmp_path / "judge.sqlite3"
    inbox = data / "inbox"
    cfg = tmp_path / "judge.toml"
    cfg.write_text(f"""
[judge]
address = "{JUDGE_ADDRESS}"
data_dir = "{data}"
database = "sqlite:///{db}"
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
    return cfg, db, inbox


def db_counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        out: dict[str, int] = {}
        for table in ("inbound_messages", "outbox"):
            try:
                for status, n in con.execute(f"SELECT status, count(*) FROM {table} GROUP BY status"):
                    out[f"{table}.{status}"] = n
            except sqlite3.OperationalError:  # schema not created yet
                pass
        return out
    finally:
        con.close()


def start(cmd: list[str], cfg: Path, log: Path) -> subprocess.Popen:
    with log.open("ab") as f:
        return subprocess.Popen([*cmd, "-c", str(cfg), "serve"], stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})


READY = b"judge: sending mail through"


def wait_ready(log: Path, starts: int, timeout: float = 30) -> None:
    """Until the `starts`-th daemon has printed its start banner (before run_forever)."""
    deadline = time.monotonic() + timeout
    while log.read_bytes().count(READY) < starts:
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.01)


class SlowToAnswer(smtp_server._Handler):
    """Stores the mail, then takes a while (as a server's fsync does) before its 250."""

    async def handle_DATA(self, server, session, envelope):
        reply = await super().handle_DATA(server, session, envelope)
        await asyncio.sleep(STORE_SECONDS)
        return reply


@pytest.mark.slow
def test_sigkill_storm_loses_nothing_and_processes_everything_once(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(smtp_server, "_Handler", SlowToAnswer)
    server = SmtpTestServer(mode="plain").start()
    try:
        cfg, db, inbox_path = write_config(tmp_path, server.port)
        inbox_path.parent.mkdir(parents=True)
        inbox = mailbox.Maildir(inbox_path, create=True)
        inbound_ids = []
        for i in range(MAILS):
            mid = f"<crash{i}@players.test>"
            inbound_ids.append(mid)
            inbox.add(make_mail(f"player{i}@players.test", "LIST" if i % 2 else "HELP", message_id=mid))

        cmd = judge_command()
        log = tmp_path / "judge.log"
        rng = random.Random(SEED)
        history = []
        for k in range(KILLS):
            proc = start(cmd, cfg, log)
            wait_ready(log, k + 1)  # the kill lands in the daemon's work, not in its imports
            delay = rng.uniform(0.1, 1.0)
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            history.append((round(delay, 2), db_counts(db)))

        # Let it finish: everything processed and sent, then stop it politely.
        proc = start(cmd, cfg, log)
        # Done when every mail is processed and no reply is still on its way
        # (an "unconfirmed" row waits for the operator, not for the daemon).
        deadline = time.monotonic() + 240
        try:
            while time.monotonic() < deadline:
                c = db_counts(db)
                settled = c.get("outbox.sent", 0) + c.get("outbox.unconfirmed", 0)
                if c.get("inbound_messages.done", 0) == MAILS and settled >= MAILS \
                        and {k for k in c if k.startswith("outbox.")} <= {"outbox.sent", "outbox.unconfirmed"}:
                    break
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.2)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)

        for delay, counts in history:
            print(f"killed after {delay:.2f}s: {counts}")

        con = sqlite3.connect(db)
        try:
            inbound = con.execute("SELECT id, message_id, status FROM inbound_messages").fetchall()
            outbox = con.execute("SELECT inbound_id, message_id, status, attempts FROM outbox").fetchall()
        finally:
            con.close()
        # Every inbound mail stored once and processed once.
        assert sorted(m for _, m, _ in inbound) == sorted(inbound_ids)
        assert {s for _, _, s in inbound} == {"done"}, collections.Counter(s for _, _, s in inbound)
        per_inbound = collections.Counter(i for i, _, _, _ in outbox)
        assert set(per_inbound) == {i for i, _, _ in inbound}
        assert set(per_inbound.values()) == {1}, "an inbound mail has more than one reply row"
        # A kill after a mail was handed over leaves it "unconfirmed" (it may
        # have arrived): never sent again blindly, listed for the operator.
        statuses = collections.Counter(s for _, _, s, _ in outbox)
        assert set(statuses) <= {"sent", "unconfirmed"}, statuses
        assert list((inbox_path / "new").iterdir()) == []  # every mail acknowledged

        # Every reply reached the server; count those it got twice.
        time.sleep(0.3)
        received = collections.Counter(
            str(email.message_from_bytes(m.raw, policy=email.policy.default)["Message-ID"]).strip()
            for m in list(server.messages))
        # A "sent" row reached the server. An "unconfirmed" one may not have:
        # a kill between its commit point and the final dot leaves it so (a
        # rare window, met about once in ten runs), and that is exactly why
        # it waits for the operator instead of being sent again.
        wanted = {m for _, m, s, _ in outbox if s == "sent"}
        assert wanted <= set(received), f"{len(wanted - set(received))} replies never reached the server"
        assert set(received) <= {m for _, m, _, _ in outbox}
        dups = {m: n for m, n in received.items() if n > 1}
        retried = sum(1 for *_, a in outbox if a > 1)
        print(f"SMTP server: {sum(received.values())} messages, {len(received)} distinct, "
              f"{len(dups)} received more than once: {dups}; outbox rows with attempts > 1: {retried}")
        # Nothing the server accepted was sent twice.
        assert dups == {}, dups
    finally:
        server.stop()


def test_a_crash_after_the_servers_acceptance_sends_nothing_twice(tmp_path: Path):
    """The window of the kill test, hit on purpose: the transport returns (the
    server has accepted the mail) and the process dies before send_due commits
    'sent'. At the next start the row is "unconfirmed", not sent again."""
    from judge import outbox
    from judge.app import build_judge
    from judge.config import load_config
    from judge.transports.base import Transport

    server = SmtpTestServer(mode="plain").start()
    try:
        config = load_config(None, data_dir=tmp_path / "data", overrides={
            "judge": {"address": JUDGE_ADDRESS, "database": f"sqlite:///{tmp_path / 'j.sqlite3'}",
                      "password_cost": 4},
            "outbox": {"transport": "smtp"},
            "smtp": {"host": server.host, "port": server.port, "security": "none", "timeout": 5}})
        judge = build_judge(config)
        mailbox.Maildir(config.inbox_path, create=True).add(
            make_mail("p@players.test", "HELP", message_id="<window@players.test>"))
        judge.poll_sources()
        judge.process_pending()

        class DiesAfterAcceptance(Transport):
            name = "dies"

            def send(self, mail, commit_point=None):
                judge.transport.send(mail, commit_point)  # the server has said 250
                raise SystemExit("SIGKILL")  # ...and the process dies before the commit

        with pytest.raises(SystemExit):
            outbox.send_due(judge.sessions, DiesAfterAcceptance(), judge.clock, config)
        assert len(server.messages) == 1
        judge.transport.close()

        # The next start.
        outbox.requeue_interrupted(judge.sessions)
        outbox.send_due(judge.sessions, judge.transport, judge.clock, config)
        judge.transport.close()
        ids = collections.Counter(
            str(email.message_from_bytes(m.raw, policy=email.policy.default)["Message-ID"]) for m in server.messages)
        assert len(ids) == 1
        assert set(ids.values()) == {1}, f"the server got the same mail {max(ids.values())} times"
        from judge.store.models import OutboxMessage

        with judge.sessions() as s:
            (row,) = s.query(OutboxMessage).all()
            assert row.status == "unconfirmed" and "may have it" in row.last_error
        judge.sessions.kw["bind"].dispose()
    finally:
        server.stop()
