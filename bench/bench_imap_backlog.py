"""Timing of an IMAP backlog: N mails waiting in the judge's INBOX on a real Dovecot.

Run:  .venv/bin/python bench/bench_imap_backlog.py [--mails 10000]

Starts a private mail rig (tests/mailrig.sh, its own folder under /tmp and
free ports; stopped and removed at the end, also on error), writes N mails
straight into the Maildir new/ folder of judge@example.test and lets Dovecot
index them (one SELECT), then times in the same process:

* baseline: a plain imapclient session fetching every message (UID SEARCH
  ALL, then FETCH BODY.PEEK[] in chunks of 500); run twice (cold, then warm
  page cache), the faster of the two is the one compared;
* the judge: a Harness (SQLite in a temp dir, password_cost 4) with an
  ImapSource on that INBOX (processed="flag"), run_once() until a pass finds
  nothing to do: every mail fetched, parsed, validated, stored and its reply
  queued in the outbox (the issue's "end to end"; the ratio is taken on
  this). Sending the queued replies to the Maildir outbox is timed after it
  and printed apart; the counts at the end check that nothing is missing.

The judge's timed part is also given in CPU seconds of this process, and
the parse-alone floor is CPU time: on a machine shared with other work the
wall clock says more about the neighbours than about the judge.

--profile FILE writes cProfile stats of the judge's timed part;
--postgresql [ADMIN_URL] stores in a fresh PostgreSQL database instead.

The mails come from 200 players: ~40% LIST or HELP, ~40% SIGNON ?gN pw plus
a 7-line bid list, ~20% prose/garbage. The games are real: an untimed setup
phase mails CREATE (29 games), SIGNON (every player) and START (the 28 full
games) to the judge through its Maildir inbox before the IMAP source is put
in. Players 196..199 sit in the 29th game, which never fills, so their bid
lists get an error reply. The per-sender hourly cap is raised so that large
N are not cut off as floods (the cap query still runs). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import random
import shutil
import socket
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from time import perf_counter, process_time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from imapclient import IMAPClient  # noqa: E402
from sqlalchemy import create_engine, func, select, text  # noqa: E402

from judge import outbox as outbox_module  # noqa: E402
from judge.mail.inbound import parse_message  # noqa: E402
from judge.mailrunner import command_lines  # noqa: E402
from judge.sources.imap import ImapSettings, ImapSource  # noqa: E402
from judge.sources.watermark import WatermarkStore  # noqa: E402
from bench.scratch import scratch_postgresql  # noqa: E402
from judge.store.models import InboundMessage, OutboxMessage  # noqa: E402
from tests.conftest_mail import MailRig, start_mailrig  # noqa: E402
from tests.harness import Harness, make_mail  # noqa: E402

JUDGE = "judge@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
VALUES = [40, 30, 20, 15, 10, 5, 1]
N_PLAYERS = 200
PLAYERS_PER_GAME = 7
CHUNK = 500
PROSE = [
    "Hi judge, how do I join a game?",
    "Thanks for running this!",
    "asdf qwerty\nzxcv",
    "Please put me on the waiting list for the next game.",
    "I think my last bid was wrong, can you check?\nRegards",
    "lorem ipsum dolor sit amet\nconsectetur adipiscing elit",
    "> quoted stuff\nwhat does this mean?",
    "BID 40 on Austria please",
]


# -- mail rig --------------------------------------------------------------
def judge_maildir(rig: MailRig) -> Path:
    return rig.dir / "mail" / "example.test" / "judge" / "Maildir"


def client(rig: MailRig) -> IMAPClient:
    c = IMAPClient(rig.host, port=rig.imap_port, ssl=False, timeout=120)
    c.login(JUDGE, rig.password(JUDGE))
    return c


# -- the mails -------------------------------------------------------------
def player(k: int) -> str:
    return f"player{k:03d}@players.test"


def game_of(k: int) -> int:
    return k // PLAYERS_PER_GAME + 1


def bid_text(rnd: random.Random) -> str:
    values = VALUES[:]
    rnd.shuffle(values)
    forms = ["{name}: {v}", "{name} {v}", "{letter}={v}", "{lower} {v}"]
    style = rnd.randrange(len(forms))
    return "\n".join(forms[(i + style) % len(forms)].format(name=p, letter=p[0], lower=p.lower(), v=v)
                     for i, (p, v) in enumerate(zip(POWERS, values)))


def backlog(n: int, seed: int = 1) -> tuple[list[bytes], Counter]:
    rnd = random.Random(seed)
    mails, kinds = [], Counter()
    for i in range(n):
        k = rnd.randrange(N_PLAYERS)
        x = rnd.random()
        if x < 0.4:
            kind = "list/help"
            body = rnd.choice(["LIST", "HELP", "LIST\nSIGNOFF", f"LIST ?g{game_of(k)}"])
        elif x < 0.8:
            kind = "signon+bids"
            tail = rnd.choice(["", "\nSIGNOFF", "\nSIGNOFF\n-- \nsent from my phone"])
            body = f"SIGNON ?g{game_of(k)} pw-{k:03d}\n{bid_text(rnd)}{tail}"
        else:
            kind = "prose"
            body = rnd.choice(PROSE)
        kinds[kind] += 1
        mails.append(make_mail(f"Player {k:03d} <{player(k)}>", body, subject=f"bench {i}",
                               message_id=f"<bench.{i}.{os.getpid()}.{time.time_ns()}@players.test>"))
    return mails, kinds


def fill_maildir(rig: MailRig, mails: list[bytes]) -> float:
    """Write the mails into new/ (Maildir names, owned by mail 8:8); returns seconds."""
    new = judge_maildir(rig) / "new"
    t0 = perf_counter()
    stamp, pid, host = int(time.time()), os.getpid(), socket.gethostname().replace("/", "_").replace(":", "_")
    for i, raw in enumerate(mails):
        # Write to tmp/ then rename into new/, as Maildir writers do.
        name = f"{stamp}.M{i}P{pid}Q{i}.{host},S={len(raw)}"
        tmp = judge_maildir(rig) / "tmp" / name
        with open(tmp, "wb") as f:
            f.write(raw)
        os.chown(tmp, 8, 8)
        os.rename(tmp, new / name)
    return perf_counter() - t0


# -- baseline --------------------------------------------------------------
def baseline(rig: MailRig) -> tuple[float, int, int]:
    t0 = perf_counter()
    c = client(rig)
    try:
        c.select_folder("INBOX")
        uids = c.search(["ALL"])  # imapclient: UID SEARCH
        got = nbytes = 0
        for i in range(0, len(uids), CHUNK):
            data = c.fetch(uids[i:i + CHUNK], ["BODY.PEEK[]"])
            for item in data.values():
                body = item.get(b"BODY[]")
                if body is not None:
                    got += 1
                    nbytes += len(body)
    finally:
        c.logout()
    return perf_counter() - t0, got, nbytes


# -- the pure part alone ----------------------------------------------------
def parse_only(mails: list[bytes]) -> float:
    """CPU seconds to read every mail (parse_message) and parse its command
    lines with the grammar, as the runner does (the lines it reads, up to
    SIGNOFF): no database, no reply. A floor under the judge's own work per
    mail; CPU time, so that other processes on the machine do not count."""
    t0 = process_time()
    for raw in mails:
        for _ in command_lines(parse_message(raw, own_addresses=[JUDGE]).text):
            pass
    return process_time() - t0


# -- the judge -------------------------------------------------------------
class Timers:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter = Counter()

    def wrap(self, obj, attr: str, label: str) -> None:
        fn = getattr(obj, attr)

        @functools.wraps(fn)
        def timed(*a, **kw):
            t0 = perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.seconds[label] += perf_counter() - t0
                self.calls[label] += 1

        setattr(obj, attr, timed)


def setup_games(h: Harness) -> None:
    """Untimed: CREATE, SIGNON and START by mail through the judge's Maildir inbox."""
    n_games = game_of(N_PLAYERS - 1)
    for g in range(1, n_games + 1):
        h.send(f"GM {g} <gm{g}@example.test>", f"CREATE ?g{g} gm-{g} blind-auction standard\nSET DEADLINE +48h\nSIGNOFF")
    h.run()
    for k in range(N_PLAYERS):
        h.send(f"Player {k:03d} <{player(k)}>", f"SIGNON ?g{game_of(k)} pw-{k:03d}\nSIGNOFF")
    while h.run()["processed"]:
        pass
    for g in range(1, n_games + 1):
        if g * PLAYERS_PER_GAME <= N_PLAYERS:
            h.send(f"GM {g} <gm{g}@example.test>", f"SIGNON Mg{g} gm-{g}\nSTART")
    while any(v for k, v in h.run().items() if k in ("stored", "processed")) :
        pass
    while h.run()["sent"].get("sent"):
        pass
    started = sum("is open" in h.body(h.last_to(f"gm{g}@example.test")) for g in range(1, n_games + 1))
    print(f"setup: {n_games} games created, {N_PLAYERS} players signed on, {started} games started")


