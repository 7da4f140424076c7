"""A stuck game is stopped (issue 24): once a bug has set it aside, it runs
no command and no timer (LIST still answers) until a moderator's `judge
unstick`; then its timers fire with their own time."""

from __future__ import annotations

from sqlalchemy import select

from judge.failures import quarantine_game, unstick
from judge.games import find_game
from judge.store.models import Event
from tests.harness import open_lui_f8

GM = "gm@example.test"
PLAYERS = [f"p{k}" for k in range(1, 9)]


def addr(name: str) -> str:
    return f"{name}@example.test"


def seats_won(h) -> list[str]:
    with h.judge.sessions() as s:
        g = find_game(s, "halt")
        return [e.data["seat"] for e in s.scalars(select(Event).where(Event.game_id == g.id, Event.kind == "lui"))
                if e.data.get("event") == "SeatWon"]


def test_a_stuck_game_runs_no_command_and_no_timer_until_unstuck(harness):
    h = harness
    open_lui_f8(h, GM, "halt", [addr(p) for p in PLAYERS], after_hours=24.1)
    h.mail(addr("p1"), "SIGNON ?halt pw\nBID R 1")
    with h.judge.sessions() as s:
        game = find_game(s, "halt")
        game_id, due, state_before = game.id, game.next_tick, dict(game.method_state)
    quarantine_game(h.judge.sessions, h.config, h.clock.now(), game_id, "Traceback...\nRuntimeError: a bug")

    # A command: refused with the reason, nothing changed; LIST answers.
    h.mail(addr("p2"), "SIGNON ?halt pw\nBID S 2\nLIST ?halt")
    reply = " ".join(h.body(h.last_to(addr("p2"))).split())
    assert "Rejected: ?halt is stopped: the judge met an error in its work" in reply
    assert "Done: ?halt: lui, stuck" in reply and "The board:" in reply  # seats, no variant (issue 26)
    with h.judge.sessions() as s:
        game = find_game(s, "halt")
        assert game.method_state == state_before and game.state == "stuck"
    # The master's shell commands too.
    h.mail(GM, "SIGNON Mhalt gmpw\nSET DEADLINE +48h\nEJECT p3@example.test")
    reply = " ".join(h.body(h.last_to(GM)).split())
    assert reply.count("?halt is stopped") == 2

    # Its timer ran out: nothing fires while it is stuck.
    h.clock.advance(hours=2)
    h.run()
    assert seats_won(h) == []
    with h.judge.sessions() as s:
        assert find_game(s, "halt").next_tick == due

    # Resumed: the timer fires with its own time.
    with h.judge.sessions.begin() as s:
        unstick(s, find_game(s, "halt"), h.clock.now())
    h.run()
    assert seats_won(h) == ["R"]
    with h.judge.sessions() as s:
        g = find_game(s, "halt")
        fired = [e.data for e in s.scalars(select(Event).where(Event.game_id == g.id, Event.kind == "lui"))
                 if e.data.get("event") == "SeatWon"]
    assert fired[0]["fired_at"] == due.isoformat()
