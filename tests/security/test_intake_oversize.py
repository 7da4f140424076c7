"""Huge mail at intake (issue 9): one 50 MB mail took 607 MB of memory, and
20 of them 2.4 GB and a 1 GB database, because the size limit was checked
after the mail was read, stored and parsed, and up to 1,000 mails were read
into memory at once. Now every source checks the size first and keeps only
the header block of a mail over [limits] max_message_bytes, and reads a
backlog in steps bounded in bytes."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from imapclient import IMAPClient
from sqlalchemy import select

from judge.sources.imap import ImapSettings, ImapSource
from judge.sources.maildir import MaildirSource
from judge.sources.watermark import WatermarkStore
from judge.store.db import make_engine, session_factory, upgrade
from judge.store.models import InboundMessage
from tests.harness import Harness, make_mail

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
MB = 1_000_000
HEADER_CAP = 64 * 1024  # the most of an oversize mail's header that is kept


def big_mail(size: int, sender: str = "big@players.test", message_id: str = "<big@players.test>") -> bytes:
    head = make_mail(sender, "HELP", subject="a big attachment", message_id=message_id)
    return head + b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx\n" * (
        (size - len(head)) // 73 + 1)


def header_of(raw: bytes) -> bytes:
    return raw[:raw.index(b"\n\n") + 2]


def _rows(sessions) -> list[InboundMessage]:
    with sessions() as s:
        return s.scalars(select(InboundMessage).order_by(InboundMessage.id)).all()


def test_a_30_mb_maildir_file_is_stored_as_its_header(tmp_path):
    """The file is not read whole: only its header block is stored, with its
    size; the fetch allocates a few KiB, not 30 MB."""
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        assert h.config.max_message_bytes == 10_240_000
        head = make_mail("big@players.test", "HELP", subject="a big attachment", message_id="<big@x>")
        path = h.config.inbox_path / "new" / "big.eml"
        with open(path, "wb") as f:  # 30 MB, written sparse: the test stays fast
            f.write(head)
            f.truncate(30 * MB)
        tracemalloc.start()
        try:
            assert h.judge.poll_sources() == 1
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2 * MB, f"storing the mail allocated {peak} bytes"
        [row] = _rows(h.judge.sessions)
        assert row.oversize == 30 * MB
        assert row.raw == header_of(head) and len(row.raw) < HEADER_CAP
        assert not os.listdir(h.config.inbox_path / "new")  # taken: moved to cur/
    finally:
        h.close()


def test_a_mail_of_nothing_but_header_lines_is_cut_at_a_line(tmp_path):
    (tmp_path / "new").mkdir(parents=True)
    line = b"X-Filler: " + b"y" * 990 + b"\n"
    (tmp_path / "new" / "m").write_bytes(b"From: a@b.test\n" + line * 2000)  # 2 MB of header, no body
    [mail] = MaildirSource(tmp_path, max_bytes=MB).fetch()
    assert mail.oversize == 15 + 2000 * len(line)
    assert len(mail.raw) <= HEADER_CAP and mail.raw.startswith(b"From: a@b.test\n") and mail.raw.endswith(line)


def test_a_maildir_backlog_is_read_in_steps_bounded_in_bytes(tmp_path):
    """At most 4 times the limit a fetch (always at least one mail); a mail
    over the limit counts as its header; the count limit still holds."""
    source = MaildirSource(tmp_path, max_bytes=10_000)
    for i in range(10):
        name = tmp_path / "new" / f"m{i}"
        name.write_bytes(big_mail(9_000, message_id=f"<m{i}@x>"))
        os.utime(name, (1_000_000 + i, 1_000_000 + i))
    got = source.fetch()
    assert [m.ref for m in got] == ["m0", "m1", "m2", "m3"]  # the fifth would pass 40,000 bytes
    assert sum(len(m.raw) for m in got) <= 40_000
    assert len(source.fetch(limit=2)) == 2
    for m in got:
        source.ack(m)
    big = tmp_path / "new" / "m4"
    big.write_bytes(big_mail(50_000, message_id="<m4@x>"))  # over the limit: costs only its header
    os.utime(big, (1_000_004, 1_000_004))
    got = source.fetch()
    assert [m.ref for m in got] == ["m4", "m5", "m6", "m7", "m8"] and got[0].oversize == big.stat().st_size
    alone = MaildirSource(tmp_path / "other", max_bytes=10_000)
    (tmp_path / "other" / "new" / "x").write_bytes(big_mail(9_999))
    assert len(alone.fetch()) == 1  # one mail always fits


@pytest.fixture
def watermarks(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    upgrade(engine)
    yield WatermarkStore(session_factory(engine))
    engine.dispose()


def _append(rig, raws: list[bytes]) -> None:
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=30) as c:
        c.login(rig.user, rig.password())
        for raw in raws:
            c.append("INBOX", raw)


def _flags(rig) -> list[set[bytes]]:
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(rig.user, rig.password())
        c.select_folder("INBOX", readonly=True)
        return [set(f) for f in c.get_flags(c.search("ALL")).values()]


def _imap(rig, watermarks, max_bytes: int) -> ImapSource:
    settings = ImapSettings(host=rig.host, port=rig.imap_port, security="none", username=rig.user,
                            password=rig.password(), timeout=30)
    return ImapSource(settings, watermarks, name="imap:oversize", max_bytes=max_bytes)


def test_imap_fetches_only_the_header_of_a_mail_over_the_limit(mailrig, watermarks):
    """A 1 MB mail at a 200 KB limit: its size is asked first and only its
    header is downloaded; nothing is marked \\Seen; it is taken like any mail."""
    mailrig.reset()
    big = big_mail(MB).replace(b"\n", b"\r\n")
    small = make_mail("small@players.test", "HELP", message_id="<small@x>").replace(b"\n", b"\r\n")
    _append(mailrig, [big, small])
    src = _imap(mailrig, watermarks, max_bytes=200_000)
    try:
        tracemalloc.start()
        try:
            first, second = src.fetch()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 300_000, f"the fetch allocated {peak} bytes for a 1 MB mail"
        assert first.oversize == len(big)
        assert first.raw == big[:big.index(b"\r\n\r\n") + 4]
        assert second.oversize is None and second.raw == small
        assert all(b"\\Seen" not in f for f in _flags(mailrig))
        src.ack_batch([first, second])
        assert all(b"$JudgeDone" in f and b"\\Seen" not in f for f in _flags(mailrig))
        assert src.fetch() == []
    finally:
        src.close()


def test_an_imap_backlog_is_read_in_steps_bounded_in_bytes(mailrig, watermarks):
    """Six mails of 150 KB at a 200 KB limit: five (750 KB) fit in the 800 KB
    of one fetch, the sixth comes with the next; wait() sees it is there."""
    mailrig.reset()
    _append(mailrig, [big_mail(150_000, message_id=f"<b{i}@x>").replace(b"\n", b"\r\n") for i in range(6)])
    src = _imap(mailrig, watermarks, max_bytes=200_000)
    try:
        got = src.fetch()
        assert len(got) == 5 and all(m.oversize is None for m in got)
        assert len(src.fetch(limit=2)) == 2
        src.ack_batch(got)
        t0 = time.monotonic()
        assert src.wait(5) is True and time.monotonic() - t0 < 2  # more waits: no IDLE
        [last] = src.fetch()
        assert b"<b5@x>" in last.raw
    finally:
        src.close()


def _deliver(tmp_path: Path, raw: bytes) -> tuple[subprocess.CompletedProcess, int]:
    """`judge deliver` with `raw` on stdin; its result and peak memory (KiB)."""
    tmp_path.mkdir()
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\npassword_cost = 4\n'
                      f'[limits]\nmax_message_bytes = {MB}\n')
    # A parent of its own, so that RUSAGE_CHILDREN is the judge's alone.
    wrapper = ("import resource, subprocess, sys\n"
               "r = subprocess.run(sys.argv[1:])\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
               "sys.exit(r.returncode)\n")
    run = subprocess.run([sys.executable, "-c", wrapper, JUDGE_BIN, "-c", str(config), "--data-dir",
                          str(tmp_path / "data"), "deliver"], input=raw, capture_output=True, timeout=120)
    *_, rss = run.stderr.decode().split()
    return run, int(rss)


def test_deliver_keeps_the_header_of_a_30_mb_mail_and_takes_it(tmp_path):
    """Not read whole, yet read to its end (the MTA sees it taken: exit 0,
    never 75) and its size stored."""
    raw = big_mail(30 * MB)
    run, rss = _deliver(tmp_path / "big", raw)
    assert run.returncode == 0, run.stderr
    small, small_rss = _deliver(tmp_path / "small", make_mail("a@players.test", "HELP"))
    assert small.returncode == 0, small.stderr
    engine = make_engine(f"sqlite:///{tmp_path / 'big' / 'data' / 'judge.sqlite3'}")
    try:
        [row] = _rows(session_factory(engine))
    finally:
        engine.dispose()
    assert row.oversize == len(raw)
    assert row.raw == header_of(raw)
    # At most the 1 MB limit held at once, against 30 MB and its copies before.
    assert rss - small_rss < 15_000, f"deliver took {rss} KiB, a small mail {small_rss} KiB"
