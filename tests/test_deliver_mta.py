"""`judge deliver` as an MTA runs it (issue 25, points 5 and 6; issue 29,
point 5): it finds the operator's configuration without being told, every
fault the operator must mend exits 75 (the MTA keeps the mail and tries
again) with one line and no traceback, and `--background` hands the mail to
a runner of its own so that the MTA does not wait for the whole judge.
Real processes, real stores; tests/test_postfix.py runs the same through
Debian's Postfix."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.config import SYSTEM_CONFIG, find_config, user_config
from judge.transports.maildir import read_all
from tests.harness import make_mail

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
SETTLE = 60  # seconds a test waits at most for what it expects


def clean_env(**extra: str) -> dict[str, str]:
    """The environment an MTA gives: nothing of the judge's."""
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGE_CONFIG", "JUDGE_DATA_DIR", "XDG_CONFIG_HOME")}
    return {**env, **extra}


def write_config(path: Path, data: Path, extra: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[judge]\naddress = "judge@example.test"\ndata_dir = "{data}"\npassword_cost = 4\n{extra}')
    return path


def deliver(raw: bytes, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([JUDGE_BIN, *args], input=raw, capture_output=True, env=env or clean_env(), timeout=120)


def rows(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT message_id, status FROM inbound_messages ORDER BY id").fetchall()


def until(condition, timeout: float = SETTLE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


# -- finding the configuration -------------------------------------------------

def test_the_configuration_is_found_as_daemons_find_it(tmp_path, monkeypatch):
    system, user_home = tmp_path / "etc" / "judge.toml", tmp_path / "xdg"
    monkeypatch.setattr("judge.config.SYSTEM_CONFIG", system)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home))
    assert find_config(None) is None  # neither: the built-in defaults
    write_config(user_config(), tmp_path / "user-data")
    assert user_config() == user_home / "judge" / "judge.toml" and find_config(None) == user_config()
    write_config(system, tmp_path / "system-data")
    assert find_config(None) == system  # the system's before the user's
    assert find_config(tmp_path / "given.toml") == tmp_path / "given.toml"  # --config or $JUDGE_CONFIG first
    assert SYSTEM_CONFIG == Path("/etc/judge/judge.toml")


def test_a_pipe_with_no_option_and_no_environment_uses_the_users_configuration(tmp_path):
    """The documented bug: `|judge deliver` without --config stored the mail
    under the pipe user's home and wrote the reply where nobody reads."""
    xdg = tmp_path / "xdg"
    write_config(xdg / "judge" / "judge.toml", tmp_path / "data")
    run = deliver(make_mail("ann@example.test", "HELP", message_id="<found@x>"), "deliver",
                  env=clean_env(XDG_CONFIG_HOME=str(xdg), HOME=str(tmp_path / "home")))
    assert run.returncode == 0, run.stderr.decode()
    assert f"sqlite:///{tmp_path / 'data' / 'judge.sqlite3'}" in run.stdout.decode()
    assert len(read_all(tmp_path / "data" / "outbox")) == 1
    assert not (tmp_path / "home").exists()


# -- exit 75 for what the operator mends ---------------------------------------

def _faults(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """name: (arguments, what stderr says)."""
    typo = tmp_path / "typo.toml"
    typo.write_text('[judge]\naddress = "judge@example.test"\npoll_intervall = 5\n')
    broken = tmp_path / "broken.toml"
    broken.write_text('[judge]\naddress = "judge@example.test\n')
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes('[judge]\nname = "Jüdge"\n'.encode("latin-1"))
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    down = write_config(tmp_path / "down.toml", tmp_path / "data", 'database = "postgresql://nobody@127.0.0.1:1/x"\n')
    return {
        "missing": (["-c", str(tmp_path / "missing.toml")], "not found"),
        "unknown option": (["-c", str(typo)], "[judge] unknown option(s): poll_intervall"),
        "not TOML": (["-c", str(broken)], "broken.toml"),
        "not UTF-8": (["-c", str(latin1)], "not UTF-8 text"),
        "unreadable": (["-c", str(folder)], "cannot read the configuration file"),
        "store down": (["-c", str(down)], "temporary failure, mail not taken"),
    }


@pytest.mark.parametrize("fault", ["missing", "unknown option", "not TOML", "not UTF-8", "unreadable", "store down"])
def test_every_fault_of_the_operators_defers_the_mail(tmp_path, fault):
    args, said = _faults(tmp_path)[fault]
    run = deliver(make_mail("ann@example.test", "HELP"), *args, "deliver")
    assert run.returncode == 75, (run.returncode, run.stderr.decode())
    lines = run.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and lines[0].startswith("judge: "), lines
    assert "Traceback" not in run.stderr.decode()


def test_serve_keeps_exit_2_for_a_configuration_fault(tmp_path):
    args, said = _faults(tmp_path)["unknown option"]
    run = deliver(b"", *args, "serve", "--once")
    assert run.returncode == 2 and said in run.stderr.decode()


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root's mount namespaces")
def test_a_full_disk_defers_the_mail_and_it_is_taken_once_there_is_room(tmp_path):
    """The store on a tmpfs filled to the last byte (in a mount namespace of
    its own): SQLite's fault (a "disk I/O error" as its WAL cannot grow, or
    "database or disk is full") is the MTA's 75, and the same mail, offered
    again once there is room, is stored once."""
    config = write_config(tmp_path / "judge.toml", tmp_path / "data")
    first = deliver(make_mail("gm@example.test", "HELP", message_id="<first@x>"), "-c", str(config), "deliver")
    assert first.returncode == 0, first.stderr.decode()
    mail = tmp_path / "mail.eml"
    mail.write_bytes(make_mail("ann@example.test", "HELP\n" + "x" * 20_000, message_id="<full@x>"))
    data = tmp_path / "data"
    script = (f'set -e; cp -a "{data}" "{tmp_path}/copy"; mount -t tmpfs -o size=2m tmpfs "{data}"; '
              f'cp -a "{tmp_path}/copy/." "{data}/"; '
              f'dd if=/dev/zero of="{data}/filler" bs=4k 2>/dev/null || true; '
              f'set +e; "{JUDGE_BIN}" -c "{config}" deliver < "{mail}"; echo "status=$?"; '
              f'rm "{data}/filler"; "{JUDGE_BIN}" -c "{config}" deliver < "{mail}"; echo "status=$?"; '
              f'cp "{data}/judge.sqlite3" "{tmp_path}/after.sqlite3"')
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                         env=clean_env(), timeout=120)
    out, err = run.stdout.decode(), run.stderr.decode()
    assert out.count("status=") == 2, (out, err)
    assert "status=75" in out.split("stored as mail 2")[0], (out, err)
    [refused] = [line for line in err.splitlines() if line.startswith("judge:")]
    assert refused.startswith("judge: temporary failure, mail not taken: ") and "disk" in refused, err
    assert "Traceback" not in err, err
    assert out.rstrip().endswith("status=0") and "stored as mail 2 (<full@x>)" in out, out
    assert [r[0] for r in rows(tmp_path / "after.sqlite3")] == ["<first@x>", "<full@x>"]


# -- --background: the MTA waits for the storing only ---------------------------

def test_background_hands_the_mail_to_a_runner_that_answers_it(tmp_path):
    config = write_config(tmp_path / "judge.toml", tmp_path / "data")
    args = ["-c", str(config), "deliver", "--background"]
    gm = deliver(make_mail("gm@example.test", "CREATE ?g gmpw preference\nSET MANUAL START"), "-c", str(config),
                 "deliver")
    assert gm.returncode == 0
    said = deliver(make_mail("p@example.test", "SIGNON ?g pw\nSET PREFERENCE FRIGATE", message_id="<bg-1@x>"),
                   *args)
    assert said.returncode == 0, said.stderr.decode()
    assert said.stdout.decode().strip().endswith(
        f"; a judge process started in the background is processing it (its log: {tmp_path / 'data' / 'deliver.log'})")
    database = tmp_path / "data" / "judge.sqlite3"
    until(lambda: rows(database)[-1] == ("<bg-1@x>", "done"))
    until(lambda: any(b"<bg-1@x>" in m for m in read_all(tmp_path / "data" / "outbox")))
    # The runner stays a while on the wake-up FIFO: the next mail wakes it.
    again = deliver(make_mail("p@example.test", "SIGNON ?g pw\nLIST", message_id="<bg-2@x>"), *args)
    assert again.stdout.decode().strip().endswith("; the daemon is processing it"), again.stdout
    until(lambda: rows(database)[-1] == ("<bg-2@x>", "done"))
    assert "mail 2 from p@example.test (?g): done" in (tmp_path / "data" / "deliver.log").read_text()


def test_a_burst_of_background_delivers_is_answered_once_each(tmp_path):
    """Ten delivers at once, before any runner is up: some start runners,
    the lock lets one work at a time, and every mail is answered once."""
    config = write_config(tmp_path / "judge.toml", tmp_path / "data")
    assert deliver(make_mail("gm@example.test", "HELP"), "-c", str(config), "deliver").returncode == 0
    procs = [subprocess.Popen([JUDGE_BIN, "-c", str(config), "deliver", "--background"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env()) for _ in range(10)]
    for i, proc in enumerate(procs):
        out, err = proc.communicate(make_mail(f"p{i}@example.test", "HELP", message_id=f"<burst-{i}@x>"), timeout=120)
        assert proc.returncode == 0, err.decode()
    database = tmp_path / "data" / "judge.sqlite3"
    until(lambda: all(status == "done" for _, status in rows(database)) and len(rows(database)) == 11)
    until(lambda: len(read_all(tmp_path / "data" / "outbox")) == 11)
    time.sleep(1)  # a late runner would answer twice now, if it could
    replies = read_all(tmp_path / "data" / "outbox")
    assert sorted(m.split(b"In-Reply-To: ")[1].split(b"\n")[0].strip() for m in replies if b"burst-" in m) == \
        sorted(f"<burst-{i}@x>".encode() for i in range(10))
