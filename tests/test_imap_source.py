"""The IMAP source against a real Dovecot on loopback (tests/mailrig.sh)."""

from __future__ import annotations

import email
import logging
import threading
import time
from email.policy import SMTP

import pytest
from imapclient import IMAPClient

from judge.sources.imap import DONE_KEYWORD, ImapSettings, ImapSource
from judge.sources.watermark import WatermarkStore
from judge.store.db import make_engine, session_factory, upgrade
from tests.harness import Harness, make_mail

JUDGE = "judge@example.test"


def crlf(raw: bytes) -> bytes:
    return email.message_from_bytes(raw).as_bytes(policy=SMTP)


def mail(n: int, to: str = JUDGE) -> bytes:
    return crlf(make_mail(f"p{n}@players.test", f"body {n}", subject=f"mail {n}", to=to,
                          message_id=f"<m{n}.{time.monotonic_ns()}@players.test>"))


@pytest.fixture
def rig(mailrig):
    mailrig.reset()
    return mailrig


@pytest.fixture
def store(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    upgrade(engine)
    yield WatermarkStore(session_factory(engine))
    engine.dispose()


def settings(rig, **kw) -> ImapSettings:
    opts = {"host": rig.host, "port": rig.imap_port, "security": "none", "username": JUDGE,
            "password": rig.password(JUDGE), "timeout": 10, "backoff_initial": 0.2, "backoff_max": 1.0}
    opts.update(kw)
    return ImapSettings(**opts)


def flags(rig) -> dict[int, set[bytes]]:
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        c.select_folder("INBOX", readonly=True)
        return {uid: set(f) for uid, f in c.get_flags(c.search("ALL")).items()}


def test_settings_validation():
    with pytest.raises(ValueError, match="loopback"):
        ImapSettings(host="mail.example.org", security="none", username="u", password="p")
    with pytest.raises(ValueError):
        ImapSettings(host="localhost", security="ssl")
    ImapSettings(host="localhost", security="none")
    ImapSettings(host="::1", security="none")
    assert ImapSettings(host="mail.example.org").effective_port == 993
    assert ImapSettings(host="mail.example.org", security="starttls").effective_port == 143


def test_fetch_ack_watermark_and_no_seen(rig, store):
    src = ImapSource(settings(rig), store, name="imap:test")
    raws = [mail(i) for i in range(5)]
    for r in raws:
        rig.deliver(JUDGE, r)
    got = src.fetch()
    assert len(got) == 5
    for m, r in zip(got, raws):
        assert m.raw.endswith(r)  # Dovecot prepends Return-Path/Delivered-To/Received
        assert m.source == "imap:test"
    assert [int(m.ref.split(":")[1]) for m in got] == sorted(int(m.ref.split(":")[1]) for m in got)
    assert all(b"\\Seen" not in f for f in flags(rig).values())  # BODY.PEEK[]
    assert len(src.fetch(limit=2)) == 2  # not acknowledged yet: fetched again
    for m in got:
        src.ack(m)
    src.ack(got[0])  # idempotent
    fl = flags(rig)
    assert len(fl) == 5 and all(DONE_KEYWORD.encode() in f and b"\\Seen" not in f for f in fl.values())
    assert src.fetch() == []
    new = mail(9)
    rig.deliver(JUDGE, new)
    again = src.fetch()
    assert len(again) == 1 and again[0].raw.endswith(new)
    src.ack(again[0])
    src.close()

    # A new instance (a restarted daemon) continues from the stored watermark.
    src2 = ImapSource(settings(rig), store, name="imap:test")
    assert src2.fetch() == []
    rig.deliver(JUDGE, mail(10))
    assert len(src2.fetch()) == 1
    src2.close()


def test_processed_mail_is_moved_to_a_folder(rig, store):
    src = ImapSource(settings(rig, processed="Judge/Done"), store, name="imap:move")
    rig.deliver(JUDGE, mail(1))
    [m] = src.fetch()
    src.ack(m)
    assert flags(rig) == {}
    assert src.fetch() == []
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        c.select_folder("Judge/Done", readonly=True)
        assert len(c.search("ALL")) == 1
    src.close()


@pytest.mark.parametrize("security", ["tls", "starttls"])
def test_tls_and_starttls_with_the_rig_ca(rig, store, security):
    port = rig.imaps_port if security == "tls" else rig.imap_port
    src = ImapSource(settings(rig, security=security, port=port, host="localhost", cafile=rig.cafile), store,
                     name="imap:tls")
    rig.deliver(JUDGE, mail(1))
    assert len(src.fetch()) == 1
    src.close()
    # Without the rig's CA the certificate is refused: logged, not raised.
    bad = ImapSource(settings(rig, security=security, port=port, host="localhost"), store, name="imap:tls")
    assert bad.fetch() == []
    bad.close()


def test_uidvalidity_change_is_logged_and_mail_fetched_again(rig, store, caplog):
    src = ImapSource(settings(rig), store, name="imap:test")
    raws = [mail(i) for i in range(2)]
    for r in raws:
        rig.deliver(JUDGE, r)
    for m in src.fetch():
        src.ack(m)
    assert src.fetch() == []
    old = store.get("imap:test").uidvalidity
    rig.doveadm("mailbox", "update", "-u", JUDGE, "--uid-validity", str(old + 1000), "INBOX")
    src.close()  # a live connection may keep the old value until it reselects
    with caplog.at_level(logging.ERROR, logger="judge.sources.imap"):
        again = src.fetch()
    assert any(r.levelno == logging.ERROR and "UIDVALIDITY" in r.getMessage() for r in caplog.records)
    assert [m.raw[-len(r):] for m, r in zip(again, raws)] == raws and len(again) == 2
    assert store.get("imap:test").uidvalidity == old + 1000
    for m in again:
        src.ack(m)
    assert src.fetch() == []
    src.close()


def test_reconnects_after_dovecot_restart(rig, store):
    src = ImapSource(settings(rig), store, name="imap:test")
    rig.deliver(JUDGE, mail(1))
    for m in src.fetch():
        src.ack(m)
    rig.restart_dovecot()
    new = mail(2)
    rig.deliver(JUDGE, new)
    got = src.fetch()  # the old connection is dead: reconnect, no exception
    assert len(got) == 1 and got[0].raw.endswith(new)
    src.ack(got[0])
    src.close()


def test_server_away_is_logged_not_raised(store, caplog):
    st = ImapSettings(host="127.0.0.1", port=1, security="none", username="u", password="p", timeout=2,
                      backoff_initial=0.1, backoff_max=0.4)
    src = ImapSource(st, store, name="imap:away")
    with caplog.at_level(logging.WARNING, logger="judge.sources.imap"):
        assert src.fetch() == []
        assert src.fetch() == []  # within the backoff: not even tried
        assert src.wait(0.1) is False
    assert "retrying in" in caplog.text
    for _ in range(4):
        time.sleep(0.45)
        assert src.fetch() == []
    assert src._backoff == 0.4  # capped
    src.close()


def test_idle_wakes_on_delivery(rig, store):
    src = ImapSource(settings(rig), store, name="imap:test")
    assert src.fetch() == []
    timer = threading.Timer(0.5, rig.deliver, (JUDGE, mail(1)))
    t0 = time.monotonic()
    timer.start()
    try:
        assert src.wait(10) is True
    finally:
        timer.join()
    assert time.monotonic() - t0 < 2.5
    assert len(src.fetch()) == 1
    t0 = time.monotonic()
    assert src.wait(0.5) is False  # nothing new: times out
    assert 0.4 < time.monotonic() - t0 < 2
    src.close()


def test_judge_answers_mail_from_its_imap_mailbox(rig, tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        src = ImapSource(settings(rig), WatermarkStore(h.judge.sessions), name="imap:judge")
        h.judge.sources = [src]
        raw = crlf(make_mail("ann@example.test", "\n\n"))
        rig.deliver(JUDGE, raw)
        h.run()
        reply = h.last_to("ann@example.test")
        assert "your mail held no commands" in h.body(reply) and "HELP" in h.body(reply)
        assert h.run()["stored"] == 0
        assert all(DONE_KEYWORD.encode() in f for f in flags(rig).values())
        src.close()
    finally:
        h.close()


def test_watermark_store_on_both_databases(database_url):
    engine = make_engine(database_url)
    upgrade(engine)
    wm = WatermarkStore(session_factory(engine))
    try:
        assert wm.get("s") is None
        big = 4_294_967_295  # UIDVALIDITY and UIDs are unsigned 32-bit
        with wm.sessions.begin() as s:
            wm.advance(s, "s", big, 5, "INBOX")
        with wm.sessions.begin() as s:
            assert wm.advance(s, "s", big, 3, "INBOX").last_uid == 5  # never lowered
            wm.advance(s, "s", big, big, "INBOX")
        assert (wm.get("s").uidvalidity, wm.get("s").last_uid) == (big, big)
        with wm.sessions() as s:  # not committed: no effect
            wm.advance(s, "s", 7, 1, "INBOX")
        assert wm.get("s").uidvalidity == big
        wm.reset("s", "INBOX", 7)
        assert wm.get("s") == type(wm.get("s"))("INBOX", 7, 0)
    finally:
        engine.dispose()


def test_the_daemon_reads_imap_when_configured(tmp_path, mailrig):
    """[inbox] type = "imap" and the [imap] section give the daemon an ImapSource."""
    from judge.app import build_judge
    from judge.config import load_config
    from judge.sources.imap import ImapSource

    config = load_config(None, data_dir=tmp_path / "data", overrides={
        "judge": {"database": f"sqlite:///{tmp_path / 'j.sqlite3'}"},
        "inbox": {"type": "imap"},
        "imap": {"host": mailrig.host, "port": mailrig.imap_port, "security": "none",
                 "username": mailrig.user, "password": mailrig.password()},
    })
    judge = build_judge(config)
    assert isinstance(judge.sources[0], ImapSource)
    judge.sources[0].close()
    import pytest as _pytest

    from judge.config import ConfigError

    with _pytest.raises(ConfigError, match=r"\[imap\]"):
        load_config(None, data_dir=tmp_path / "d2", overrides={
            "inbox": {"type": "imap"}, "imap": {"host": "imap.example.org", "security": "none"}})


def test_the_running_daemon_wakes_on_new_imap_mail(tmp_path, mailrig):
    """run_forever waits with IMAP IDLE, and answers a new mail within seconds
    before its poll interval is over."""
    import threading
    import time as _time

    from judge.clock import SystemClock
    from judge.sources.imap import ImapSettings, ImapSource
    from judge.sources.watermark import WatermarkStore
    from judge.transports.maildir import read_all
    from tests.harness import Harness, make_mail

    mailrig.reset()
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}", poll_interval=15)
    h.judge.clock = SystemClock()
    source = ImapSource(ImapSettings(host=mailrig.host, port=mailrig.imap_port, security="none",
                                     username=mailrig.user, password=mailrig.password()),
                        WatermarkStore(h.judge.sessions))
    h.judge.sources = [source]
    worker = threading.Thread(target=h.judge.run_forever, daemon=True)
    worker.start()
    try:
        _time.sleep(1.0)  # the daemon is idling now
        mailrig.deliver(mailrig.user, make_mail("ann@example.test", "HELP", to=mailrig.user))
        deadline = _time.monotonic() + 4  # well inside the 15 s poll interval: IDLE woke it
        while _time.monotonic() < deadline and not read_all(h.config.outbox_path):
            _time.sleep(0.2)
        assert len(read_all(h.config.outbox_path)) == 1
    finally:
        h.judge.stop()
        worker.join(timeout=20)
        source.close()
        h.close()


def test_a_backlog_is_stored_in_batches_and_moved_once(rig, tmp_path, monkeypatch):
    """The daemon stores fetched mail a batch per transaction (the watermark
    with it) and moves each batch on the server at once; a mail sent twice is
    stored once, also when both copies are in one fetch."""
    import judge.daemon as daemon_module
    from sqlalchemy import select

    from judge.store.models import InboundMessage, SourceState

    monkeypatch.setattr(daemon_module, "STORE_BATCH", 40)
    monkeypatch.setattr(daemon_module, "FETCH_LIMIT", 100)
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        src = ImapSource(settings(rig, processed="Judge/Done"), WatermarkStore(h.judge.sessions), name="imap:batch")
        h.judge.sources = [src]
        mails = [mail(n) for n in range(130)]
        with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
            c.login(JUDGE, rig.password(JUDGE))
            for raw in mails + [mails[5], mails[120]]:  # two sent twice
                c.append("INBOX", raw)
            c.select_folder("INBOX", readonly=True)
            top = max(c.search("ALL"))
        assert h.judge.poll_sources() == 100  # at most FETCH_LIMIT a pass
        assert h.judge.poll_sources() == 30  # 32 fetched: the two copies dropped
        assert h.judge.poll_sources() == 0
        with h.judge.sessions() as s:
            assert len(s.scalars(select(InboundMessage.id)).all()) == 130
            assert s.get(SourceState, "imap:batch").last_uid == top
        with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
            c.login(JUDGE, rig.password(JUDGE))
            assert c.select_folder("INBOX", readonly=True)[b"EXISTS"] == 0
            assert c.select_folder("Judge/Done", readonly=True)[b"EXISTS"] == 132
        src.close()
    finally:
        h.close()


def test_without_idle_the_source_polls(rig, store):
    """A server that does not offer IDLE (the rig's Dovecot on 127.0.0.2):
    wait() sleeps its whole timeout instead, and the next fetch finds the
    mail that came meanwhile."""
    host = rig.env["IMAP_NOIDLE_HOST"]
    with IMAPClient(host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        assert not c.has_capability("IDLE")
    src = ImapSource(settings(rig, host=host), store, name="imap:noidle")
    assert src.fetch() == []
    rig.deliver(JUDGE, mail(1))
    t0 = time.monotonic()
    assert src.wait(1.5) is False  # not woken: there is nothing to wake it
    assert time.monotonic() - t0 >= 1.4
    [got] = src.fetch()
    assert b"body 1" in got.raw
    src.close()
