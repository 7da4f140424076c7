"""The cost of the game's lock (issue 24): one Lowest Unique Integer bid
through the whole daemon with the game driver's lock, against the same bid
without it, interleaved in the same run, on SQLite and on PostgreSQL.

Run:  .venv/bin/python bench/bench_game_lock.py [--bids 300] [--pg URL]

As bench/bench_lui.py: an F11 game of 11 players, the auction open, each
bid a mail "SIGNON ?game pw / BID seat n" timed from the raw bytes to the
commit (stored, then run: the password checked, the bid applied by the
engine, the state stored, the reply and the board mails queued). Every
other bid runs with the mail session's game lock turned off (what the judge
did before issue 24: the game read without SELECT ... FOR UPDATE, without
SQLite's write lock taken first, without the fresh read), so both kinds
see the same game growing. The ratio of the medians is the lock's cost.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, text  # noqa: E402

import judge.daemon as daemon  # noqa: E402
from judge.games import find_game  # noqa: E402
from judge.methods.lui.persist import from_json  # noqa: E402
from tests.harness import Harness, make_mail  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_lui import SEATS, player, setup  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def run(url: str, bids: int, tmp: Path) -> tuple[list[int], list[int]]:
    h = Harness(tmp / "data", url)
    setup(h, bids)
    judge = h.judge
    locked, unlocked = [], []
    for k in range(bids):
        h.clock.advance(seconds=10)
        who, seat, amount = player(k % 11), SEATS[k % 12], k + 1
        raw = make_mail(who, f"SIGNON ?bench pw\nBID {seat} {amount}", date=h.clock.now())
        lock = k % 2 == 0
        # Off: the mail session's flag under another name, so no game is locked.
        daemon.LOCK_GAMES = "judge.games.lock" if lock else "judge.bench.no-lock"
        t0 = perf_counter_ns()
        judge.receive(raw, "bench")
        judge.process_pending()
        t1 = perf_counter_ns()
        (locked if lock else unlocked).append(t1 - t0)
    daemon.LOCK_GAMES = "judge.games.lock"
    with judge.sessions() as s:
        valid = len(from_json(find_game(s, "bench").method_state["state"]).history)
    assert valid == bids, f"{valid} valid bids of {bids}"
    h.close()
    return locked, unlocked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bids", type=int, default=300)
    ap.add_argument("--pg", default=PG, help="a PostgreSQL URL whose server may create databases")
    args = ap.parse_args()
    print(f"The game's lock: {args.bids} LUI bids through the daemon, every other one without the lock")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        name = f"judge_bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(args.pg, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            for label, url, where in (("SQLite", f"sqlite:///{t / 'judge.sqlite3'}", t / "sqlite"),
                                      ("PostgreSQL", args.pg.rsplit("/", 1)[0] + "/" + name, t / "pg")):
                where.mkdir()
                locked, unlocked = run(url, args.bids, where)
                a, b = statistics.median(locked), statistics.median(unlocked)
                print(f"  {label:<10}  with the lock: median {a / 1e6:6.2f} ms   without: {b / 1e6:6.2f} ms   "
                      f"ratio {a / b:.3f}")
        finally:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


if __name__ == "__main__":
    main()
