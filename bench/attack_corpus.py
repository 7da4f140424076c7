"""The hostile corpus (issue 9) through the judge's two entry points.

Run:  .venv/bin/python bench/attack_corpus.py [--seed 9] [--fuzz-mails 300] [--fuzz-lines 5000]
          [--deliver-sample 150] [--postgresql [ADMIN_URL]]

Builds the corpus of tests/security/attack_mails.py (the attacks of issue
9, tests/bad_mail/corpus.py's cases, seeded fuzzed mails and fuzzed command
lines packed into mails) and runs it, on a fresh scratch data directory per
entry point (SQLite, or with --postgresql scratch databases made and dropped
through ADMIN_URL), both at once:

* serve: the whole corpus through a real `judge serve` process on its
  Maildir inbox (poll_interval 0.2 s), phase after phase: a phase's mails
  are written to inbox/new in order, and the next phase waits until the
  daemon has stored and run them and sent their replies (or has made no
  progress for --stall seconds: then it counts as stuck, and the later
  mails are handed in but hardly waited for). The cost-of-input mails go one
  at a time, timed; the 50 MB mail alone, with the process's peak memory
  (VmHWM) before and after. Stopped with SIGTERM at the end.
* deliver: a sample of --deliver-sample mails through `judge deliver` (one
  process per mail, the mail on stdin, --jobs at a time, after `judge
  migrate`): the games the attacks need and every key mail of an attack,
  then mails drawn from each family in turn (seeded).

Between two phases the store is touched once: the poison game's deadline is
set in the past (the scratch judge's clock cannot be moved).

Counted, per family and entry point:
  crash       `judge deliver` exited other than 0 (the store is up all along,
              so 75 is a crash too) or timed out; the serve process died or
              did not stop cleanly at SIGTERM; a mail quarantined with a
              Python traceback in its reason; a mail the judge got stuck on
              (stored but never run, with the count of mails held up behind it);
  lost        a mail handed in whose raw bytes are not in inbound_messages
              (a mail over the size limit: its header and its size), nor a
              mail of the same Message-ID and From (a mail sent twice is stored
              once); a mail still in inbox/new is not lost;
  duplicated  a mail answered more than once (outbox rows per inbound_id);
  unhandled   tracebacks: deliver processes with one on stderr, records of the
              daemon's log with one;
  got through what each security family checks, listed with the mail that did
              it: a password in an outbox row, a reply to the Reply-To victim,
              a sender taken from a display name, the poison game holding up
              other mail, a forged line or BBCode tag from a name, a reply of
              more than 200 kB (backscatter amplification), a mail that cost
              more than 2 s beyond a plain one and, at that rate, more than
              5 min at the size limit...
Every mail named in the findings is saved whole in a folder the report names.
Exit status 1 if any crash, loss, duplicate or unhandled error, else 0.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import email
import email.policy
import hashlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.parser import BytesHeaderParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, func, select, text, update  # noqa: E402

from bench.scratch import scratch_postgresql  # noqa: E402
from judge.store.models import Game, InboundMessage, OutboxMessage  # noqa: E402
from tests.security.attack_mails import G, JUDGE, VICTIM, Mail, Phase, build  # noqa: E402

TRACEBACK = "Traceback (most recent call last)"
# A cost-of-input attack got through when its mail took SLOW_EXTRA seconds
# more than a plain mail and, at that rate, a mail of the size limit would
# take more than SLOW_PROJECTED seconds.
SIZE_LIMIT = 10_240_000  # [limits] max_message_bytes, the default the scratch judge runs with
SLOW_EXTRA = 2.0
SLOW_PROJECTED = 300.0
BIG_REPLY = 200_000  # bytes: a reply larger than this amplifies a forged mail (backscatter)
RSS_GROWTH_MB = 100  # the 50 MB mail may not cost the daemon more than this
HEADER_CAP = 64 * 1024  # the most of an oversize mail's header the judge keeps
KINDS = ("crash", "lost", "duplicated", "unhandled", "through")


def judge_command() -> list[str]:
    exe = Path(sys.executable).with_name("judge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "judge"]


def write_config(folder: Path, database: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg = folder / "judge.toml"
    lines = ["[judge]", f'address = "{JUDGE}"', "password_cost = 4", "poll_interval = 0.2"]
    if database:
        lines.append(f'database = "{database}"')
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


def engine_for(url: str):
    if url.startswith("sqlite"):
        return create_engine(url, connect_args={"timeout": 60})
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return create_engine(url)


# -- one run -------------------------------------------------------------------
@dataclass
class Handed:
    """One mail handed to the judge, and what the entry point said."""

    mail: Mail
    status: int | None = None  # deliver's exit status (None: timed out); serve: None
    seconds: float = 0.0  # deliver: the process; serve: a timed phase's mail, from writing it to settled
    stderr: str = ""
    ref: str = ""  # serve: its file name in the Maildir
    untaken: bool = False  # serve: still in inbox/new at the end


@dataclass
class Finding:
    kind: str  # crash | lost | duplicated | unhandled | through
    family: str
    mail: str | None
    what: str
    count: int = 1


@dataclass
class Run:
    mode: str
    database_url: str
    handed: list[Handed] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    rss: dict[str, int] = field(default_factory=dict)  # kB

    def add(self, kind: str, mail: Mail | None, what: str, family: str | None = None, count: int = 1) -> None:
        self.findings.append(Finding(kind, family or (mail.family if mail else "(none)"),
                                     mail.name if mail else None, what, count))


# -- hooks on the store between phases -------------------------------------------
def poison_deadline(engine) -> None:
    """Put the poison game past its deadline (the scratch judge's clock
    cannot be moved)."""
    past = datetime.now(timezone.utc) - timedelta(minutes=5)
    with engine.begin() as c:
        c.execute(update(Game).where(Game.name == G.POISON, Game.state == "bidding").values(deadline=past))


def poison_handled(engine) -> bool:
    with engine.connect() as c:
        return c.scalar(select(Game.state).where(Game.name == G.POISON)) != "bidding"


HOOKS = {"poison-deadline": (poison_deadline, poison_handled)}


# -- serve ---------------------------------------------------------------------
READY = "judge: sending mail through"


class Daemon:
    def __init__(self, cfg: Path, data: Path, log: Path) -> None:
        self.cfg, self.data, self.log = cfg, data, log
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self, timeout: float = 120) -> None:
        with self.log.open("ab") as f:
            self.proc = subprocess.Popen([*judge_command(), "-c", str(self.cfg), "--data-dir", str(self.data), "serve"],
                                         stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.starts += 1
        deadline = time.monotonic() + timeout
        while self.log.read_text(errors="replace").count(READY) < self.starts:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"judge serve did not start:\n{self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def memory(self) -> dict[str, int]:
        """VmHWM (peak) and VmRSS of the daemon, in kB."""
        out = {}
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(value.split()[0])
        except (OSError, AttributeError):
            pass
        return out

    def stop(self, timeout: float = 30) -> int | None:
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def write_maildir(inbox: Path, seq: int, raw: bytes) -> str:
    """Into new/ through tmp/, named and dated in sequence: the daemon takes
    a folder's mails in (mtime, name) order, so a chain arrives in order."""
    name = f"{1_700_000_000 + seq}.A{seq:07d}.attack"
    tmp = inbox / "tmp" / name
    tmp.write_bytes(raw)
    stamp = 1_700_000_000_000_000_000 + seq * 1_000_000
    os.utime(tmp, ns=(stamp, stamp))
    os.rename(tmp, inbox / "new" / name)
    return name


