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


def auctions(h, games: int, deadline: str, first: int = 0) -> None:
    """Blind Auctions with every bid in, by mail, due at one deadline."""
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    for g in range(first, first + games):
        h.send(GM, f"CREATE ?a{g} gmpw blind-auction standard\nSET DEADLINE {deadline}")
    h.run()
    for g in range(first, first + games):
        for p in players(g):
            h.send(p, f"SIGNON ?a{g} pw")
    h.run()
    for g in range(first, first + games):
        h.send(GM, f"SIGNON Ma{g} gmpw\nSTART")
    h.run()
    for g in range(first, first + games):
        for i, p in enumerate(players(g)):
            values = [40, 30, 20, 15, 10, 5, 1][i:] + [40, 30, 20, 15, 10, 5, 1][:i]
            h.send(p, f"SIGNON ?a{g} pw\n" + "\n".join(f"{w}: {v}" for w, v in zip(powers, values)))
    h.run()


def reads_at_the_deadline(h) -> tuple[list[str], int]:
    """What scheduler.tick did, and how many statements it read with."""
    from sqlalchemy import event

    engine = h.judge.sessions.kw["bind"]
    reads = []

    def count(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            reads.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        done = scheduler.tick(h.judge.sessions, h.config, h.clock.now())
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return done, len(reads)


def test_a_groups_games_are_read_together_not_one_by_one(harness):
    """Issue 29 (the burst): the games of a group are locked and read in a
    few statements for the whole group (on PostgreSQL each is a round trip),
    so that a group of many games reads no more than a group of two; each
    game's results are still its own, once."""
    h = harness
    auctions(h, 2, "+24h")
    h.clock.advance(hours=25)
    done, two = reads_at_the_deadline(h)
    assert sorted(done) == ["a0: resolved", "a1: resolved"]
    auctions(h, 6, "+24h", first=2)
    h.clock.advance(hours=25)
    done, six = reads_at_the_deadline(h)
    assert sorted(done) == sorted(f"a{g}: resolved" for g in range(2, 8))
    assert six == two
    h.run()
    for g in range(8):
        assert all(len(h.sent_to_kind(p, "result")) == 1 for p in players(g))
