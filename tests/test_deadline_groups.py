"""Many games at one deadline (issue 29): the scheduler runs their work in
groups of games, one transaction a group, each game under its lock. A bug
in one game of a group writes nothing of the group; each game is then done
alone, so the others are resolved and only the broken one is set aside."""

from __future__ import annotations

from sqlalchemy import update

from judge import scheduler
from judge.games import find_game
from judge.store.models import Game

GM = "gm@example.test"


def players(g: int) -> list[str]:
    return [f"p{g}x{i}@example.test" for i in range(7)]


def make(h, games: int) -> None:
    for g in range(games):
        h.send(GM, f"CREATE ?r{g} gmpw random\nSET DEADLINE +24h")
    h.run()
    for g in range(games):
        for p in players(g):
            h.send(p, f"SIGNON ?r{g} pw")
    h.run()


def states(h, games: int) -> list[str]:
    with h.judge.sessions() as s:
        return [find_game(s, f"r{g}").state for g in range(games)]


def test_games_due_together_are_each_resolved_once(harness):
    h = harness
    make(h, 4)
    h.clock.advance(hours=25)
    done = scheduler.tick(h.judge.sessions, h.config, h.clock.now())
    assert sorted(done) == sorted(f"r{g}: started at its deadline" for g in range(4))
    assert states(h, 4) == ["resolved"] * 4
    h.run()  # sends what the deadlines queued
    for g in range(4):
        assert all(len(h.sent_to_kind(p, "result")) == 1 for p in players(g))
    assert scheduler.tick(h.judge.sessions, h.config, h.clock.now()) == []  # nothing fires twice


def test_a_bug_in_one_game_of_a_group_sets_aside_that_game_alone(harness):
    h = harness
    make(h, 3)
    with h.judge.sessions.begin() as s:
        # A row no method can read: a bug's doing, met under the game's lock.
        s.execute(update(Game).where(Game.name == "r1").values(powers=7))
    h.clock.advance(hours=25)
    done = scheduler.tick(h.judge.sessions, h.config, h.clock.now())
    assert states(h, 3) == ["resolved", "stuck", "resolved"]
    assert len(done) == 3 and any(d.endswith(": stuck") for d in done)
    h.run()
    for g in (0, 2):
        assert all(len(h.sent_to_kind(p, "result")) == 1 for p in players(g))
    assert not any(h.sent_to_kind(p, "result") for p in players(1))
    with h.judge.sessions() as s:
        assert find_game(s, "r1").error and "Traceback" in find_game(s, "r1").error