def pending(engine, inbox: Path) -> int:
    """Mails not yet stored, stored mails not yet run, replies not yet sent."""
    files = sum(1 for n in os.listdir(inbox / "new") if not n.startswith("."))
    now = datetime.now(timezone.utc)
    with engine.connect() as c:
        rows = c.scalar(select(func.count()).select_from(InboundMessage).where(InboundMessage.status == "new"))
        out = c.scalar(select(func.count()).select_from(OutboxMessage).where(
            OutboxMessage.status.in_(("queued", "sending")), OutboxMessage.next_attempt_at <= now))
    return files + rows + out


def run_serve(phases: list[Phase], work: Path, database_url: str | None, args) -> Run:
    t_start = time.monotonic()
    data = work / "data"
    url = database_url or f"sqlite:///{data / 'judge.sqlite3'}"
    run = Run("serve", url)
    cfg = write_config(work, database_url)
    inbox = data / "inbox"
    for sub in ("tmp", "new", "cur"):
        (inbox / sub).mkdir(parents=True, exist_ok=True)
    log = work / "serve.log"
    daemon = Daemon(cfg, data, log)
    daemon.start()
    engine = engine_for(url)
    seq = 0
    stalled = False

    def wait(what: str, until=None, timeout: float = args.timeout, stall: float | None = args.stall) -> bool:
        """Until `until` (default: nothing pending); False after `timeout`,
        or after `stall` seconds without progress."""
        deadline = time.monotonic() + timeout
        last, moved = None, time.monotonic()
        while True:
            if not daemon.alive():
                run.add("crash", None, f"the serve process died (status {daemon.proc.returncode}) during {what}; "
                                       f"started again", family="(serve)")
                if daemon.starts > 3:
                    return False
                daemon.start()
            try:
                if until is not None:
                    if until():
                        return True
                else:
                    left = pending(engine, inbox)
                    if left == 0:
                        return True
                    if left != last:
                        last, moved = left, time.monotonic()
                    elif stall is not None and time.monotonic() - moved > stall:
                        run.notes.append(f"serve: no progress for {stall:.0f} s during {what} ({left} pending)")
                        return False
            except Exception as err:  # the store busy: look again
                run.notes.append(f"serve: store check failed during {what}: {err}")
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    try:
        for phase in phases:
            if phase.before:
                hook, done = HOOKS[phase.before]
                hook(engine)
                if not wait(f"the hook {phase.before}", until=lambda: done(engine), timeout=5 if stalled else 30):
                    run.notes.append(f"serve: the daemon did not act on {phase.before}")
            groups = [[m] for m in phase.mails()] if phase.timed else [phase.mails()]
            before = daemon.memory()
            t_phase = time.monotonic()
            for group in groups:
                t0 = time.monotonic()
                handed = []
                for mail in group:
                    handed.append(Handed(mail, ref=write_maildir(inbox, seq, mail.raw)))
                    seq += 1
                run.handed += handed
                # Once the daemon is stuck, later mails are still handed in
                # (and counted), but waited for only briefly.
                ok = wait(f"phase {phase.name!r}", timeout=5 if stalled else args.timeout,
                          stall=None if phase.timed else args.stall)
                if phase.timed:
                    handed[0].seconds = time.monotonic() - t0
                if not ok and not stalled:
                    stalled = True
                    run.notes.append(f"serve: the daemon got stuck in phase {phase.name!r}; later mails are "
                                     f"handed in but hardly waited for")
            run.timings.append((phase.name, time.monotonic() - t_phase))
            if phase.measure_rss:
                after = daemon.memory()
                run.rss.update({"before_" + k: v for k, v in before.items()})
                run.rss.update({"after_" + k: v for k, v in after.items()})
    finally:
        status = daemon.stop()
        run.rss.update({"final_" + k: v for k, v in daemon.memory().items()})
        engine.dispose()
    if status != 0:
        run.add("crash", None, f"judge serve stopped with status {status} at SIGTERM "
                               f"({'killed after 30 s' if status is None else 'not 0'})", family="(serve)")
    for h in run.handed:  # still in the Maildir: never taken, but not lost (a new daemon takes it)
        h.untaken = (inbox / "new" / h.ref).exists()
    run.log = log.read_text(errors="replace")
    run.seconds = time.monotonic() - t_start
    return run


