"""Operators see the daemon work (issue 11): one log line per mail
processed (sender, game, outcome), per deadline fired, per result sent and
on SIGTERM; `judge deliver` says what it did. Never a password."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.harness import make_mail
from tests.test_cli import _config as cli_config
from tests.security.test_passwords_in_clear import MAIL as MISTYPED, SECRETS

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
GM = "gm@example.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]


def _lines(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.INFO]


def test_a_line_per_mail_deadline_and_result_and_never_a_password(harness, caplog):
    h = harness
    caplog.set_level(logging.INFO, logger="judge")
    h.mail(GM, "CREATE ?g gmpw random")
    h.mail("stranger@example.test", "Thanks for the game!")
    h.mail("auto@example.test", "LIST", headers={"Auto-Submitted": "auto-replied"})
    mails = _lines(caplog, "judge.daemon")
    assert mails[0].startswith("mail 1 from gm@example.test (?g): done")
    assert mails[1].startswith("mail 2 from stranger@example.test: done (no command)")
    assert mails[2].startswith("mail 3 from auto@example.test: ignored (no reply: auto-submitted: auto-replied)")
    for p in PLAYERS:
        h.send(p, "SIGNON ?g pw")
    h.run()
    assert len(_lines(caplog, "judge.daemon")) == 10  # a batch of mails: a line each
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +1h")
    caplog.clear()
    h.clock.advance(hours=2)
    h.run()
    assert _lines(caplog, "judge.scheduler") == ["deadline: g: started at its deadline"]
    sent = _lines(caplog, "judge.outbox")
    assert len(sent) == 8 and all(line.startswith("results of ?g sent: outbox #") for line in sent)
    assert sent[0].endswith("to 1 recipient")
    # Passwords, also mistyped ones, are never logged.
    caplog.clear()
    h.mail("typo@example.test", MISTYPED)
    assert _lines(caplog, "judge.daemon")
    assert not any(secret in caplog.text for secret in SECRETS + ["gmpw"])


def _config(tmp_path: Path) -> Path:
    return cli_config(tmp_path, poll_interval=0.2)


def test_judge_deliver_says_what_it_did(tmp_path):
    env = {**os.environ, "JUDGE_CONFIG": str(_config(tmp_path))}
    raw = make_mail("ann@example.test", "CREATE ?piped secretpw\nLIST", message_id="<pipe-1@x>")
    first = subprocess.run([JUDGE_BIN, "deliver"], input=raw, capture_output=True, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.decode().splitlines() == [
        f"judge: stored as mail 1 (<pipe-1@x>) in the database sqlite:///{tmp_path / 'j.sqlite3'}; processed: done"]
    assert b"mail 1 from ann@example.test (?piped): done" in first.stderr
    again = subprocess.run([JUDGE_BIN, "deliver"], input=raw, capture_output=True, env=env)
    assert again.returncode == 0
    assert again.stdout.decode().strip() == "judge: duplicate Message-ID <pipe-1@x>, not processed again"
    later = subprocess.run([JUDGE_BIN, "deliver", "--no-process"], input=make_mail("bo@example.test", "LIST"),
                           capture_output=True, env=env)
    assert later.returncode == 0 and b"stored as mail 2" in later.stdout and b"the daemon will process it" in later.stdout
    assert not any(b"secretpw" in out for out in (first.stdout, first.stderr, again.stdout, again.stderr))


def test_serve_logs_the_mail_it_runs_and_its_sigterm(tmp_path):
    env = {**os.environ, "JUDGE_CONFIG": str(_config(tmp_path)), "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([JUDGE_BIN, "serve"], stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while b"judge: running" not in log.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        # A mail dropped into the inbox Maildir by hand, as docs/operating.md shows.
        inbox = tmp_path / "data" / "inbox"
        (inbox / "tmp" / "1.hand").write_bytes(make_mail("ann@example.test", "LIST"))
        (inbox / "tmp" / "1.hand").rename(inbox / "new" / "1.hand")
        while b"mail 1 from ann@example.test: done" not in log.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "judge: SIGTERM received, finishing the current pass and stopping" in text
    assert text.rstrip().endswith("judge: stopped")
