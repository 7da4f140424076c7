"""The store's connection dropped again and again while mail and timers run
(issue 24): `pg_terminate_backend` on every other connection of the test's
own database, as a server restart or a failover does. A dropped connection
is retried on a fresh one: no mail is quarantined for it, no game set
aside as stuck, nothing lost and nothing done twice."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta

from sqlalchemy import create_engine, select, text

from judge.games import find_game
from judge.store.models import Event, Game, InboundMessage, OutboxMessage
from tests.harness import Harness, open_lui_f8

GM = "gm@example.test"
PLAYERS = [f"p{k}" for k in range(1, 9)]
ROUNDS = 6


def addr(name: str) -> str:
    return f"{name}@example.test"


class Terminator(threading.Thread):
    """Ends every other backend of the database, every `every` seconds."""

    def __init__(self, url: str, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.engine = create_engine(url, isolation_level="AUTOCOMMIT")
        self.every, self.stop, self.killed = every, threading.Event(), 0

    def run(self) -> None:
        with self.engine.connect() as c:
            while not self.stop.is_set():
                self.killed += c.execute(text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar() or 0
                time.sleep(self.every)
        self.engine.dispose()


def test_dropped_connections_lose_nothing_and_quarantine_nothing(tmp_path, postgres_url):
    h = Harness(tmp_path / "data", postgres_url)
    try:
        open_lui_f8(h, GM, "drop", [addr(p) for p in PLAYERS], after_hours=24.1)  # the auction opens

        killer = Terminator(postgres_url, every=0.1)  # often enough however fast the mails run
        killer.start()
        sent = 0
        try:
            # Mails and the clock together: every bid starts a timer of an
            # hour, which fires while later mails come in.
            # At least ROUNDS rounds, and on until 20 connections were ended
            # (a faster judge sees fewer of them in the same rounds).
            rounds = 0
            for round_ in range(ROUNDS * 4):
                if round_ >= ROUNDS and killer.killed >= 20:
                    break
                rounds += 1
                for k, p in enumerate(PLAYERS):
                    seat = "RSTUVWXY"[k]
                    h.send(addr(p), f"SIGNON ?drop pw\nBID {seat} {round_ + 1 + k * 20}\nBOARD",
                           message_id=f"<drop-{round_}-{k}@players.test>")
                    h.send(addr(p), "LIST ?drop", message_id=f"<list-{round_}-{k}@players.test>")
                    sent += 2
                for _ in range(3):
                    h.run()
                h.clock.advance(minutes=20)
        finally:
            killer.stop.set()
            killer.join(10)
        assert killer.killed >= 20, f"only {killer.killed} connections were ended: the test proves little"
        for _ in range(5):  # the store is back: what waited is done now
            h.run()

        with h.judge.sessions() as s:
            statuses = Counter(s.scalars(select(InboundMessage.status)))
            game = find_game(s, "drop")
            replies = Counter(s.scalars(select(OutboxMessage.inbound_id).where(OutboxMessage.kind == "reply")))
            outbox = Counter(s.scalars(select(OutboxMessage.status)))
            won = [e.data for e in s.scalars(select(Event).where(Event.game_id == game.id, Event.kind == "lui"))
                   if e.data.get("event") == "SeatWon"]
            stuck = s.scalars(select(Game.name).where(Game.state == "stuck")).all()
            log = game.method_state["log"]
        assert stuck == []
        assert set(outbox) <= {"sent", "queued"}, outbox  # a dropped connection fails no mail
        assert statuses.get("quarantined", 0) == 0, statuses
        assert statuses.get("new", 0) == 0, statuses
        # Every mail run once: one reply each, and each bid once in the game's log.
        assert set(replies.values()) == {1}
        bids = Counter((x["player"], x["text"]) for x in log if x["text"].upper().startswith("BID"))
        assert set(bids.values()) == {1}, bids
        assert len(bids) == rounds * len(PLAYERS)
        # Every seat won at most once.
        assert Counter(w["seat"] for w in won).most_common(1)[0][1] == 1 if won else True
        # The game is still driven by its timers.
        with h.judge.sessions() as s:
            assert find_game(s, "drop").next_tick is not None or won
        h.clock.advance(hours=30)
        h.run()
        with h.judge.sessions() as s:
            game = find_game(s, "drop")
            won = [e.data for e in s.scalars(select(Event).where(Event.game_id == game.id, Event.kind == "lui"))
                   if e.data.get("event") == "SeatWon"]
        assert won and Counter(w["seat"] for w in won).most_common(1)[0][1] == 1
        assert len({w["player"] for w in won}) == len(won)
        assert sent == rounds * len(PLAYERS) * 2
    finally:
        h.close()
