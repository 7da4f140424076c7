"""The judge between real mail servers: Dovecot IMAP and the rig's SMTP sink
(tests/mailrig.sh), and a separate aiosmtpd (tests/smtp_server.py) for outages."""

from __future__ import annotations

import collections
import email
import email.policy
import logging
import mailbox
import smtplib
import socket
import threading
import time
from datetime import UTC, datetime
from email.policy import SMTP

import pytest
from imapclient import IMAPClient
from sqlalchemy import select

import judge.sources.imap.source as imap_module  # FETCH_CHUNK is read there
from judge.app import build_judge
from judge.clock import ManualClock
from judge.config import load_config
from judge.sources.imap import DONE_KEYWORD, ImapSettings, ImapSource
from judge.sources.watermark import WatermarkStore
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import make_mail
from tests.smtp_server import SmtpTestServer

JUDGE = "judge@example.test"
PLAYER = "gm@example.test"  # the rig's second user plays


def crlf(raw: bytes) -> bytes:
    return email.message_from_bytes(raw).as_bytes(policy=SMTP)


@pytest.fixture
def rig(mailrig):
    mailrig.reset()
    assert PLAYER in mailrig.users and JUDGE in mailrig.users
    return mailrig


def imap_settings(rig, **kw) -> ImapSettings:
    opts = {"host": rig.host, "port": rig.imap_port, "security": "none", "username": JUDGE,
            "password": rig.password(JUDGE), "timeout": 10, "backoff_initial": 0.1, "backoff_max": 0.5}
    opts.update(kw)
    return ImapSettings(**opts)


