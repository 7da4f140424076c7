"""What SIGKILL leaves unknown in the outbox: `judge serve` is killed again
and again while it answers a backlog over SMTP, then left to finish; the
mails left "unconfirmed" are counted, and how many of them the server
really got (issue 24: after kill -9, rows were left unconfirmed that never
reached the server).

Run:  .venv/bin/python bench/outbox_kill_storm.py [--kills 25] [--seed 1] [--mails 500]

The rig is tests/test_crash_recovery.py's (its config, its aiosmtpd server
that takes 10 ms to answer each mail, its kill schedule), in a temp dir.
Printed: the outbox's statuses at the end, the unconfirmed mails (those the
server got: truly unknown to the judge, its answer lost with the process;
those it never got: a false alarm for the operator), and the Message-IDs
the server got twice (must be 0). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import email
import email.policy
import mailbox
import random
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import smtp_server  # noqa: E402
from tests import test_crash_recovery as rig  # noqa: E402
from tests.harness import make_mail  # noqa: E402


def storm(kills: int, seed: int, mails: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="judge-kill-storm-"))
    smtp_server._Handler = rig.SlowToAnswer
    server = smtp_server.SmtpTestServer(mode="plain").start()
    try:
        cfg, db, inbox_path = rig.write_config(tmp, server.port)
        inbox_path.parent.mkdir(parents=True)
        inbox = mailbox.Maildir(inbox_path, create=True)
        for i in range(mails):
            inbox.add(make_mail(f"player{i}@players.test", "LIST" if i % 2 else "HELP", message_id=f"<k{i}@p.test>"))
        cmd, log, rnd = rig.judge_command(), tmp / "judge.log", random.Random(seed)
        for k in range(kills):
            proc = rig.start(cmd, cfg, log)
            rig.wait_ready(log, k + 1)
            time.sleep(rnd.uniform(0.1, 1.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        proc = rig.start(cmd, cfg, log)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            c = rig.db_counts(db)
            if c.get("inbound_messages.done", 0) == mails and \
                    {k for k in c if k.startswith("outbox.")} <= {"outbox.sent", "outbox.unconfirmed"} and \
                    c.get("outbox.sent", 0) + c.get("outbox.unconfirmed", 0) >= mails:
                break
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        time.sleep(0.3)
        con = sqlite3.connect(db)
        rows = con.execute("SELECT message_id, status FROM outbox").fetchall()
        con.close()
        got = collections.Counter(str(email.message_from_bytes(m.raw, policy=email.policy.default)["Message-ID"])
                                  .strip() for m in list(server.messages))
        unconfirmed = [m for m, s in rows if s == "unconfirmed"]
        at_server = sum(m in got for m in unconfirmed)
        print(f"seed {seed}, {kills} kills, {len(rows)} replies: {dict(collections.Counter(s for _, s in rows))}; "
              f"unconfirmed {len(unconfirmed)}: the server got {at_server}, never got {len(unconfirmed) - at_server}; "
              f"Message-IDs the server got twice: {sum(n > 1 for n in got.values())}", flush=True)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=25)
    parser.add_argument("--seed", type=int, nargs="+", default=[1])
    parser.add_argument("--mails", type=int, default=500)
    args = parser.parse_args()
    for seed in args.seed:
        storm(args.kills, seed, args.mails)


if __name__ == "__main__":
    main()
