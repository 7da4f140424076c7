"""IMAP folders as the operator writes them, against a real Dovecot whose
separator is "." (its default layout; tests/mailrig.sh with
MAILRIG_SEPARATOR) (issue 25, point 8), and the daemon on IMAP: its start-up
lines and a SIGTERM during IDLE (point 12).

`[imap] processed = "Judge/Done"` failed to CREATE on such a server, and the
judge retried for ever, reading no mail and logging warnings. Now the names
are written with the server's separator, and a folder the server refuses
stops `judge serve` at its start with one line and exit status 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from imapclient import IMAPClient

from judge.config import ConfigError
from judge.sources.imap import DONE_KEYWORD, ImapSettings, ImapSource, server_name
from judge.sources.watermark import WatermarkStore
from judge.store.db import make_engine, session_factory, upgrade
from tests.conftest_mail import start_mailrig
from tests.harness import make_mail

JUDGE = "judge@example.test"
JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
SETTLE = 90  # seconds a test waits at most for what it expects


@pytest.fixture(scope="module")
def dotrig():
    """A Dovecot of this module's own, with "." between folder levels."""
    try:
        rig = start_mailrig("judge-dotrig", separator=".")
    except RuntimeError as err:
        pytest.fail(str(err))
    yield rig
    rig.clean()


@pytest.fixture
def rig(dotrig):
    dotrig.reset()
    return dotrig


@pytest.fixture
def store(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    upgrade(engine)
    yield WatermarkStore(session_factory(engine))
    engine.dispose()


def settings(rig, **kw) -> ImapSettings:
    opts = {"host": rig.host, "port": rig.imap_port, "security": "none", "username": JUDGE,
            "password": rig.password(JUDGE), "timeout": 10, "backoff_initial": 0.2, "backoff_max": 1.0}
    return ImapSettings(**{**opts, **kw})


def folders(rig) -> dict[str, int]:
    """Each folder of the judge's mailbox as the server names it, with its mail count."""
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        counts = {}
        for _, _, name in c.list_folders():
            try:
                counts[name] = c.folder_status(name, ["MESSAGES"])[b"MESSAGES"]
            except Exception:  # a level that only holds others ("Judge" of "Judge.Done")
                pass
        return counts


def test_the_server_names_folders_with_its_own_separator(rig):
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        assert ImapSource.separator(c) == "."
        with pytest.raises(Exception, match="must not have '/'"):  # what the judge used to send
            c.create_folder("Judge/Done")
    assert server_name("Judge/Done", ".") == "Judge.Done"
    assert server_name("Judge/Done", "/") == "Judge/Done" and server_name("Judge/Done", None) == "Judge/Done"


def test_a_processed_folder_of_two_levels_takes_the_mail(rig, store):
    src = ImapSource(settings(rig, processed="Judge/Done"), store, name="imap:dot")
    src.check()
    assert "Judge.Done" in folders(rig)
    for i in range(3):
        rig.deliver(JUDGE, make_mail(f"p{i}@players.test", "LIST", message_id=f"<dot{i}.{time.time_ns()}@x>"))
    got = src.fetch()
    assert len(got) == 3
    src.ack_batch(got)
    src.close()
    counts = folders(rig)
    assert counts["Judge.Done"] == 3 and counts["INBOX"] == 0


def test_the_folder_read_may_have_two_levels_too(rig, store):
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        c.create_folder("Games.In")
        c.append("Games.In", make_mail("p@players.test", "LIST", message_id=f"<in.{time.time_ns()}@x>"))
    src = ImapSource(settings(rig, folder="Games/In"), store, name="imap:dot-in")
    src.check()
    got = src.fetch()
    assert len(got) == 1
    src.ack_batch(got)
    src.close()
    with IMAPClient(rig.host, rig.imap_port, ssl=False, timeout=10) as c:
        c.login(JUDGE, rig.password(JUDGE))
        c.select_folder("Games.In", readonly=True)
        assert DONE_KEYWORD.encode() in next(iter(c.get_flags(c.search("ALL")).values()))


def test_a_folder_the_server_refuses_is_a_configuration_error(rig, store):
    with pytest.raises(ConfigError, match=r"\[imap\] processed: the server refuses the folder '~Judge/Done' "
                                          r"\(written '~Judge.Done', the server's separator '.'\)"):
        ImapSource(settings(rig, processed="~Judge/Done"), store).check()
    with pytest.raises(ConfigError, match=r"\[imap\] folder: the server has no folder 'Games/Nowhere'"):
        ImapSource(settings(rig, folder="Games/Nowhere"), store).check()


def test_a_server_away_at_start_is_no_configuration_error(rig, store, caplog):
    src = ImapSource(settings(rig, port=1), store)  # nothing listens there
    src.check()  # no exception: the loop retries
    assert "cannot check the folders now" in caplog.text


# -- the daemon on IMAP ---------------------------------------------------------

def imap_config(tmp_path: Path, rig, **imap: str) -> dict:
    lines = [f'host = "{rig.host}"', f"port = {rig.imap_port}", 'security = "none"', f'username = "{JUDGE}"',
             f'password = "{rig.password(JUDGE)}"', *(f'{k} = "{v}"' for k, v in imap.items())]
    path = tmp_path / "judge.toml"
    path.write_text(f'[judge]\naddress = "{JUDGE}"\ndata_dir = "{tmp_path / "data"}"\npassword_cost = 4\n'
                    "poll_interval = 600\n"  # far longer than any wait here
                    '[inbox]\ntype = "imap"\n[imap]\n' + "\n".join(lines) + "\n")
    return {**os.environ, "JUDGE_CONFIG": str(path), "PYTHONUNBUFFERED": "1"}


def test_serve_stops_at_start_on_a_refused_folder(tmp_path, rig):
    env = imap_config(tmp_path, rig, processed="~Judge/Done")
    run = subprocess.run([JUDGE_BIN, "serve"], env=env, capture_output=True, text=True, timeout=SETTLE,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr
    # Beside the log's lines (its connection), one line of the judge's own.
    [line] = [l for l in run.stderr.splitlines() if l.startswith("judge:")]
    assert line.startswith("judge: configuration error: [imap] processed: the server refuses the folder")
    assert "Traceback" not in run.stderr


def test_serve_says_it_reads_imap_and_stops_on_sigterm_during_idle(tmp_path, rig):
    """The banner named the Maildir when the inbox was IMAP; a SIGTERM
    during IDLE waited for the whole IDLE (the poll interval, 600 s here)."""
    env = imap_config(tmp_path, rig, processed="Judge/Done")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([JUDGE_BIN, "serve"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + SETTLE
        while b"judge: running" not in log.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        rig.deliver(JUDGE, make_mail("p@players.test", "HELP", message_id=f"<idle.{time.time_ns()}@x>"))
        deadline = time.monotonic() + SETTLE  # the start took its own time on a busy machine
        # Answered while the daemon waits in IDLE: the wait ended with the new mail.
        while "Judge.Done" not in folders(rig) or not folders(rig)["Judge.Done"]:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        time.sleep(1)  # back in IDLE
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=SETTLE) == 0  # long before the 600 s IDLE would end
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert (f"judge: reading mail from IMAP {JUDGE}@{rig.host}:{rig.imap_port} (none), folder INBOX" in text)
    assert "Maildir" not in text and rig.password(JUDGE) not in text
    assert "judge: SIGTERM received" in text and "judge: stopped" in text
