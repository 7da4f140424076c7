"""A plain mail answered while a heavy Payola phase is played (issue 24).

Run:  .venv/bin/python bench/bench_busy_games.py [--postgresql]

A real `judge serve` (poll interval 0.2 s, Maildir transport) on a store
where a Payola game of 7 players waits at its deadline with, from every
power, the largest offer sheet the limits let through (bench_payola.py's
worst_allowed: 300 bribes a sheet); and a second game, forming. Just after
the deadline `judge deliver` hands the daemon a LIST of the second game.
Printed: how long the LIST took from the hand-over to its reply in the
outbox, against the same LIST handed over before the deadline (nothing
heavy running) in the same run; and how long the phase took to be played
(its results in the outbox). The phase is played by the daemon's thread for
games, worked out before its game's lock is taken, so the mail loop goes on
meanwhile. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import email
import mailbox
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sqlalchemy import create_engine, text  # noqa: E402

from bench_payola import worst_allowed  # noqa: E402
from judge.games import find_game  # noqa: E402
from judge.methods.payola import game as G  # noqa: E402
from judge.methods.payola.live import load  # noqa: E402
from tests.harness import Harness, make_mail  # noqa: E402

GM = "gm@example.test"
PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def addr(k: int) -> str:
    return f"p{k}@example.test"


def judge_bin() -> list[str]:
    exe = Path(sys.executable).with_name("judge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "judge"]


def setup(h: Harness, deadline: datetime) -> None:
    h.clock.set(deadline - timedelta(hours=1))
    h.mail(GM, "CREATE ?heavy gmpw payola standard")
    for k in range(7):
        h.send(addr(k), "SIGNON ?heavy pw")
    h.run()
    h.mail(GM, "SIGNON Mheavy gmpw\nSET MOVEMENT HOURS 1\nSTART")
    with h.judge.sessions() as s:
        state, players = load(find_game(s, "heavy"))
    sheets = worst_allowed(G.units(state))
    for power, address in players.items():
        h.send(address, "SIGNON ?heavy pw\n" + sheets[power])
    h.run()
    h.mail(GM, "CREATE ?light gmpw blind-auction")
    h.mail("ann@example.test", "SIGNON ?light pw")


def reply_after(outbox: Path, message_id: str, timeout: float = 120) -> float:
    """Seconds from now until a mail answering `message_id` is in the outbox."""
    t0 = time.monotonic()
    box = mailbox.Maildir(outbox, create=True)
    while time.monotonic() - t0 < timeout:
        for key in box.keys():
            msg = email.message_from_bytes(box.get_bytes(key))
            if str(msg.get("In-Reply-To", "")).strip() == message_id:
                return time.monotonic() - t0
        time.sleep(0.01)
    raise TimeoutError(f"no reply to {message_id} in {timeout} s")


def results_after(outbox: Path, t0: float, timeout: float = 300) -> float:
    box = mailbox.Maildir(outbox, create=True)
    while time.monotonic() - t0 < timeout:
        for key in box.keys():
            if "S1901M results" in str(email.message_from_bytes(box.get_bytes(key))["Subject"]):
                return time.monotonic() - t0
        time.sleep(0.02)
    raise TimeoutError("no results")


def deliver(cfg: Path, body: str) -> str:
    message_id = f"<{uuid.uuid4().hex}@players.test>"
    raw = make_mail("ann@example.test", body, message_id=message_id, date=datetime.now(timezone.utc))
    subprocess.run([*judge_bin(), "-c", str(cfg), "deliver"], input=raw, check=True, capture_output=True)
    return message_id


def run(url: str, tmp: Path) -> None:
    deadline = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=60)
    h = Harness(tmp / "data", url)
    setup(h, deadline)
    h.close()
    cfg = tmp / "judge.toml"
    cfg.write_text(f'[judge]\naddress = "judge@example.test"\ndata_dir = "{tmp / "data"}"\ndatabase = "{url}"\n'
                   f'poll_interval = 0.2\npassword_cost = 4\n')
    outbox = tmp / "data" / "outbox"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(tmp / "serve.log", "wb") as log:
        serve = subprocess.Popen([*judge_bin(), "-c", str(cfg), "serve"], stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env)
    try:
        time.sleep(3)
        idle = []
        for _ in range(3):  # the anchor: nothing heavy runs
            mid = deliver(cfg, "SIGNON ?light pw\nLIST ?light")
            idle.append(reply_after(outbox, mid))
        wait = (deadline - datetime.now(timezone.utc)).total_seconds()
        if wait < 0:
            raise SystemExit("the set-up took past the deadline: run again on a quieter machine")
        time.sleep(wait + 0.3)
        t0 = time.monotonic()
        mid = deliver(cfg, "SIGNON ?light pw\nLIST ?light")
        busy = reply_after(outbox, mid)
        phase = results_after(outbox, t0)
    finally:
        serve.terminate()
        serve.wait(30)
    base = sorted(idle)[1]
    print(f"  the LIST's reply: {busy:.2f} s while the phase is played, {base:.2f} s with nothing heavy "
          f"running ({busy / base:.1f}x); the phase's results came after {phase:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--postgresql", action="store_true", help="on PostgreSQL (127.0.0.1:5432), else SQLite")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if not args.postgresql:
            print("A plain mail while a Payola phase of 7 maximal sheets is played (SQLite):")
            run(f"sqlite:///{t / 'judge.sqlite3'}", t)
            return
        name = f"judge_bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(PG, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            print("A plain mail while a Payola phase of 7 maximal sheets is played (PostgreSQL):")
            run(PG.rsplit("/", 1)[0] + "/" + name, t)
        finally:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


if __name__ == "__main__":
    main()