# -- deliver -------------------------------------------------------------------
def deliver_sample(phases: list[Phase], n: int, seed: int) -> set[str]:
    """Every mail of the required phases and every key mail; then mails drawn
    from each family in turn until n (chains keep their order when run)."""
    chosen: set[str] = set()
    rest: dict[str, list[str]] = collections.defaultdict(list)
    for phase in phases:
        for mail in phase.mails():
            if mail.serve_only:
                continue
            if phase.required or mail.key:
                chosen.add(mail.name)
            else:
                rest[mail.family].append(mail.name)
    rng = random.Random(f"{seed}:deliver-sample")
    families = sorted(rest)
    rng.shuffle(families)
    for names in rest.values():
        rng.shuffle(names)
    budget = n - len(chosen)
    while budget > 0 and any(rest[f] for f in families):
        for f in families:
            if budget > 0 and rest[f]:
                chosen.add(rest[f].pop())
                budget -= 1
    return chosen


def run_deliver(phases: list[Phase], sample: set[str], work: Path, database_url: str | None, args) -> Run:
    t_start = time.monotonic()
    data = work / "data"
    url = database_url or f"sqlite:///{data / 'judge.sqlite3'}"
    run = Run("deliver", url)
    cfg = write_config(work, database_url)
    cmd = [*judge_command(), "-c", str(cfg), "--data-dir", str(data), "deliver"]
    lock = threading.Lock()
    engine = None
    # The schema first, as an installation does: two first mails on a store
    # not yet made would race to create it (the loser exits 75, the MTA retries).
    made = subprocess.run([*judge_command(), "-c", str(cfg), "--data-dir", str(data), "migrate"],
                          capture_output=True, text=True, timeout=args.timeout)
    if made.returncode != 0:
        run.add("crash", None, f"judge migrate exited {made.returncode}: {_last_line(made.stderr)}", family="(deliver)")

    def one(mail: Mail) -> None:
        h = Handed(mail)
        t0 = time.monotonic()
        try:
            done = subprocess.run(cmd, input=mail.raw, capture_output=True, timeout=args.timeout,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"})
            h.status, h.stderr = done.returncode, done.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as err:
            h.status, h.stderr = None, (err.stderr or b"").decode("utf-8", "replace")
        h.seconds = time.monotonic() - t0
        with lock:
            run.handed.append(h)

    def chain(mails: list[Mail]) -> None:
        for mail in mails:
            one(mail)

    for phase in phases:
        chains = [[m for m in c if m.name in sample] for c in phase.chains]
        chains = [c for c in chains if c]
        if not chains:
            continue
        if phase.before:
            engine = engine or engine_for(url)
            HOOKS[phase.before][0](engine)
        t0 = time.monotonic()
        if phase.timed:  # one at a time: each timed alone
            for c in chains:
                chain(c)
        else:
            with ThreadPoolExecutor(args.jobs) as pool:
                for _ in pool.map(chain, chains):
                    pass
        run.timings.append((phase.name, time.monotonic() - t0))
    if engine is not None:
        engine.dispose()
    run.seconds = time.monotonic() - t_start
    return run


# -- what the store holds ----------------------------------------------------------
@dataclass
class Row:
    id: int
    message_id: str
    raw: bytes
    status: str
    reason: str | None
    sender: str | None
    oversize: int | None
    processed_at: datetime | None


@dataclass
class Out:
    id: int
    inbound_id: int | None
    recipients: list[str]
    kind: str
    status: str
    raw: bytes
    text: str


# Where out_text puts an attachment (the resolution.json): no forum post.
ATTACHMENT = "--- attachment:"


def out_text(raw: bytes) -> str:
    """Subject, To and every text (and JSON) part of an outbox mail, decoded."""
    try:
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        parts = [f"Subject: {msg['Subject']}", f"To: {msg['To']}"]
        for part in msg.walk():
            if part.is_multipart():
                continue
            if part.get_content_maintype() == "text" or part.get_content_type() == "application/json":
                try:
                    content = part.get_content()
                except Exception:
                    content = part.get_payload(decode=True) or b""
                if part.get_content_maintype() != "text":
                    parts.append(f"{ATTACHMENT} {part.get_filename()}")
                parts.append(content.decode("utf-8", "replace") if isinstance(content, bytes) else content)
        return "\n".join(parts)
    except Exception:
        return raw.decode("utf-8", "replace")


def key_of(raw: bytes) -> tuple[str | None, str]:
    """(Message-ID, From) as written: a mail sent again under the same pair is
    stored once by design (the Message-ID is unique per sender)."""
    try:
        head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
        msg = BytesHeaderParser(policy=email.policy.compat32).parsebytes(head)
        value = msg.get("Message-ID")
        mid = None
        if value is not None:
            found = re.search(r"<([^<>]*)>", str(value))
            mid = re.sub(r"\s+", "", found.group(1)) if found else (str(value).split() or [None])[0]
        froms = "\n".join(" ".join(str(v).split()).lower() for v in msg.get_all("From") or [])
        return mid or None, froms
    except Exception:
        return None, ""


class View:
    """One run's store, read once, and the mails matched to its rows."""

    def __init__(self, run: Run, engine) -> None:
        self.run, self.engine = run, engine
        # Plain SQL, every column by name: the store of an older judge reads too.
        with engine.connect() as c:
            self.rows = {}
            for r in c.execute(text("SELECT * FROM inbound_messages")).mappings():
                self.rows[r["id"]] = Row(r["id"], r["message_id"], bytes(r["raw"]), r["status"], r["reason"],
                                         r["sender"], r.get("oversize"), r["processed_at"])
            self.outbox = []
            for r in c.execute(text("SELECT id, inbound_id, recipients, kind, status, raw FROM outbox ORDER BY id")):
                recipients = json.loads(r.recipients) if isinstance(r.recipients, str) else list(r.recipients or [])
                raw = bytes(r.raw)
                self.outbox.append(Out(r.id, r.inbound_id, recipients, r.kind, r.status, raw, out_text(raw)))
            self.games = {r["name"]: dict(r) for r in c.execute(text("SELECT * FROM games")).mappings()}
            self.players = [dict(r) for r in c.execute(text(
                "SELECT p.address, p.name, p.status, g.name AS game FROM players p JOIN games g ON p.game_id = g.id"))
                .mappings()]
            self.entropy = [t for t, in c.execute(text("SELECT text FROM entropy"))]
        self.mails = {h.mail.name: h.mail for h in run.handed}
        self.handed = {h.mail.name: h for h in run.handed}
        self.row_of: dict[str, int | None] = {}
        self.by_inbound: dict[int, list[Out]] = collections.defaultdict(list)
        for o in self.outbox:
            if o.inbound_id is not None:
                self.by_inbound[o.inbound_id].append(o)
        self._match()

    def _match(self) -> None:
        by_hash: dict[bytes, int] = {}
        by_key: dict[tuple[str | None, str], int] = {}
        oversize: list[Row] = []
        for row in sorted(self.rows.values(), key=lambda r: r.id):
            by_hash.setdefault(hashlib.sha256(row.raw).digest(), row.id)
            key = key_of(row.raw)
            if key[0]:
                by_key.setdefault(key, row.id)
            if row.oversize is not None:
                oversize.append(row)
        for h in self.run.handed:
            raw = h.mail.raw
            found = by_hash.get(hashlib.sha256(raw).digest())
            if found is None:
                found = next((r.id for r in oversize if r.oversize == len(raw) and raw.startswith(r.raw)), None)
            if found is None:
                key = key_of(raw)
                found = by_key.get(key) if key[0] else None
            self.row_of[h.mail.name] = found

    def has(self, name: str) -> bool:
        return name in self.handed

    def row(self, name: str) -> Row | None:
        found = self.row_of.get(name)
        return self.rows.get(found) if found is not None else None

    def replies(self, name: str) -> list[Out]:
        found = self.row_of.get(name)
        return self.by_inbound.get(found, []) if found is not None else []

    def reply_text(self, name: str) -> str:
        return "\n".join(o.text for o in self.replies(name))

    def to(self, address: str) -> list[Out]:
        return [o for o in self.outbox if address.lower() in (r.lower() for r in o.recipients)]


# -- the four figures --------------------------------------------------------------
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ([A-Z]+) (\S+): (.*)$", re.M)


def log_records(log: str) -> list[tuple[str, str]]:
    """(header, text) of each record of the daemon's log: the header without
    its time, the text with any traceback that follows it."""
    starts = list(LOG_RECORD.finditer(log))
    return [(f"{m.group(1)} {m.group(2)}: {m.group(3)}", log[m.start():starts[i + 1].start() if i + 1 < len(starts)
                                                              else len(log)]) for i, m in enumerate(starts)]


def robustness(run: Run, v: View) -> None:
    names_of_row: dict[int, list[str]] = collections.defaultdict(list)
    for h in run.handed:
        if v.row_of.get(h.mail.name) is not None:
            names_of_row[v.row_of[h.mail.name]].append(h.mail.name)
    untaken: list[Handed] = []
    for h in run.handed:
        if run.mode == "deliver" and h.status != 0:
            what = "timed out" if h.status is None else f"exited {h.status}"
            run.add("crash", h.mail, f"judge deliver {what}: {_stderr_line(h.stderr)}")
        if h.untaken:
            untaken.append(h)
        elif v.row_of.get(h.mail.name) is None:
            run.add("lost", h.mail, "not in inbound_messages (neither its bytes nor its Message-ID and From)")
        if TRACEBACK in h.stderr:
            run.add("unhandled", h.mail, f"a traceback on stderr: {_last_line(h.stderr)}")
    waiting = sorted(r.id for r in v.rows.values() if r.status == "new")
    held = (f"; {len(untaken)} mail(s) were never even taken from inbox/new (not lost: a daemon started again "
            f"takes them)") if untaken else ""
    if untaken and not waiting:
        run.add("crash", untaken[0].mail, "never taken from inbox/new" + held)
    for row_id, names in names_of_row.items():
        row = v.rows[row_id]
        mail = v.mails[names[0]]
        if row.status == "quarantined" and TRACEBACK in (row.reason or ""):
            run.add("crash", mail, f"quarantined with a traceback: {_last_line(row.reason)}")
        elif row.status == "new" and row_id == waiting[0]:
            run.add("crash", mail, f"stored but never run, and {len(waiting) - 1} stored mail(s) after it neither: "
                                   f"the judge runs mail oldest first and is stuck on this one" + held)
        replies = v.by_inbound.get(row_id, [])
        if len(replies) > 1:
            run.add("duplicated", mail, f"{len(replies)} replies: outbox rows "
                                        + ", ".join(f"#{o.id} ({o.kind})" for o in replies))
    if run.mode == "serve":
        # Log records with a traceback, the same ones counted together; a
        # record "mail N quarantined:" names its mail.
        groups: dict[tuple[str | None, str, str], int] = collections.Counter()
        for header, record in log_records(run.log):
            if TRACEBACK not in record:
                continue
            quarantined = re.search(r"mail (\d+) quarantined", header)
            names = names_of_row.get(int(quarantined.group(1))) if quarantined else None
            groups[(names[0] if names else None, re.sub(r"mail \d+", "mail N", header), _last_line(record))] += 1
        for (name, header, last), n in groups.items():
            mail = v.mails[name] if name else None
            run.add("unhandled", mail, f"{n} log record(s) '{header}' with a traceback: {last}", count=n,
                    family=None if mail else "(serve log)")
    for name, game in v.games.items():
        if game["state"] == "stuck":
            run.notes.append(f"{run.mode}: game ?{name} is stuck: {_last_line(game.get('error'))}")


def _stderr_line(textual: str) -> str:
    """The line of deliver's stderr that says why (its own one line, else the last)."""
    for line in textual.splitlines():
        if line.startswith("judge: "):
            return line[:300]
    return _last_line(textual)


def _last_line(textual: str | None) -> str:
    lines = [x.strip() for x in (textual or "").strip().splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


# -- did the attack get through? -------------------------------------------------
def security(run: Run, v: View) -> None:
    through = run.add

    def mail(name: str) -> Mail:
        return v.mails[name]

    def players(game: str) -> list[dict]:
        return [p for p in v.players if p["game"] == game and p["status"] == "active"]

    # Forged senders: never victim@v.org; two senders: no sender, no reply, no effect.
    forged = [n for n in v.handed if n.startswith("forged/")]
    for name in forged:
        row = v.row(name)
        if row is None:
            continue
        several = name in ("forged/two-from-headers", "forged/two-addresses")
        if row.sender == VICTIM:
            through("through", mail(name), f"the judge took the sender to be {VICTIM}")
        elif several and row.sender is not None:
            through("through", mail(name), f"a mail with two senders was run as {row.sender}")
        if several and v.replies(name):
            through("through", mail(name), "a mail with two senders was answered (to "
                                           + ", ".join(r for o in v.replies(name) for r in o.recipients) + ")")
        for o in v.replies(name):
            if VICTIM in o.recipients:
                through("through", mail(name), f"a reply went to {VICTIM} (outbox #{o.id})")
    if forged and [p for p in players(G.OPEN) if p["address"] == VICTIM]:
        through("through", mail(forged[0]), f"{VICTIM} joined ?{G.OPEN} through a forged From")

    # The poison game: the normal game's mail flows, PROCESS is answered.
    if v.has("poison/normal-7th-signon") and f"joined ?{G.NORMAL}" not in v.reply_text("poison/normal-7th-signon"):
        through("through", mail("poison/normal-7th-signon"),
                "after the poison game's deadline the normal game's 7th SIGNON was not answered 'joined'")
    for name in ("poison/process", "poison/list"):
        if v.has(name) and not v.replies(name):
            through("through", mail(name), "not answered after the poison game's deadline")
    if v.has("poison/start"):
        game = v.games.get(G.POISON, {})
        if game.get("state") == "stuck" or game.get("error"):
            through("through", mail("poison/start"),
                    f"the poison game is {game['state']}: {_last_line(game.get('error'))}")
    unsent = [o for o in v.outbox if o.status != "sent"]
    if unsent:
        through("through", None, f"{len(unsent)} outbox row(s) never sent: "
                + ", ".join(f"#{o.id} {o.status}" for o in unsent[:5]), family="poison")

    # Cost of input: the time a mail took beyond a plain mail's, projected
    # to a mail of the size limit (each costs at most linear time).
    timed = [h for h in v.handed.values() if h.mail.family == "long-lines"]
    plain = [h.seconds for h in v.handed.values() if h.mail.family not in ("long-lines", "huge-mail")]
    base = statistics.median(plain) if run.mode == "deliver" and plain else min((h.seconds for h in timed), default=0)
    for h in timed:
        extra = h.seconds - base
        projected = extra * SIZE_LIMIT / max(len(h.mail.raw), 1)
        if extra > SLOW_EXTRA and projected > SLOW_PROJECTED:
            through("through", h.mail, f"took {h.seconds:.1f} s ({extra:.1f} s more than a plain mail) for "
                                       f"{len(h.mail.raw)} bytes: about {projected / 60:.0f} min at the size limit")
    # Amplification: no reply much larger than a mail the judge accepts.
    for name, h in v.handed.items():
        big = max((len(o.raw) for o in v.replies(name)), default=0)
        if big > BIG_REPLY:
            through("through", h.mail, f"a reply of {big} bytes to a mail of {len(h.mail.raw)} bytes")

    # Unicode white space after a valid command.
    for name in v.handed:
        if name.startswith("unicode/bids-") and "bid list accepted" not in v.reply_text(name):
            through("through", mail(name), "its valid bids were not accepted: "
                    + _first(v.reply_text(name), ("Rejected", "Not done", "could not")))
        if name.startswith("unicode/create-") and " created" not in v.reply_text(name):
            through("through", mail(name), "its valid CREATE was not run: "
                    + _first(v.reply_text(name), ("Rejected", "Not done", "could not")))

    # The master password guessed from 300 addresses.
    right = f"guess/{G.RIGHT_GUESS:03d}"
    if v.has(right) and "signed on as master" in v.reply_text(right):
        through("through", mail(right), f"guess no. {G.RIGHT_GUESS}, from an address of its own, signed on as master")
    wrong = [n for n in v.handed if n.startswith("guess/") and n != right]
    if len(wrong) >= 3 and not [o for o in v.to(G.GUESS_GM) if o.kind == "notice" and "password" in o.text]:
        through("through", mail(wrong[0]), f"{len(wrong)} wrong master passwords and the master was not told")

    # 60 forged HELP, then the real bid.
    if v.has("flood/real-bid") and "bid list accepted" not in v.reply_text("flood/real-bid"):
        row = v.row("flood/real-bid")
        through("through", mail("flood/real-bid"), "the real bid after the forged HELP flood was not accepted"
                + (f" ({row.status}: {row.reason})" if row else ""))

    # Backscatter.
    for name in v.handed:
        if name.startswith("spam/"):
            for o in v.replies(name):
                if VICTIM in o.recipients:
                    through("through", mail(name), f"a reply to the Reply-To victim {VICTIM} (#{o.id})")
                elif "PILLS" in o.text:
                    through("through", mail(name), f"the reply quotes the spam (#{o.id})")

    # Passwords in clear: in no outbox row (short ones: in none of the mail's replies).
    seen: set[str] = set()
    for name, h in v.handed.items():
        for secret in h.mail.secrets:
            if secret in seen:
                continue
            seen.add(secret)
            hits = [o for o in v.outbox if secret in o.text or secret.encode() in o.raw]
            if hits:
                through("through", h.mail, f"the password {secret!r} is in {len(hits)} outbox row(s): "
                        + ", ".join(f"#{o.id} ({o.kind} to {', '.join(o.recipients)})" for o in hits[:3]))
        for secret in h.mail.own_secrets:
            pattern = re.compile(rf"(?<![\w-]){re.escape(secret)}(?![\w-])")
            hits = [o for o in v.replies(name) if pattern.search(o.text)]
            if hits:
                through("through", h.mail, f"the password {secret!r} is in its reply #{hits[0].id}")

    # Names that forge lines.
    if v.has("names/create"):
        # A line of its own in any mail; a tag in a forum post (the results'
        # BBCode: in plain text a bracket is only a bracket); the override anywhere.
        checks = [("names/fake-lines", re.compile(r"(?m)^\s*Austria mallory <-- FAKE"), False,
                   "a forged line 'Austria mallory <-- FAKE'"),
                  ("names/fake-lines-2", re.compile(r"(?m)^\s*Austria mallory -- FAKE"), False,
                   "a forged line 'Austria mallory -- FAKE'"),
                  ("names/url", re.compile(re.escape("[url=http://evil")), True, "a [url] tag from a name"),
                  ("names/bbcode", re.compile(re.escape("[img]http://evil")), True, "an [img] tag from a name"),
                  ("names/bbcode", re.compile(re.escape("[/table][img]")), True, "a [/table] from a name"),
                  ("names/rtl-override", re.compile(re.escape(G.RTL_NAME)), False,
                   "the name's U+202E (right-to-left override)")]
        for name, pattern, bbcode, what in checks:
            hits = [o for o in v.outbox if pattern.search(forum_post(o) if bbcode else o.text)]
            if hits and v.has(name):
                through("through", mail(name), f"{what} in {len(hits)} outbox row(s), e.g. #{hits[0].id} "
                                               f"({hits[0].kind} to {', '.join(hits[0].recipients)})")
        joined = {p["name"] for p in players(G.NAMES)}
        if G.ALICE in joined and G.ALICE_LOOKALIKE in joined and v.has("names/cyrillic-alice"):
            through("through", mail("names/cyrillic-alice"), f"{G.ALICE_LOOKALIKE!r} (Cyrillic A) joined beside "
                                                             f"{G.ALICE!r}")
        if v.games.get(G.NAMES, {}).get("state") != "resolved":
            run.notes.append(f"{run.mode}: ?{G.NAMES} was not resolved: no results mail to look for forged lines in")

    # The master takes over a player with FOR.
    if v.has("takeover/sign-on-as-player") and "signed on to" in v.reply_text("takeover/sign-on-as-player"):
        through("through", mail("takeover/sign-on-as-player"),
                "the password the master set with FOR signs the player on")
    if v.has("takeover/for-set-password"):
        if [t for t in v.entropy if G.GM_ENTROPY in t]:
            through("through", mail("takeover/for-set-password"), "the master added ENTROPY in the player's name")
        player = G.PLAYERS[G.TAKEN_OVER]
        if not [o for o in v.to(player) if o.kind == "notice" and "entered" in o.text]:
            through("through", mail("takeover/for-set-password"), f"{player} was not told what the master entered")

    # A replacement's seat claimed first by a forged SIGNON.
    if v.has("replace/forged-claim") and "signed on to" in v.reply_text("replace/forged-claim"):
        through("through", mail("replace/forged-claim"), f"a forged SIGNON from {G.NEWBIE} claimed the seat")

    # Replay, pre-sent Message-ID.
    if v.has("replay/replayed-first") and "bid list accepted" in v.reply_text("replay/replayed-first"):
        through("through", mail("replay/replayed-first"), "the replayed older list replaced the later one")
    if v.has("presend/real-bid") and "bid list accepted" not in v.reply_text("presend/real-bid"):
        through("through", mail("presend/real-bid"), "the real bid behind a pre-sent Message-ID was not accepted")

    # MIME 1,000 deep: answered, not quarantined.
    for name in v.handed:
        if name.startswith("mime/"):
            row = v.row(name)
            if row is not None and row.status == "quarantined" and TRACEBACK not in (row.reason or ""):
                through("through", mail(name), f"quarantined: {_last_line(row.reason)}")
            elif row is not None and row.status != "quarantined" and not v.replies(name):
                through("through", mail(name), f"not answered ({row.status}: {row.reason})")

    # The 50 MB mail: its header kept, answered, and cheap.
    if v.has("huge/50mb"):
        row = v.row("huge/50mb")
        if row is not None and (row.oversize is None or len(row.raw) > HEADER_CAP):
            through("through", mail("huge/50mb"), f"stored whole ({len(row.raw)} bytes)")
        if row is not None and not v.replies("huge/50mb"):
            through("through", mail("huge/50mb"), "not answered")
        growth = (run.rss.get("after_VmHWM", 0) - run.rss.get("before_VmHWM", 0)) / 1024
        if growth > RSS_GROWTH_MB:
            through("through", mail("huge/50mb"), f"the daemon's peak memory grew by {growth:.0f} MB")


def forum_post(o: Out) -> str:
    """The BBCode post of a results mail (after "paste this post"), else ""."""
    if o.kind != "result":
        return ""
    at = o.text.find("paste this post")
    if at < 0:
        return ""
    end = o.text.find(ATTACHMENT, at)
    return o.text[at:end if end >= 0 else None]


def _first(textual: str, words: tuple[str, ...]) -> str:
    for line in textual.splitlines():
        if any(w in line for w in words):
            return line.strip()[:200]
    return _last_line(textual) or "no reply"


def bad_mail_outcomes(run: Run, v: View) -> None:
    """tests/bad_mail/corpus.py's expected outcome, as a note where it differs."""
    off = []
    for name, h in v.handed.items():
        if h.mail.expect is None or v.row(name) is None:
            continue
        row = v.row(name)
        got = {"quarantined": "quarantined", "ignored": "ignored"}.get(row.status) or (
            "answered" if v.replies(name) else f"{row.status}, no reply")
        if got != h.mail.expect and not (name == "bad/duplicate_id_second"):
            off.append(f"{name.split('/', 1)[1]} ({got}, not {h.mail.expect})")
    if off:
        run.notes.append(f"{run.mode}: bad-mail outcomes other than tests/bad_mail/corpus.py expects: "
                         + "; ".join(off))


# -- the report --------------------------------------------------------------------
def analyse(run: Run) -> None:
    engine = engine_for(run.database_url)
    try:
        v = View(run, engine)
        robustness(run, v)
        security(run, v)
        bad_mail_outcomes(run, v)
        run.notes.append(f"{run.mode}: {len(v.rows)} inbound rows ("
                         + ", ".join(f"{k} {n}" for k, n in sorted(collections.Counter(
                             r.status for r in v.rows.values()).items()))
                         + f"), {len(v.outbox)} outbox rows ("
                         + ", ".join(f"{k} {n}" for k, n in sorted(collections.Counter(
                             o.kind for o in v.outbox).items())) + ")")
    finally:
        engine.dispose()


def table(runs: list[Run], phases: list[Phase]) -> tuple[list[str], dict[str, collections.Counter]]:
    """Per family and entry point: mails handed in, and mails (tracebacks,
    for unhandled) with each kind of finding. The totals' "mails" leave the
    setup out: those are the attacks tried."""
    families = list(dict.fromkeys(m.family for p in phases for m in p.mails()))
    extra = sorted({f.family for r in runs for f in r.findings} - set(families))
    lines_in = collections.Counter()
    for p in phases:
        for m in p.mails():
            lines_in[m.family] += m.lines
    cols = [("mails", "mails"), ("crash", "crash"), ("lost", "lost"), ("dup", "duplicated"), ("unh", "unhandled"),
            ("thru", "through")]
    width = 6 * len(cols)
    out = [f"{'':<28}" + "".join(f" | {r.mode:^{width}}" for r in runs),
           f"{'family':<28}" + "".join(" | " + "".join(f"{c:>6}" for c, _ in cols) for _ in runs)]
    out.append("-" * len(out[1]))
    totals = {r.mode: collections.Counter() for r in runs}
    for family in families + extra:
        cells = []
        for r in runs:
            counts = collections.Counter()
            for kind in KINDS:
                found = [f for f in r.findings if f.family == family and f.kind == kind]
                # mails, except tracebacks: each counts
                counts[kind] = sum(f.count for f in found) if kind == "unhandled" else len(
                    {f.mail or f.what for f in found})
            counts["mails"] = sum(1 for h in r.handed if h.mail.family == family)
            totals[r.mode].update({k: n for k, n in counts.items() if k != "mails" or family != "setup"})
            cells.append(" | " + "".join(f"{counts[k]:>6}" for _, k in cols))
        label = family + (f" ({lines_in[family]} lines)" if lines_in[family] else "")
        out.append(f"{label:<28}" + "".join(cells))
    out.append("-" * len(out[1]))
    out.append(f"{'total (attacks: no setup)':<28}" + "".join(
        " | " + "".join(f"{totals[r.mode][k]:>6}" for _, k in cols) for r in runs))
    return out, totals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=9, help="seed of the fuzzers and of the deliver sample")
    ap.add_argument("--fuzz-mails", type=int, default=300, help="mails mutated at random (headers, MIME, bytes)")
    ap.add_argument("--fuzz-lines", type=int, default=5000, help="random command lines, packed 50 to a mail")
    ap.add_argument("--deliver-sample", type=int, default=150, metavar="N",
                    help="mails run through `judge deliver` (one process each); 0 skips deliver")
    ap.add_argument("--no-serve", action="store_true", help="skip the run through `judge serve`")
    ap.add_argument("--jobs", type=int, default=2, help="`judge deliver` processes at a time")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a deliver or a serve phase may take")
    ap.add_argument("--stall", type=float, default=30,
                    help="seconds without progress after which the daemon counts as stuck (phases not timed)")
    ap.add_argument("--postgresql", metavar="ADMIN_URL", nargs="?",
                    const="postgresql+psycopg://postgres@127.0.0.1:5432/test",
                    help="store in fresh PostgreSQL databases made (and dropped) through ADMIN_URL "
                         "(default: the test server on 127.0.0.1:5432) instead of SQLite")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories (data, logs) and print where")
    args = ap.parse_args()

    t0 = time.monotonic()
    phases = build(args.seed, args.fuzz_mails, args.fuzz_lines)
    t_build = time.monotonic() - t0
    sample = deliver_sample(phases, args.deliver_sample, args.seed) if args.deliver_sample > 0 else set()
    total = sum(len(p.mails()) for p in phases)
    print(f"corpus: {total} mails in {len(phases)} phases, seed {args.seed} (built in {t_build:.1f} s); "
          f"serve: {'all' if not args.no_serve else 'none'}, deliver: a sample of {len(sample)}, "
          f"{args.jobs} at a time; store: {'PostgreSQL' if args.postgresql else 'SQLite'}", flush=True)

    scratch = Path(tempfile.mkdtemp(prefix="judge-attack-"))
    stack = contextlib.ExitStack()
    results: dict[str, Run] = {}
    errors: dict[str, BaseException] = {}
    runs: list[Run] = []
    try:
        urls = {}
        for mode in ("serve", "deliver"):
            urls[mode] = stack.enter_context(scratch_postgresql(args.postgresql, "judge_attack", mode)) if args.postgresql else None

        def go(mode: str) -> None:
            try:
                if mode == "serve":
                    results[mode] = run_serve(phases, scratch / "serve", urls[mode], args)
                else:
                    results[mode] = run_deliver(phases, sample, scratch / "deliver", urls[mode], args)
                analyse(results[mode])
            except BaseException as err:  # reported below; the other mode goes on
                errors[mode] = err
                import traceback
                traceback.print_exc()

        threads = []
        if not args.no_serve:
            threads.append(threading.Thread(target=go, args=("serve",)))
        if sample:
            threads.append(threading.Thread(target=go, args=("deliver",)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        runs = [results[m] for m in ("serve", "deliver") if m in results]
        wall = time.monotonic() - t0
        found_dir = Path(tempfile.mkdtemp(prefix="judge-attack-findings-"))
        report(runs, phases, args, wall, found_dir)
        if not any(found_dir.iterdir()):
            found_dir.rmdir()
        for mode, err in errors.items():
            print(f"the {mode} run failed: {type(err).__name__}: {err}")
    finally:
        stack.close()
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    bad = errors or any(f.kind != "through" for r in runs for f in r.findings)
    return 1 if bad else 0


SHOWN = 6  # findings listed per entry point, kind and family


def _file(name: str) -> str:
    return name.replace("/", "_") + ".eml"


def report(runs: list[Run], phases: list[Phase], args, wall: float, found_dir: Path) -> None:
    print()
    print(f"Attack corpus, Python {sys.version.split()[0]}, seed {args.seed}, "
          f"{'PostgreSQL' if args.postgresql else 'SQLite'}, password_cost 4")
    lines, totals = table(runs, phases)
    for line in lines:
        print(line)
    print()
    for r in runs:
        timing = ", ".join(f"{name} {s:.1f} s" for name, s in r.timings)
        print(f"{r.mode}: {r.seconds:.1f} s ({timing})")
        if r.mode == "serve":
            rss = r.rss
            if rss:
                print(f"serve: peak memory (VmHWM) {rss.get('before_VmHWM', 0) / 1024:.0f} MB before the 50 MB mail, "
                      f"{rss.get('after_VmHWM', 0) / 1024:.0f} MB after it, "
                      f"{rss.get('final_VmHWM', rss.get('after_VmHWM', 0)) / 1024:.0f} MB at the end")
            timed = [(h.mail.name, h.seconds) for h in r.handed if h.mail.family == "long-lines"]
            if timed:
                print("serve: cost-of-input mails, seconds each: "
                      + ", ".join(f"{n.split('/', 1)[1]} {s:.2f}" for n, s in timed))
        else:
            times = [h.seconds for h in r.handed if h.mail.family != "long-lines"]
            if times:
                print(f"deliver: {len(r.handed)} processes, {statistics.median(times):.2f} s median, "
                      f"{max(times):.2f} s max (cost-of-input mails apart: "
                      + ", ".join(f"{h.mail.name.split('/', 1)[1]} {h.seconds:.2f}"
                                  for h in r.handed if h.mail.family == "long-lines") + ")")
    for r in runs:
        for note in r.notes:
            print(f"note: {note}")
    findings = [(r.mode, f) for r in runs for f in r.findings]
    if findings:
        print()
        print(f"Findings (entry point, kind, family, mail: what), at most {SHOWN} alike; every mail named here is "
              f"saved whole in {found_dir}:")
        mails = {h.mail.name: h.mail for r in runs for h in r.handed}
        groups: dict[tuple[str, str, str], list[Finding]] = collections.defaultdict(list)
        for mode, f in findings:
            groups[(mode, f.kind, f.family)].append(f)
        shown: set[str] = set()
        for (mode, kind, family), found in groups.items():
            for f in found[:SHOWN]:
                print(f"  {mode:<7} {kind:<10} {family:<18} {f.mail or '-'}: {f.what}")
                if f.mail in mails and f.mail not in shown:
                    shown.add(f.mail)
                    raw = mails[f.mail].raw
                    print(f"          the mail, {len(raw)} bytes: {raw[:200]!r}" + ("..." if len(raw) > 200 else ""))
            if len(found) > SHOWN:
                more = [f.mail or "-" for f in found[SHOWN:]]
                print(f"  {mode:<7} {kind:<10} {family:<18} ... and {len(more)} more alike: "
                      + ", ".join(more[:8]) + (", ..." if len(more) > 8 else ""))
            for f in found:
                if f.mail in mails:
                    (found_dir / _file(f.mail)).write_bytes(mails[f.mail].raw)
    print()
    tried = sum(t["mails"] for t in totals.values())
    fig = {k: sum(t[k] for t in totals.values()) for k in KINDS}
    per = "; ".join(f"{mode} {t['mails']}" for mode, t in totals.items())
    print(f"wall time {wall:.1f} s")
    print(f"attacks: {tried} tried ({per}), {fig['crash']} crashes, {fig['lost']} lost, "
          f"{fig['duplicated']} duplicated, {fig['unhandled']} unhandled, {fig['through']} got through")


if __name__ == "__main__":
    sys.exit(main())
