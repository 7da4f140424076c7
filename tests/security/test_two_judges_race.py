"""Two judge processes on one store, racing on one game (issue 24).

Process A is this test's own judge (the real scheduler code, on its own
connection): it fires a game's timer or plays its deadline, and its
transaction stays open while process B, a real `judge deliver` started from
the command line (it runs its mail itself: no daemon), runs a player's mail
for the same game. A commits once B is seen waiting for a lock (PostgreSQL:
pg_stat_activity) or has finished (SQLite, where the judge of before this
issue took no lock before reading, so B ran right through). Then the game
goes on, and the invariants are checked: every seat won once, every phase
played once, each phase's results mailed once to each player, the ledger
equal to its lines, and every command B's reply confirmed in the game.

Before the game driver (issue 24) each of these failed: B read the game
without a lock and wrote it back whole, so one side's work was lost (a
SeatWon and its timer fired again; a phase played twice; a confirmed
TRANSFER missing from the ledger but present in the audit trail).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from judge.games import find_game
from judge.methods.lui.persist import from_json
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from judge.scheduler import handle_deadline, method_tick
from judge.store.models import Event, Game
from tests.harness import Harness, make_mail, open_lui_f8

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def judge_bin() -> list[str]:
    exe = Path(sys.executable).with_name("judge")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "judge"]


def harness_at(tmp_path: Path, url: str, start: datetime) -> Harness:
    h = Harness(tmp_path / "data", url)
    h.clock.set(start)
    return h


def config_file(h: Harness, tmp_path: Path) -> Path:
    """Process B's configuration: the harness's store, data folder and address."""
    path = tmp_path / "judge.toml"
    path.write_text(f"""[judge]
address = "{h.config.address}"
data_dir = "{h.config.data_dir}"
database = "{h.config.database_url}"
password_cost = 4
default_method = "blind-auction"
""")
    return path


def deliver_in_background(cfg: Path, raw: bytes) -> tuple[subprocess.Popen, threading.Thread, dict]:
    proc = subprocess.Popen([*judge_bin(), "-c", str(cfg), "deliver"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out: dict = {}

    def feed() -> None:
        out["output"] = proc.communicate(raw, timeout=300)[0].decode()

    t = threading.Thread(target=feed)
    t.start()
    return proc, t, out


def someone_waits_for_a_lock(url: str) -> bool:
    """Whether a backend of this PostgreSQL database waits for a lock."""
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            return bool(c.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'")).scalar())
    finally:
        engine.dispose()


def race(h: Harness, tmp_path: Path, work, raw: bytes) -> str:
    """A runs work(session) and keeps its transaction open while B delivers
    `raw`; A commits when B waits for a lock (PostgreSQL) or after B ended
    or 8 s passed (SQLite: B waits for A's write lock at most its 30 s busy
    timeout). B's output."""
    cfg = config_file(h, tmp_path)
    with h.judge.sessions.begin() as s:
        work(s)  # (its writes are flushed at the commit, as the scheduler's are)
        proc, feeder, out = deliver_in_background(cfg, raw)
        postgres = h.config.database_url.startswith("postgresql")
        until = time.monotonic() + (120 if postgres else 8)
        while time.monotonic() < until and proc.poll() is None:
            if postgres and someone_waits_for_a_lock(h.config.database_url):
                time.sleep(0.2)  # B is blocked: let it settle there
                break
            time.sleep(0.05)
    feeder.join(300)
    assert proc.returncode == 0, out.get("output")
    return out["output"]


def events(h: Harness, game: str, kind: str, event: str) -> list[Event]:
    with h.judge.sessions() as s:
        g = find_game(s, game)
        rows = s.scalars(select(Event).where(Event.game_id == g.id, Event.kind == kind).order_by(Event.id)).all()
        return [r for r in rows if r.data.get("event") == event]


# --------------------------------------------------------------------------
# LUI: a bid mail against a seat's timer
# --------------------------------------------------------------------------

def test_lui_a_bid_against_a_seats_timer_wins_the_seat_once(tmp_path, database_url):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    # The timer of p1's bid on R runs out 30 s ago: 24 h of pregame, the bid
    # half an hour after the auction opened, a timer of one hour.
    h = harness_at(tmp_path, database_url, now - timedelta(hours=25.5, seconds=30))
    try:
        players = [f"p{k}" for k in range(1, 9)]
        open_lui_f8(h, GM, "race", [addr(p) for p in players], after_hours=24.5)
        h.mail(addr("p1"), "SIGNON ?race pw\nBID R 1")
        with h.judge.sessions() as s:
            g = find_game(s, "race")
            game_id, due = g.id, g.next_tick
        assert due == now - timedelta(seconds=30)

        # A fires the timer (with the scheduler's time just after it); B, at
        # the same moment, runs p2's bid on S.
        output = race(h, tmp_path, lambda s: method_tick(s, h.config, game_id, due + timedelta(seconds=1)),
                      make_mail(addr("p2"), "SIGNON ?race pw\nBID S 2"))
        assert "stored as mail" in output

        won = events(h, "race", "lui", "SeatWon")
        assert [(e.data["seat"], e.data["player"]) for e in won] == [("R", "p1")]
        with h.judge.sessions() as s:
            g = find_game(s, "race")
            state = from_json(g.method_state["state"])
            log = g.method_state["log"]
            assert g.next_tick != due  # the timer that fired is not waiting to fire again
        assert [(w.seat, w.player) for w in state.won] == [("R", "p1")]
        # p2's bid, confirmed in B's reply, is in the game and in its log.
        reply = h.body(h.sent_to_kind(addr("p2"), "reply")[-1])
        assert "your bid of 2 on S stands" in reply, reply
        assert any(x["player"] == "p2" and x["text"].upper().startswith("BID") for x in log)
        assert [(b.seat, b.player, b.amount) for b in state.standing] == [("S", "p2", 2)]

        # The game goes on: nothing is won a second time.
        h.clock.set(datetime.now(timezone.utc) + timedelta(minutes=1))
        h.run()
        won = events(h, "race", "lui", "SeatWon")
        assert Counter(e.data["seat"] for e in won)["R"] == 1
        assert len([m for m in h.sent_to(addr("p3")) if "won seat R" in h.body(m)]) <= 1
    finally:
        h.close()


