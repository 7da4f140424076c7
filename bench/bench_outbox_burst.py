"""A deadline burst: 500 Blind Auction games of 7 players and an observer
reach one deadline; the judge resolves them, queues 4,500 result mails and
sends them over SMTP to a local aiosmtpd server (issue 29, "SMTP").

Run:  .venv/bin/python bench/bench_outbox_burst.py [--games 500] [--postgresql [ADMIN_URL]]

Setup (untimed): the games are made by mail through the judge's Maildir
inbox, as players would (CREATE with a deadline, 7 SIGNONs and an
observer's, START, 7 bid lists), on SQLite in a temp dir or in a fresh
PostgreSQL database.

Timed, in the same run:

* resolve and queue: the scheduler's pass at the deadline (scheduler.tick):
  500 resolutions and their result mails composed and queued (issue aim:
  <= 5 s for 500 games; no anchor);
* the anchor: `smtplib.SMTP.sendmail` of the same queued mails (same
  envelope, same bytes) to the same server, one connection; run before and
  after the judge, the faster counts;
* the judge: `judge serve`'s loop (Judge.run_forever, its real
  poll_interval of 5 s and its naps) with the SMTP transport, from its start
  until no mail is left queued or being sent.

The server (bench/smtp_sink.py) runs in a process of its own and counts the
Message-IDs it got: every mail must arrive exactly once in each run, which
is checked. --no-pipelining: the server does not offer PIPELINING.
--profile FILE: cProfile stats of the resolve-and-queue pass. --no-smtp:
only the setup and the resolve-and-queue pass (no SMTP part).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import shutil
import smtplib
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from time import perf_counter, process_time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402

from bench.scratch import scratch_postgresql  # noqa: E402
from judge import scheduler  # noqa: E402
from judge.app import build_judge  # noqa: E402
from judge.clock import ManualClock  # noqa: E402
from judge.config import load_config  # noqa: E402
from judge.store.models import Game, OutboxMessage  # noqa: E402
from judge.transports.smtp import SmtpSettings, SmtpTransport  # noqa: E402
from tests.harness import make_mail  # noqa: E402

JUDGE = "judge@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
START = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


class Sink:
    """bench/smtp_sink.py in a child process."""

    def __init__(self, pipelining: bool) -> None:
        args = [sys.executable, str(ROOT / "bench" / "smtp_sink.py")] + (["--pipelining"] if pipelining else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.port = int(self._line().split()[1])

    def _line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the SMTP sink died")
        return line.strip()

    def ask(self, command: str) -> str:
        self.proc.stdin.write(command + "\n")
        return self._line()

    def counts(self) -> tuple[int, int, int]:
        _, mails, distinct, most = self.ask("count").split()
        return int(mails), int(distinct), int(most)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        self.proc.wait(10)


class FrozenClock:
    """The time of the burst, standing still, with real naps: the daemon's
    loop sleeps its poll interval as in production, and the queued mails
    stay due."""

    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def drain(judge, start_with: list[bytes]) -> None:
    for raw in start_with:
        judge_inbox(judge).add(raw)
    while True:
        out = judge.run_once()
        if not out.get("stored") and not out.get("processed") and not sum(out.get("sent", {}).values()):
            break


_INBOXES: dict[int, object] = {}


def judge_inbox(judge):
    import mailbox

    key = id(judge)
    if key not in _INBOXES:
        _INBOXES[key] = mailbox.Maildir(judge.config.inbox_path, create=True)
    return _INBOXES[key]


def make_games(judge, games: int) -> None:
    """The games, by mail, as their masters and players would make them."""
    def gm(g: int) -> str:
        return f"gm{g}@masters.test"

    def player(g: int, i: int) -> str:
        return f"p{g}x{i}@players.test"

    drain(judge, [make_mail(gm(g), f"CREATE ?b{g} gmpw{g} blind-auction standard\nSET DEADLINE +48h\nSIGNOFF")
                  for g in range(games)])
    drain(judge, [make_mail(player(g, i), f"SIGNON ?b{g} pw{i}\nSIGNOFF") for g in range(games) for i in range(7)]
          + [make_mail(f"o{g}@observers.test", f"SIGNON Ob{g} opw\nSIGNOFF") for g in range(games)])
    drain(judge, [make_mail(gm(g), f"SIGNON Mb{g} gmpw{g}\nSTART\nSIGNOFF") for g in range(games)])
    bids = []
    for g in range(games):
        for i in range(7):
            values = [40, 30, 20, 15, 10, 5, 1]
            values = values[i:] + values[:i]
            lines = "\n".join(f"{p}: {v}" for p, v in zip(POWERS, values))
            bids.append(make_mail(player(g, i), f"SIGNON ?b{g} pw{i}\n{lines}\nSIGNOFF"))
    drain(judge, bids)
    with judge.sessions() as s:
        states = dict(s.execute(select(Game.state, func.count()).group_by(Game.state)).all())
    assert states == {"bidding": games}, states


def queued_mails(judge) -> list[tuple[str, list[str], bytes]]:
    with judge.sessions() as s:
        return [(r.envelope_from, list(r.recipients), r.raw) for r in
                s.scalars(select(OutboxMessage).where(OutboxMessage.status == "queued").order_by(OutboxMessage.id))]


def anchor(sink: Sink, mails) -> float:
    sink.ask("clear")
    t = perf_counter()
    conn = smtplib.SMTP("127.0.0.1", sink.port, local_hostname="bench.test")
    for envelope_from, recipients, raw in mails:
        conn.sendmail(envelope_from, recipients, raw)
    conn.quit()
    took = perf_counter() - t
    assert sink.counts() == (len(mails), len(mails), 1), sink.counts()
    return took


def judge_daemon(judge, sink: Sink, now: datetime, expected: int) -> float:
    """Judge.run_forever with the SMTP transport, until nothing is queued or sending."""
    sink.ask("clear")
    judge.transport = SmtpTransport(SmtpSettings(host="127.0.0.1", port=sink.port, local_hostname="bench.test"))
    judge.clock = FrozenClock(now)
    judge.stopping = False
    waiting = (OutboxMessage.status.not_in(("sent", "failed", "unconfirmed")))
    t = perf_counter()
    worker = threading.Thread(target=judge.run_forever, daemon=True)
    worker.start()
    while True:
        with judge.sessions() as s:
            left = s.scalar(select(func.count()).select_from(OutboxMessage).where(waiting))
        if not left:
            break
        time.sleep(0.02)
    took = perf_counter() - t
    judge.stop()
    worker.join(30)
    judge.transport.close()
    with judge.sessions() as s:
        statuses = dict(s.execute(select(OutboxMessage.status, func.count())
                                  .where(OutboxMessage.kind == "result").group_by(OutboxMessage.status)).all())
    assert statuses == {"sent": expected}, statuses
    assert sink.counts() == (expected, expected, 1), sink.counts()
    return took


def run(database_url: str, data: Path, games: int, pipelining: bool, profile: str | None, smtp: bool = True) -> None:
    clock = ManualClock(START)
    config = load_config(None, data_dir=data, overrides={"judge": {
        "address": JUDGE, "database": database_url, "password_cost": 4, "default_method": "blind-auction"}})
    judge = build_judge(config, clock)
    t = perf_counter()
    make_games(judge, games)
    print(f"  setup: {games} games by mail in {perf_counter() - t:.1f} s")

    clock.advance(hours=49)
    now = clock.now()
    profiler = cProfile.Profile() if profile else None
    t, cpu = perf_counter(), process_time()
    if profiler:
        profiler.enable()
    done = scheduler.tick(judge.sessions, config, now)
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    resolve, cpu = perf_counter() - t, process_time() - cpu
    assert sum(d.endswith("resolved") for d in done) == games, done[:5]
    mails = queued_mails(judge)
    expected = games * 9
    assert len(mails) == expected, len(mails)
    print(f"  resolve and queue: {games} games, {len(mails)} mails: {resolve:.2f} s "
          f"({resolve / games * 1000:.1f} ms a game; aim for 500 games: <= 5 s)")
    # CPU time of this process: on a machine shared with other work the wall
    # clock says more about the neighbours than about the judge.
    print(f"    of it CPU time of this process: {cpu:.2f} s ({cpu / games * 1000:.1f} ms a game)")
    if not smtp:
        judge.sessions.kw["bind"].dispose()
        return

    sink = Sink(pipelining)
    try:
        first = anchor(sink, mails)
        sent = judge_daemon(judge, sink, now, expected)
        second = anchor(sink, mails)
    finally:
        sink.close()
    best = min(first, second)
    print(f"  smtplib.sendmail, one connection: {first:.2f} s and {second:.2f} s "
          f"({len(mails) / best:.0f} mails/s)")
    print(f"  the judge (judge serve's loop, SMTP{'' if pipelining else ', no PIPELINING'}): {sent:.2f} s "
          f"({len(mails) / sent:.0f} mails/s)")
    print(f"  ratio judge / smtplib: {sent / best:.2f}x (aim <= 2x)")
    judge.sessions.kw["bind"].dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--postgresql", nargs="?", const="postgresql+psycopg://postgres@127.0.0.1:5432/test",
                        default=None, metavar="ADMIN_URL")
    parser.add_argument("--no-pipelining", action="store_true")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--no-smtp", action="store_true", help="stop after the resolve-and-queue pass")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="judge-burst-"))
    try:
        if args.postgresql:
            with scratch_postgresql(args.postgresql, prefix="judge_burst") as url:
                print(f"PostgreSQL, {args.games} games:")
                run(url, tmp / "data", args.games, not args.no_pipelining, args.profile, not args.no_smtp)
        else:
            print(f"SQLite, {args.games} games:")
            run(f"sqlite:///{tmp / 'judge.sqlite3'}", tmp / "data", args.games, not args.no_pipelining,
                args.profile, not args.no_smtp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
