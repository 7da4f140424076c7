"""One mail never stops the mail behind it (issue 9; found by
bench/attack_corpus.py): a fuzzed From of one 8-bit byte
(`From: \\xcdx@b.test`) became the sender 'íx@b.test', to whom no reply can
be written; the reply failed, the quarantine's apology failed the same way,
the mail stayed 'new' and was run first on every pass, and no mail behind
it was ever run; `judge deliver` exited 75 for every later mail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

import judge.mailrunner as runner
from judge.store.models import InboundMessage
from tests.harness import make_mail

EIGHT_BIT_FROM = (b"From: \xcdx@b.test\r\nTo: judge@example.test\r\nSubject: x\r\n"
                  b"Message-ID: <fuzz-8bit@fuzz.test>\r\n\r\nHELP\r\n")


def _statuses(h) -> dict[str, str]:
    with h.judge.sessions() as s:
        return {r.message_id: r.status for r in s.scalars(select(InboundMessage))}


def test_an_8bit_from_is_no_sender_and_blocks_nothing(harness):
    h = harness
    h.inbox.add(EIGHT_BIT_FROM)
    h.send("ann@example.test", "HELP", message_id="<after@example.test>")
    h.run()
    statuses = _statuses(h)
    assert statuses["<fuzz-8bit@fuzz.test>"] == "quarantined"  # no usable From: nobody to answer
    assert statuses["<after@example.test>"] == "done"
    assert h.last_to("ann@example.test")


def test_a_mail_whose_reply_cannot_be_written_is_set_aside(harness, monkeypatch):
    """Defence in depth: whatever makes a mail's reply (and its apology)
    fail, the mail is quarantined and the mail behind it runs."""
    h = harness
    real = runner.queue_mail

    def queue_mail(session, config, now, *, to, **kw):
        if "bad@example.test" in to:
            raise ValueError("not a mail address")
        return real(session, config, now, to=to, **kw)

    monkeypatch.setattr(runner, "queue_mail", queue_mail)
    monkeypatch.setattr("judge.daemon.queue_mail", queue_mail)
    h.send("bad@example.test", "HELP", message_id="<bad@example.test>")
    h.send("ann@example.test", "HELP", message_id="<good@example.test>")
    h.run()
    h.run()
    statuses = _statuses(h)
    assert statuses == {"<bad@example.test>": "quarantined", "<good@example.test>": "done"}


def test_deliver_takes_every_mail_after_an_8bit_from(tmp_path):
    judge_bin = str(Path(sys.executable).with_name("judge"))
    args = [judge_bin, "--data-dir", str(tmp_path / "data"), "deliver"]
    first = subprocess.run(args, input=EIGHT_BIT_FROM, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    later = subprocess.run(args, input=make_mail("ann@example.test", "HELP"), capture_output=True, timeout=120)
    assert later.returncode == 0, later.stderr