# --------------------------------------------------------------------------
# Payola: a player's mail stored before the deadline against the deadline
# --------------------------------------------------------------------------

def test_payola_a_transfer_against_the_deadline_plays_the_phase_once(tmp_path, database_url):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    deadline = now + timedelta(seconds=40)
    h = harness_at(tmp_path, database_url, deadline - timedelta(hours=1))
    try:
        players = [f"p{k}" for k in range(1, 8)]
        h.form_game(GM, "CREATE ?pay gmpw payola standard", [addr(p) for p in players])
        h.mail(GM, "SIGNON Mpay gmpw\nSET POWER p1@example.test Russia\nSET MOVEMENT HOURS 1\nSTART")
        with h.judge.sessions() as s:
            g = find_game(s, "pay")
            game_id = g.id
            assert g.deadline == deadline
        h.mail(addr("p2"), "SIGNON ?pay pw\n1 : A PAR - BUR")

        # A plays S1901M at its deadline; B runs Russia's TRANSFER, stored
        # (now) before the deadline.
        output = race(h, tmp_path, lambda s: handle_deadline(s, h.config, game_id, deadline + timedelta(seconds=1)),
                      make_mail(addr("p1"), "SIGNON ?pay pw\nTRANSFER 7 TO France"))
        assert "stored as mail" in output
        reply = h.body(h.sent_to_kind(addr("p1"), "reply")[-1])
        assert "7 AgP sent to France" in reply, reply

        # The game goes on past the next deadline.
        with h.judge.sessions() as s:
            next_deadline = find_game(s, "pay").deadline
        h.clock.set(next_deadline + timedelta(seconds=1))
        h.run()

        played = [e.data["input"]["phase"] for e in events(h, "pay", "payola", "movement")]
        assert Counter(played)["S1901M"] == 1, played
        for p in players:
            spring = [m for m in h.sent_to(addr(p)) if "S1901M results" in str(m["Subject"])]
            assert len(spring) == 1, (p, len(spring))
        with h.judge.sessions() as s:
            state, _ = load(find_game(s, "pay"))
        ledger_events = events(h, "pay", "payola", "ledger")
        assert len(ledger_events) == len(state.ledger.lines)  # every line the audit trail saw is in the ledger
        assert [(x.phase, x.amount, x.note) for x in state.ledger.lines_of("Russia") if x.kind == "transfer out"] \
            == [(x.phase, -7, "France") for x in state.ledger.lines_of("Russia") if x.kind == "transfer out"][:1]
        assert [x.amount for x in state.ledger.lines_of("Russia") if x.kind == "transfer out"] == [-7]
        for power, balance in state.ledger.as_dict().items():
            assert balance == sum(x.amount for x in state.ledger.lines_of(power)), power
            assert balance == state.ledger.lines_of(power)[-1].balance, power
    finally:
        h.close()


# --------------------------------------------------------------------------
# The second line of defence, and the same mail delivered twice
# --------------------------------------------------------------------------

def test_a_write_from_a_stale_read_of_a_game_fails_and_changes_nothing(harness):
    """games.version: a process that read a game before another wrote it
    cannot write its older state over the newer one (on SQLite this is what
    lost a confirmed TRANSFER: read, another process commits, write back)."""
    from sqlalchemy.orm.exc import StaleDataError

    from judge.store.lock import is_transient

    h = harness
    h.mail(GM, "CREATE ?v gmpw")
    stale = h.judge.sessions()
    try:
        game = find_game(stale, "v")  # read, no lock: as the judge read games before issue 24
        version = game.version
        with h.judge.sessions.begin() as other:
            find_game(other, "v").params = {**game.params, "T": 99}
        game.params = {**game.params, "T": 1}
        with pytest.raises(StaleDataError) as err:
            stale.commit()
        assert is_transient(err.value)  # the driver redoes the work from the fresh row
    finally:
        stale.rollback()
        stale.close()
    with h.judge.sessions() as s:
        g = find_game(s, "v")
        assert g.params["T"] == 99 and g.version == version + 1


def test_the_same_mail_delivered_to_two_processes_at_once_is_run_once(tmp_path, database_url):
    h = Harness(tmp_path / "data", database_url)
    try:
        h.mail(GM, "CREATE ?twice gmpw")
        cfg = config_file(h, tmp_path)
        raw = make_mail(addr("ann"), "SIGNON ?twice pw\nLIST", message_id="<the-same@players.test>")
        runs = [deliver_in_background(cfg, raw) for _ in range(2)]
        for proc, feeder, out in runs:
            feeder.join(300)
            assert proc.returncode == 0, out.get("output")
        outputs = [out["output"] for _, _, out in runs]
        assert sum("stored as mail" in o for o in outputs) == 1, outputs
        assert sum("duplicate Message-ID" in o for o in outputs) == 1, outputs
        replies = h.sent_to_kind(addr("ann"), "reply")
        assert len(replies) == 1
        with h.judge.sessions() as s:
            assert len([p for p in find_game(s, "twice").players if p.address == addr("ann")]) == 1
    finally:
        h.close()