def restart_dovecot(rig, src: ImapSource) -> None:
    """Restart Dovecot and cut the source's connection as a real restart does.

    tests/mailrig.sh restart-dovecot leaves the old imap processes running (the
    master removes run/master.pid as it exits, so dovecot_pids finds no group
    to kill): established sessions would survive the restart. Shut the
    client's socket down so that the judge sees the drop."""
    rig.restart_dovecot()
    client = src._client
    sock = getattr(getattr(client, "_imap", None), "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def make_judge(tmp_path, clock=None, **sections):
    overrides = {"judge": {"address": JUDGE, "database": f"sqlite:///{tmp_path / 'j.sqlite3'}",
                           "password_cost": 4, "poll_interval": 0.2}}
    for name, values in sections.items():
        overrides.setdefault(name, {}).update(values)
    config = load_config(None, data_dir=tmp_path / "data", overrides=overrides)
    return build_judge(config, clock)


def mailbox_of(rig, user: str) -> list[email.message.EmailMessage]:
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(user, rig.password(user))
        c.select_folder("INBOX", readonly=True)
        uids = c.search("ALL")
        data = c.fetch(uids, ["BODY.PEEK[]"]) if uids else {}
        return [email.message_from_bytes(data[u][b"BODY[]"], policy=email.policy.default) for u in sorted(data)]


def body(msg) -> str:
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    return part.get_content()


def rows(judge, model):
    with judge.sessions() as s:
        return s.scalars(select(model).order_by(model.id)).all()


def test_player_mail_round_trip_through_real_smtp_and_imap(rig, tmp_path):
    """Player -> SMTP (rig) -> judge's IMAP INBOX -> judge -> SMTP (rig) -> player's IMAP INBOX."""
    judge = make_judge(tmp_path, inbox={"type": "imap"},
                       imap={"host": rig.host, "port": rig.imap_port, "security": "none", "username": JUDGE,
                             "password": rig.password(JUDGE), "timeout": 10},
                       outbox={"transport": "smtp"},
                       smtp={"host": rig.host, "port": rig.smtp_port, "security": "none", "timeout": 10})
    try:
        assert isinstance(judge.sources[0], ImapSource)
        mid = f"<roundtrip.{time.monotonic_ns()}@example.test>"
        raw = make_mail(PLAYER, "HELP\n", subject="help please", message_id=mid)
        with smtplib.SMTP(rig.host, rig.smtp_port, timeout=10) as c:
            c.sendmail(PLAYER, [JUDGE], crlf(raw))
        assert any(str(m["Message-ID"]) == mid for m in mailbox_of(rig, JUDGE))

        result = judge.run_once()
        assert result["stored"] == 1 and result["sent"]["sent"] == 1, result
        [row] = rows(judge, OutboxMessage)
        assert row.status == "sent" and row.recipients == [PLAYER]

        replies = [m for m in mailbox_of(rig, PLAYER) if str(m["In-Reply-To"]) == mid]
        assert len(replies) == 1
        reply = replies[0]
        assert str(reply["Message-ID"]) == row.message_id
        assert JUDGE in str(reply["From"]) and PLAYER in str(reply["To"])
        assert "LIST [?game]" in body(reply) and "SIGNON ?game password" in body(reply)
        # The judge's copy of the player's mail is marked processed, not \Seen.
        with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
            c.login(JUDGE, rig.password(JUDGE))
            c.select_folder("INBOX", readonly=True)
            flags = list(c.get_flags(c.search("ALL")).values())
        assert flags and all(DONE_KEYWORD.encode() in f and b"\\Seen" not in f for f in flags)

        # Nothing more to do, nothing sent again.
        assert judge.run_once()["stored"] == 0
        assert len([m for m in mailbox_of(rig, PLAYER) if str(m["In-Reply-To"]) == mid]) == 1
    finally:
        judge.sources[0].close()
        judge.transport.close()
        judge.sessions.kw["bind"].dispose()


def test_results_wait_while_the_smtp_server_is_down(tmp_path):
    server = SmtpTestServer(mode="plain").start()
    server.stop()  # down from the start; the port is kept for the restart
    clock = ManualClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    judge = make_judge(tmp_path, clock, outbox={"transport": "smtp", "retry_seconds": 60, "max_attempts": 8},
                       smtp={"host": server.host, "port": server.port, "security": "none", "timeout": 5})
    try:
        inbox = mailbox.Maildir(judge.config.inbox_path, create=True)
        mids = [f"<down{i}@players.test>" for i in range(3)]
        for i, mid in enumerate(mids):
            inbox.add(make_mail(f"p{i}@players.test", "HELP", message_id=mid))

        r = judge.run_once()
        assert r["processed"] == 3 and r["sent"] == {"sent": 0, "retry": 3, "failed": 0}
        out = rows(judge, OutboxMessage)
        assert [(o.status, o.attempts) for o in out] == [("queued", 1)] * 3
        assert all("refused" in o.last_error or "Error" in o.last_error for o in out), [o.last_error for o in out]

        # Not due yet: no attempt.
        clock.advance(seconds=30)
        assert judge.run_once()["sent"] == {"sent": 0, "retry": 0, "failed": 0}
        # Due: tried again, still down; the backoff doubles.
        for attempts, wait in ((2, 31), (3, 120), (4, 240)):
            clock.advance(seconds=wait)
            assert judge.run_once()["sent"]["retry"] == 3
            out = rows(judge, OutboxMessage)
            assert {(o.status, o.attempts) for o in out} == {("queued", attempts)}
            assert all(o.last_error for o in out)
        assert server.messages == []

        server.start()  # back
        clock.advance(seconds=479)
        assert judge.run_once()["sent"]["sent"] == 0  # 1 s before the next attempt is due
        clock.advance(seconds=1)
        assert judge.run_once()["sent"] == {"sent": 3, "retry": 0, "failed": 0}
        out = rows(judge, OutboxMessage)
        assert {(o.status, o.attempts, o.last_error) for o in out} == {("sent", 5, None)}
        got = collections.Counter(str(email.message_from_bytes(m.raw, policy=email.policy.default)["In-Reply-To"])
                                  for m in server.messages)
        assert got == collections.Counter(mids)  # each result once
        assert judge.run_once()["sent"]["sent"] == 0
    finally:
        judge.transport.close()
        server.stop()
        judge.sessions.kw["bind"].dispose()


def test_dovecot_restarts_within_and_between_passes_lose_nothing(rig, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="judge.sources.imap")
    judge = make_judge(tmp_path)  # Maildir outbox: the IMAP side is under test here
    src = ImapSource(imap_settings(rig), WatermarkStore(judge.sessions), name="imap:judge")
    judge.sources = [src]
    mids: list[str] = []

    def deliver(n: int) -> None:
        for _ in range(n):
            i = len(mids)
            mid = f"<restart{i}.{time.monotonic_ns()}@players.test>"
            mids.append(mid)
            rig.deliver(JUDGE, crlf(make_mail(f"p{i}@players.test", "LIST" if i % 2 else "HELP",
                                              message_id=mid)))

    try:
        # 1. Within a fetch: Dovecot restarts between two FETCH chunks.
        monkeypatch.setattr(imap_module, "FETCH_CHUNK", 4)
        real_fetch = IMAPClient.fetch
        calls = {"n": 0}

        def fetch_with_restart(self, *a, **kw):
            calls["n"] += 1
            if calls["n"] == 2:
                restart_dovecot(rig, src)
            return real_fetch(self, *a, **kw)

        monkeypatch.setattr(IMAPClient, "fetch", fetch_with_restart)
        deliver(10)
        first = judge.run_once()
        assert calls["n"] >= 2 and first["stored"] == 0, (calls, first)  # the pass lost its connection mid-fetch
        monkeypatch.setattr(IMAPClient, "fetch", real_fetch)
        deadline = time.monotonic() + 30
        while len(rows(judge, InboundMessage)) < 10 and time.monotonic() < deadline:
            judge.run_once()
            time.sleep(0.1)
        assert len(rows(judge, InboundMessage)) == 10

        # 2. Between passes.
        restart_dovecot(rig, src)
        deliver(5)
        deadline = time.monotonic() + 30
        while len(rows(judge, InboundMessage)) < 15 and time.monotonic() < deadline:
            judge.run_once()
            time.sleep(0.1)

        # 3. While the daemon loops in a thread: restarts at random points of its passes.
        stop = threading.Event()
        errors: list[BaseException] = []

        def loop() -> None:
            while not stop.is_set():
                try:
                    judge.run_once()
                except BaseException as e:  # noqa: BLE001 - reported below
                    errors.append(e)
                    return
                time.sleep(0.05)

        t = threading.Thread(target=loop, daemon=True)
        t.start()
        try:
            for _ in range(2):
                deliver(12)
                time.sleep(0.2)
                restart_dovecot(rig, src)
            deliver(6)
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline:
                inbound = rows(judge, InboundMessage)
                if len(inbound) == len(mids) and all(r.status != "new" for r in inbound):
                    break
                time.sleep(0.2)
        finally:
            stop.set()
            t.join(30)
        assert not errors, errors
        drops = [r for r in caplog.records if "reconnecting" in r.getMessage() or "retrying in" in r.getMessage()]
        assert len(drops) >= 4, [r.getMessage() for r in caplog.records]  # every restart was seen
        judge.run_once()  # the last marks on the server

        inbound = rows(judge, InboundMessage)
        assert sorted(r.message_id for r in inbound) == sorted(mids)  # all stored, once each
        assert {r.status for r in inbound} == {"done"}
        replies = collections.Counter(o.inbound_id for o in rows(judge, OutboxMessage))
        assert set(replies) == {r.id for r in inbound} and set(replies.values()) == {1}
        with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
            c.login(JUDGE, rig.password(JUDGE))
            c.select_folder("INBOX", readonly=True)
            flags = c.get_flags(c.search("ALL"))
        assert len(flags) == len(mids)
        assert all(DONE_KEYWORD.encode() in f for f in flags.values())
    finally:
        src.close()
        judge.sessions.kw["bind"].dispose()


def test_a_clients_reply_through_real_smtp_and_imap_runs_only_its_commands(rig, tmp_path):
    """Issue 25 between real servers: Outlook on the web's reply (its text
    part carries the judge's mail unquoted under a line of underscores) goes
    through the rig's SMTP into Dovecot; the judge, reading it over IMAP,
    runs its two commands and nothing of the original, and its reply holds
    no password."""
    from pathlib import Path

    from judge.store.models import Event, Player

    judge = make_judge(tmp_path, inbox={"type": "imap"},
                       imap={"host": rig.host, "port": rig.imap_port, "security": "none", "username": JUDGE,
                             "password": rig.password(JUDGE), "timeout": 10},
                       outbox={"transport": "smtp"},
                       smtp={"host": rig.host, "port": rig.smtp_port, "security": "none", "timeout": 10})
    corpus = Path(__file__).parent / "mail_clients" / "outlook_web.eml"
    # The corpus's player is anna@players.test; here the rig's second user plays.
    reply = corpus.read_bytes().replace(b"anna@players.test", PLAYER.encode())

    def send(raw: bytes) -> None:
        with smtplib.SMTP(rig.host, rig.smtp_port, timeout=10) as c:
            c.sendmail(PLAYER, [JUDGE], crlf(raw))
        deadline = time.monotonic() + 20
        while not judge.run_once()["processed"] and time.monotonic() < deadline:
            time.sleep(0.2)

    try:
        send(make_mail("gm@example.test", "CREATE ?spring gm-Secret-9 preference standard\nSET MANUAL START",
                       message_id=f"<create.{time.monotonic_ns()}@example.test>"))
        send(make_mail(PLAYER, "SIGNON ?spring anna-Secret-7", message_id=f"<join.{time.monotonic_ns()}@example.test>"))
        send(reply)
        [row] = [r for r in rows(judge, InboundMessage) if b"DB9PR07MB8456" in r.message_id.encode()]
        commands = [e.data for e in rows(judge, Event) if e.kind == "command" and e.inbound_id == row.id]
        assert [(c["status"], c["text"]) for c in commands] == [
            ("done", "SIGNON ?spring ****"), ("done", "SET PREFERENCE Italy Austria Germany")]
        [player] = rows(judge, Player)
        assert player.failures == 0
        [out] = [o for o in rows(judge, OutboxMessage) if o.inbound_id == row.id]
        assert out.status == "sent" and b"anna-Secret-7" not in out.raw
        answered = [m for m in mailbox_of(rig, PLAYER) if str(m["In-Reply-To"]) == row.message_id]
        assert len(answered) == 1 and "the mail you replied to; not quoted here" in body(answered[0])
    finally:
        judge.sources[0].close()
        judge.transport.close()
        judge.sessions.kw["bind"].dispose()
