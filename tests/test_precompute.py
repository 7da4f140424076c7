"""Heavy work done ahead of the game's lock (judge.driver.precompute, issue
24): a Payola phase and an assignment are worked out from a snapshot
without the lock; the locked transaction uses that result only when the
game is exactly as it was read, and works it out afresh otherwise."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from judge.driver import precompute
from judge.games import find_game
from judge.scheduler import _precompute, handle_deadline
from judge.store.models import Event, InboundMessage
from tests.harness import Harness

GM = "gm@example.test"


def addr(k: int) -> str:
    return f"p{k}@example.test"


def payola_game(h: Harness) -> int:
    h.mail(GM, "CREATE ?pre gmpw payola standard")
    for k in range(1, 8):
        h.send(addr(k), "SIGNON ?pre pw")
    h.run()
    h.mail(GM, "SIGNON Mpre gmpw\nSET POWER p1@example.test Russia\nSET POWER p2@example.test France\n"
               "SET MOVEMENT HOURS 24\nSTART")
    h.mail(addr(2), "SIGNON ?pre pw\n3 : A PAR - BUR")
    with h.judge.sessions() as s:
        return find_game(s, "pre").id


def movement_input(h: Harness) -> dict:
    with h.judge.sessions() as s:
        g = find_game(s, "pre")
        (row,) = [e for e in s.scalars(select(Event).where(Event.game_id == g.id, Event.kind == "payola"))
                  if e.data.get("event") == "movement"]
        return row.data


def test_a_phase_worked_out_ahead_is_used_only_for_the_game_it_was_read_from(harness: Harness):
    h = harness
    game_id = payola_game(h)
    h.clock.advance(hours=24, seconds=1)
    now = h.clock.now()
    _precompute(h.judge.sessions, game_id, now)  # the phase worked out, without the TRANSFER
    # Russia's TRANSFER, stored before the deadline, is run after the phase
    # was worked out and before the locked run.
    h.send(addr(1), "SIGNON ?pre pw\nTRANSFER 7 TO France")
    h.judge.poll_sources()
    with h.judge.sessions.begin() as s:
        row = s.scalars(select(InboundMessage).where(InboundMessage.status == "new")).one()
        row.received_at = now - timedelta(seconds=5)
    assert h.judge.process_pending() == 1
    with h.judge.sessions.begin() as s:
        assert "S1901M of ?pre played" in handle_deadline(s, h.config, game_id, now)
    played = movement_input(h)
    # The locked run did not take the stale result: the phase was worked
    # out again from the game after the TRANSFER.
    with h.judge.sessions() as s:
        g = find_game(s, "pre")
        start = {e.data["power"]: e.data["amount"] for e in s.scalars(select(Event).where(
            Event.game_id == g.id, Event.kind == "payola")) if e.data.get("entry") == "start"}
    assert played["input"]["balances"]["Russia"] == start["Russia"] - 7
    assert played["input"]["balances"]["France"] == start["France"] + 7


def test_an_unchanged_game_uses_the_phase_worked_out_ahead(harness: Harness, monkeypatch):
    from judge.methods.payola import game as G

    h = harness
    payola_game(h)
    h.clock.advance(hours=24, seconds=1)
    # The scheduler works the phase out ahead; the locked run takes that
    # result and does not play the phase a second time.
    calls = []
    real = G.movement
    monkeypatch.setattr(G, "movement", lambda *a, **k: calls.append(1) or real(*a, **k))
    h.run()
    assert calls == [1]
    assert movement_input(h)["input"]["phase"] == "S1901M"
