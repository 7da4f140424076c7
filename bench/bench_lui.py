"""Timing of one Lowest Unique Integer bid through the whole daemon (issue 13).

Run:  .venv/bin/python bench/bench_lui.py [--bids 1000]

A judge on SQLite in a temp dir (tests/harness.py: Maildir folders, a
manual clock, password_cost 4) runs an F11 game of 11 players, the auction
open (starting chips raised so that 1,000 bids stay valid, timers long so
that no seat is won meanwhile). Each bid is a mail "SIGNON ?game pw / BID
seat n" from the next player, timed from the raw bytes to the commit:
stored (Judge.receive), then run (Judge.process_pending): the password
checked, the bid checked against the four rules, the state loaded and
stored, the reply and 11 board mails (the text table and the PNG picture)
queued in the outbox (SET BOARDMAIL BID; by default an 11-player game
gets an hourly digest instead, issue 26: --boardmail). The outbox is not sent (that is the transport's time,
not the bid's).

Baseline, in the same run and interleaved with the bids: storing a raw
mail of the same size alone (Judge.receive), the first thing any mail
costs; the stored baseline mails are run untimed before the next bid so
that the bids find the queue empty. The ratio median(bid) / median(store)
is the number to compare between machines. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter_ns, process_time_ns

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402

from judge.games import find_game  # noqa: E402
from judge.methods.lui.persist import from_json  # noqa: E402
from judge.store.models import OutboxMessage  # noqa: E402
from tests.harness import Harness, make_mail  # noqa: E402

GM = "gm@example.test"
SEATS = "OPQRSTUVWXYZ"


def player(k: int) -> str:
    return f"player{k:02d}@example.test"


def setup(h: Harness, bids: int, boardmail: str | None = None) -> None:
    prizes = "\n".join(f"SET PRIZE {seat} 1 {k % 3}" for k, seat in enumerate(SEATS))
    mode = f"\nSET BOARDMAIL {boardmail}" if boardmail else ""
    h.mail(GM, f"CREATE ?bench gmpw lui\nSET PRESET F11\nSET CHIPS {20 * bids}\nSET TIMER {24 * 365}\n{prizes}{mode}")
    for k in range(11):
        h.send(player(k), "SIGNON ?bench pw")
    h.run()
    h.mail(GM, "SIGNON Mbench gmpw\nSTART")
    assert "started" in h.body(h.last_to(GM)), h.body(h.last_to(GM))
    h.clock.advance(hours=25)
    h.run()


def fmt(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} us"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bids", type=int, default=1000)
    ap.add_argument("--boardmail", choices=["BID", "DIGEST", "NONE"],
                    help="the GM's SET BOARDMAIL (default: the game's own, an hourly digest for 11 players); "
                         "BID is the board mail a bid of before issue 26")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        h = Harness(Path(tmp) / "data", f"sqlite:///{Path(tmp) / 'judge.sqlite3'}")
        setup(h, args.bids, args.boardmail)
        judge = h.judge
        with judge.sessions() as s:
            before = s.scalar(select(func.count()).select_from(OutboxMessage))
            boards_before = s.scalar(select(func.count()).select_from(OutboxMessage)
                                     .where(OutboxMessage.subject.like("%the board has changed%")))
        bid_t, store_t = [], []
        # CPU time of this process beside the wall clock: on a loaded
        # machine the wall clock counts other processes' time too.
        bid_c, store_c = [], []
        for k in range(args.bids):
            h.clock.advance(seconds=10)
            who, seat, amount = player(k % 11), SEATS[k % 12], k + 1
            raw = make_mail(who, f"SIGNON ?bench pw\nBID {seat} {amount}", date=h.clock.now())
            filler = make_mail("someone@example.test", "x" * len(f"SIGNON ?bench pw\nBID {seat} {amount}"),
                               date=h.clock.now())
            c0, t0 = process_time_ns(), perf_counter_ns()
            judge.receive(raw, "bench")
            judge.process_pending()
            c1, t1 = process_time_ns(), perf_counter_ns()
            judge.receive(filler, "bench")
            c2, t2 = process_time_ns(), perf_counter_ns()
            judge.process_pending()  # untimed: the baseline's mail out of the way
            bid_t.append(t1 - t0)
            store_t.append(t2 - t1)
            bid_c.append(c1 - c0)
            store_c.append(c2 - c1)
        with judge.sessions() as s:
            after = s.scalar(select(func.count()).select_from(OutboxMessage))
            boards = s.scalar(select(func.count()).select_from(OutboxMessage)
                              .where(OutboxMessage.subject.like("%the board has changed%"))) - boards_before
            game = find_game(s, "bench")
            valid = len(from_json(game.method_state["state"]).history)
        assert valid == args.bids, f"{valid} valid bids of {args.bids}"
        h.close()
    med_bid, med_store = statistics.median(bid_t), statistics.median(store_t)
    p90 = statistics.quantiles(bid_t, n=10)[-1]
    print(f"LUI bench: {args.bids} bids through the whole daemon (SQLite), F11, 11 players, "
          f"board mails {args.boardmail or 'the default (DIGEST)'}, Python {sys.version.split()[0]}")
    print(f"  one bid (stored, checked, reply + board mails queued): median {fmt(med_bid)}, p90 {fmt(p90)}")
    print(f"  storing the raw mail alone:                           median {fmt(med_store)}")
    print(f"  ratio: {med_bid / med_store:.1f}x")
    cpu_bid, cpu_store = statistics.median(bid_c), statistics.median(store_c)
    print(f"  CPU time: one bid median {fmt(cpu_bid)}, storing {fmt(cpu_store)}, ratio {cpu_bid / cpu_store:.1f}x")
    print(f"  outbox rows queued during the bids: {after - before} ({boards} board mails, "
          f"{boards / args.bids:.1f} a bid)")


if __name__ == "__main__":
    main()
