"""`judge deliver` beside a running daemon (issue 12): deliver only stores
the mail and wakes the daemon (judge/wake.py), which runs it at once; with
no daemon, deliver runs it itself. Real processes on real SQLite and
PostgreSQL stores; nothing is lost and nothing is done twice."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from sqlalchemy import select

from judge.store.db import make_engine, session_factory
from judge.store.models import InboundMessage
from judge.transports.maildir import read_all
from tests.harness import make_mail

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
# Far longer than any test waits: a mail run while the daemon sleeps was run
# because deliver woke it, not because its poll came round.
POLL = 600
SETTLE = 30  # seconds a test waits at most for what it expects


def write_config(tmp_path: Path, database_url: str | None = None) -> dict:
    """The environment of `judge` on a store in tmp_path (SQLite unless
    `database_url`), with a preference game ?g and its signed-on player
    p@example.test (the first mail creates and migrates the store)."""
    database_url = database_url or f"sqlite:///{tmp_path / 'j.sqlite3'}"
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{database_url}"\n'
                      f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\npoll_interval = {POLL}\n')
    env = {**os.environ, "JUDGE_CONFIG": str(config), "PYTHONUNBUFFERED": "1"}
    for sender, body in (("gm@example.test", "CREATE ?g gmpw preference\nSET MANUAL START"),
                         ("p@example.test", "SIGNON ?g pw")):
        assert "processed: done" in deliver(env, make_mail(sender, body))
    env["DATABASE_URL_FOR_TEST"] = database_url
    return env


def deliver(env: dict, raw: bytes, *args: str) -> str:
    run = subprocess.run([JUDGE_BIN, "deliver", *args], input=raw, capture_output=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    return run.stdout.decode()


@contextlib.contextmanager
def serving(env: dict, log: Path) -> Iterator[subprocess.Popen]:
    """`judge serve` on the store, from its first pass done to SIGTERM."""
    with log.open("ab") as out:
        proc = subprocess.Popen([JUDGE_BIN, "serve"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env)
    try:
        until(lambda: b"judge: running" in log.read_bytes() or proc.poll() is not None)
        assert proc.poll() is None, log.read_text()
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            os.kill(proc.pid, signal.SIGCONT)  # in case a test stopped it
            try:
                proc.wait(timeout=SETTLE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def until(condition, timeout: float = SETTLE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)

def stop_idle(daemon: subprocess.Popen, env: dict) -> None:
    """SIGSTOP the daemon between its passes: at a moment it holds no write
    lock of the SQLite store. Stopped inside a pass (it takes the write lock
    for a moment at every pass, even with nothing to run), it would make
    `judge deliver` wait out the busy timeout and exit 75 for the MTA to try
    again: right, but not the hung-at-rest daemon these tests are about."""
    import sqlite3

    path = env["DATABASE_URL_FOR_TEST"].removeprefix("sqlite:///")
    deadline = time.monotonic() + SETTLE
    while True:
        daemon.send_signal(signal.SIGSTOP)
        probe = sqlite3.connect(path, timeout=0.2, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:
            assert time.monotonic() < deadline, "the daemon never rested"
            daemon.send_signal(signal.SIGCONT)
            time.sleep(0.05)
        finally:
            probe.close()



def rows(env: dict) -> list[InboundMessage]:
    engine = make_engine(env["DATABASE_URL_FOR_TEST"])
    try:
        with session_factory(engine)() as s:
            return list(s.scalars(select(InboundMessage).order_by(InboundMessage.id)))
    finally:
        engine.dispose()


def replies_to(tmp_path: Path, message_id: str) -> list[bytes]:
    return [m for m in read_all(tmp_path / "data" / "outbox") if message_id.encode() in m]


def player_mail(message_id: str) -> bytes:
    return make_mail("p@example.test", "SIGNON ?g pw\nSET PREFERENCE FRIGATE", message_id=message_id)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path: Path) -> str | None:
    return None if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def test_a_delivered_mail_is_run_by_the_daemon_at_once(tmp_path, store_url):
    env = write_config(tmp_path, store_url)
    with serving(env, tmp_path / "serve.log"):
        said = deliver(env, player_mail("<wake-1@players.test>"))
        assert said.strip().endswith("; the daemon is processing it"), said
        # The daemon sleeps POLL seconds between passes: only the wake-up
        # explains a reply now.
        until(lambda: replies_to(tmp_path, "<wake-1@players.test>"))
    [reply] = replies_to(tmp_path, "<wake-1@players.test>")
    assert b"FRIGATE" in reply
    assert [r.status for r in rows(env)] == ["done"] * 3
    assert "mail 3 from p@example.test (?g): done" in (tmp_path / "serve.log").read_text()


def test_a_duplicate_message_id_is_taken_once(tmp_path):
    env = write_config(tmp_path)
    raw = player_mail("<twice@players.test>")
    with serving(env, tmp_path / "serve.log"):
        first = deliver(env, raw)
        again = deliver(env, raw)
        assert "stored as mail 3" in first
        assert again.strip() == "judge: duplicate Message-ID <twice@players.test>, not processed again"
        until(lambda: replies_to(tmp_path, "<twice@players.test>"))
    assert len(replies_to(tmp_path, "<twice@players.test>")) == 1
    assert [r.message_id for r in rows(env)].count("<twice@players.test>") == 1


def test_with_no_daemon_deliver_runs_the_mail_itself(tmp_path):
    env = write_config(tmp_path)
    said = deliver(env, player_mail("<alone@players.test>"))
    assert said.strip().endswith("; processed: done"), said
    assert len(replies_to(tmp_path, "<alone@players.test>")) == 1  # before deliver exited


def test_a_dead_daemons_fifo_does_not_hold_mail(tmp_path):
    """A daemon killed outright leaves its FIFO: with no reader, deliver
    cannot open it, and runs the mail itself."""
    env = write_config(tmp_path)
    with serving(env, tmp_path / "serve.log") as daemon:
        daemon.kill()
        daemon.wait()
    assert list((tmp_path / "data").glob("wake-*.fifo"))
    said = deliver(env, player_mail("<after-kill@players.test>"))
    assert said.strip().endswith("; processed: done"), said
    assert len(replies_to(tmp_path, "<after-kill@players.test>")) == 1


def test_a_mail_handed_to_a_hung_daemon_waits_stored_for_the_next_pass(tmp_path):
    """A daemon that holds its FIFO but does not run (stopped here) is woken
    in vain: the mail stays stored as new, and any later pass runs it (here
    a `judge serve --once` after the hung daemon was killed)."""
    env = write_config(tmp_path)
    with serving(env, tmp_path / "serve.log") as daemon:
        stop_idle(daemon, env)
        said = deliver(env, player_mail("<hung@players.test>"))
        assert said.strip().endswith("; the daemon is processing it"), said
        daemon.kill()
        daemon.wait()
    assert [r.status for r in rows(env)][-1] == "new"
    assert not replies_to(tmp_path, "<hung@players.test>")
    once = subprocess.run([JUDGE_BIN, "serve", "--once"], capture_output=True, env=env, timeout=120)
    assert once.returncode == 0, once.stderr.decode()
    assert [r.status for r in rows(env)] == ["done"] * 3
    assert len(replies_to(tmp_path, "<hung@players.test>")) == 1


def test_a_mail_handed_over_as_the_daemon_stops_is_run_before_it_exits(tmp_path):
    """The wake-up came, but so did SIGTERM: the daemon looks at the stored
    mail once more after it stopped taking wake-ups, and answers it."""
    env = write_config(tmp_path)
    with serving(env, tmp_path / "serve.log") as daemon:
        stop_idle(daemon, env)
        said = deliver(env, player_mail("<at-stop@players.test>"))
        assert said.strip().endswith("; the daemon is processing it"), said
        daemon.send_signal(signal.SIGTERM)  # taken when it runs again
        daemon.send_signal(signal.SIGCONT)
        assert daemon.wait(timeout=SETTLE) == 0
    assert [r.status for r in rows(env)] == ["done"] * 3
    assert len(replies_to(tmp_path, "<at-stop@players.test>")) == 1


def test_no_process_only_stores_and_a_pass_runs_the_mail(tmp_path):
    env = write_config(tmp_path)
    said = deliver(env, player_mail("<later@players.test>"), "--no-process")
    assert said.strip().endswith("; the daemon will process it"), said
    assert [r.status for r in rows(env)][-1] == "new"
    once = subprocess.run([JUDGE_BIN, "serve", "--once"], capture_output=True, env=env, timeout=120)
    assert once.returncode == 0, once.stderr.decode()
    assert [r.status for r in rows(env)] == ["done"] * 3
    assert len(replies_to(tmp_path, "<later@players.test>")) == 1


def test_no_process_beside_a_daemon_still_wakes_it(tmp_path):
    env = write_config(tmp_path)
    with serving(env, tmp_path / "serve.log"):
        said = deliver(env, player_mail("<np@players.test>"), "--no-process")
        assert said.strip().endswith("; the daemon is processing it"), said
        until(lambda: replies_to(tmp_path, "<np@players.test>"))


def test_a_stored_mail_that_cannot_be_run_now_is_still_taken(tmp_path):
    """Stored, no daemon, and the judge cannot start here (its inbox Maildir
    is a file): the mail is taken all the same (exit 0, never 75: the MTA
    would offer it again), and a later pass runs it."""
    env = write_config(tmp_path)
    inbox = tmp_path / "data" / "inbox"
    inbox.rename(tmp_path / "inbox.saved")
    inbox.write_text("not a Maildir")
    run = subprocess.run([JUDGE_BIN, "deliver"], input=player_mail("<later-run@players.test>"), capture_output=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().strip().endswith("; not processed now (the next pass of the daemon or of a deliver "
                                                "runs it)")
    assert b"the mail is stored, but running it failed" in run.stderr
    inbox.unlink()
    (tmp_path / "inbox.saved").rename(inbox)
    once = subprocess.run([JUDGE_BIN, "serve", "--once"], capture_output=True, env=env, timeout=120)
    assert once.returncode == 0, once.stderr.decode()
    assert [r.status for r in rows(env)] == ["done"] * 3
    assert len(replies_to(tmp_path, "<later-run@players.test>")) == 1