def run_judge(rig: MailRig, tmp: Path, n: int, profile: str | None = None, database_url: str | None = None) -> tuple[float, Timers, int, dict]:
    h = Harness(tmp / "data", database_url or f"sqlite:///{tmp / 'judge.sqlite3'}", password_cost=4)
    try:
        h.judge.config = dataclasses.replace(h.judge.config, max_mails_per_sender_per_hour=10 * n + 1000)
        h.config = h.judge.config
        setup_games(h)
        settings = ImapSettings(host=rig.host, port=rig.imap_port, security="none", username=JUDGE,
                                password=rig.password(JUDGE), processed="flag", timeout=120)
        src = ImapSource(settings, WatermarkStore(h.judge.sessions), name="imap:bench")
        h.judge.sources = [src]
        with h.judge.sessions() as s:
            sent_before = s.scalar(select(func.count(OutboxMessage.id)))

        t = Timers()
        t.wrap(src, "fetch", "source.fetch")
        t.wrap(src, "ack_batch", "source.ack (watermark + flag)")
        t.wrap(h.judge, "receive_batch", "receive/store")
        t.wrap(h.judge, "process_pending", "process_pending")
        # The timed part ends when every reply is queued in the outbox (the
        # issue's "end to end"); sending them is timed on its own after it.
        transport, h.judge.transport = h.judge.transport, None
        passes = 0
        prof = None
        if profile:
            import cProfile
            prof = cProfile.Profile()
            prof.enable()
        t0, cpu0 = perf_counter(), process_time()
        try:
            while True:
                r = h.judge.run_once()
                passes += 1
                if not r["stored"] and not r["processed"]:
                    break
        finally:
            elapsed = perf_counter() - t0
            t.seconds["judge CPU"] = process_time() - cpu0
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile)
            h.judge.sources = []
            src.close()
        h.judge.transport = transport
        t0 = perf_counter()
        sent = 0
        while n_sent := outbox_module.send_due(h.judge.sessions, transport, h.judge.clock, h.config,
                                               limit=1000)["sent"]:
            sent += n_sent
        t.seconds["sending the replies"] = perf_counter() - t0
        t.calls["sending the replies"] = sent
        with h.judge.sessions() as s:
            status = dict(s.execute(select(InboundMessage.status, func.count(InboundMessage.id))
                                    .where(InboundMessage.source == "imap:bench")
                                    .group_by(InboundMessage.status)).all())
            out = dict(s.execute(select(OutboxMessage.status, func.count(OutboxMessage.id))
                                 .group_by(OutboxMessage.status)).all())
            kinds = dict(s.execute(select(OutboxMessage.kind, func.count(OutboxMessage.id))
                                   .group_by(OutboxMessage.kind)).all())
            raws = s.scalars(select(OutboxMessage.raw).join(InboundMessage, OutboxMessage.inbound_id == InboundMessage.id)
                             .where(InboundMessage.source == "imap:bench")).all()
            accepted = sum(b"bid list accepted" in r for r in raws)
        files = len(list((h.config.outbox_path / "new").iterdir())) + len(list((h.config.outbox_path / "cur").iterdir()))
        info = {"inbound": status, "outbox": out, "kinds": kinds, "replies": sum(out.values()) - sent_before,
                "outbox_files": files, "passes": passes,
                "accepted": accepted}
        return elapsed, t, passes, info
    finally:
        h.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mails", type=int, default=10000, help="mails in the backlog")
    ap.add_argument("--profile", metavar="FILE", help="write cProfile stats of the judge's run to FILE")
    ap.add_argument("--postgresql", metavar="ADMIN_URL", nargs="?", const="postgresql+psycopg://postgres@127.0.0.1:5432/test",
                    help="store in a fresh PostgreSQL database made (and dropped) through ADMIN_URL "
                         "(default: the test server on 127.0.0.1:5432) instead of SQLite")
    args = ap.parse_args()
    n = args.mails

    rig = start_mailrig("judge-bench-mailrig")
    tmp = Path(tempfile.mkdtemp(prefix="judge-bench-imap-"))
    stack = contextlib.ExitStack()
    try:
        c = client(rig)  # first login: Dovecot creates the Maildir
        c.select_folder("INBOX")
        c.logout()
        mails, kinds = backlog(n)
        t_write = fill_maildir(rig, mails)
        t0 = perf_counter()
        c = client(rig)
        exists = c.select_folder("INBOX")[b"EXISTS"]
        c.logout()
        t_index = perf_counter() - t0
        print(f"backlog: {n} mails ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), "
              f"{sum(map(len, mails)) / 1e6:.1f} MB; written in {t_write:.2f} s, "
              f"indexed by Dovecot in {t_index:.2f} s; INBOX EXISTS {exists}")

        b_cold, got_cold, nbytes = baseline(rig)
        b_warm, got_warm, _ = baseline(rig)
        print(f"baseline fetched {got_warm} mails, {nbytes / 1e6:.1f} MB (cold {b_cold:.2f} s, warm {b_warm:.2f} s)")

        t_parse = min(parse_only(mails) for _ in range(2))
        if args.postgresql:
            database_url = stack.enter_context(scratch_postgresql(args.postgresql))
            store = "PostgreSQL"
        else:
            database_url, store = None, "SQLite"
        j_time, timers, passes, info = run_judge(rig, tmp, n, args.profile, database_url)

        print()
        print(f"IMAP backlog bench, Python {sys.version.split()[0]}, {store}, password_cost 4")
        head = f"{'item':<36} {'seconds':>9} {'mails/s':>9}"
        print(head)
        print("-" * len(head))
        print(f"{'N':<36} {n:>9}")
        print(f"{'baseline fetch (cold)':<36} {b_cold:>9.2f} {n / b_cold:>9.0f}")
        print(f"{'baseline fetch (warm)':<36} {b_warm:>9.2f} {n / b_warm:>9.0f}")
        print(f"{'judge end to end':<36} {j_time:>9.2f} {n / j_time:>9.0f}")
        j_cpu = timers.seconds["judge CPU"]
        print(f"{'  of it CPU time of this process':<36} {j_cpu:>9.2f} {n / j_cpu:>9.0f}   "
              f"(Dovecot's and the kernel's work aside; steadier on a busy machine)")
        b_best = min(b_cold, b_warm)
        print(f"{'ratio baseline(best) / judge':<36} {b_best / j_time:>9.3f}   (aim >= 0.5)")
        print(f"{'parsing alone (mail + grammar, CPU)':<36} {t_parse:>9.2f} {n / t_parse:>9.0f}   "
              f"(fetch + this: ratio <= {b_best / (b_best + t_parse):.3f})")
        print()
        head = f"{'judge breakdown':<36} {'seconds':>9} {'share':>7} {'calls':>7}"
        print(head)
        print("-" * len(head))
        accounted = 0.0
        for label in ("source.fetch", "receive/store", "source.ack (watermark + flag)", "process_pending"):
            s = timers.seconds.get(label, 0.0)
            accounted += s
            print(f"{label:<36} {s:>9.2f} {s / j_time:>6.1%} {timers.calls.get(label, 0):>7}")
        other = j_time - accounted
        print(f"{'other (deadlines tick, loop)':<36} {other:>9.2f} {other / j_time:>6.1%}")
        print(f"run_once passes: {passes}")
        s = timers.seconds["sending the replies"]
        print(f"afterwards, sending the {timers.calls['sending the replies']} queued mails to the Maildir outbox: "
              f"{s:.2f} s, {timers.calls['sending the replies'] / s:.0f} mails/s (not in the ratio)")
        print()
        print(f"inbound rows of the IMAP source by status: {info['inbound']}")
        print(f"outbox rows by status (incl. setup): {info['outbox']}; by kind: {info['kinds']}")
        print(f"replies queued for the backlog: {info['replies']} ({info['accepted']} say 'bid list accepted'); "
              f"files in the outbox Maildir: {info['outbox_files']}")
    finally:
        stack.close()
        rig.clean()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
