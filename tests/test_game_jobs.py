"""Work a mail asks for runs as a job of its own (issue 24): START of a game
assigned at once, its start by itself, PROCESS, and a Payola GM's PROCESS
are answered in the mail's transaction but done after it, each in a
transaction of its own under the game's lock, so that a heavy draw or phase
holds up no other mail (judge.scheduler.handle_job, `judge serve`'s thread
for games)."""

from __future__ import annotations

from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Resolution

GM = "gm@example.test"


def addr(k: int) -> str:
    return f"p{k}@example.test"


def test_start_is_answered_by_the_mail_and_drawn_by_the_games_work(harness):
    h = harness
    h.mail(GM, "CREATE ?job gmpw preference\nSET MANUAL START")
    for k in range(7):
        h.send(addr(k), "SIGNON ?job pw\nSET PREFERENCE FRIGATE")
    h.run()
    h.send(GM, "SIGNON Mjob gmpw\nSTART")
    h.judge.poll_sources()
    assert h.judge.process_pending() == 1  # the mail alone, as the daemon's mail loop runs it
    with h.judge.sessions() as s:
        game = find_game(s, "job")
        assert (game.state, game.job) == ("forming", "start")
        assert s.scalars(select(Resolution)).all() == []  # nothing drawn in the mail's transaction
    done = h.judge.game_work()  # the daemon's thread for games
    assert done == ["job: ?job started: powers assigned; results sent to all 7 players and to you"]
    with h.judge.sessions() as s:
        game = find_game(s, "job")
        assert (game.state, game.job) == ("resolved", None)
        assert len(s.scalars(select(Resolution)).all()) == 1
    assert h.judge.game_work() == []  # done once


def test_process_of_an_auction_is_a_job_too(harness):
    h = harness
    h.mail(GM, "CREATE ?pa gmpw blind-auction")
    for k in range(7):
        h.send(addr(k), "SIGNON ?pa pw")
    h.run()
    h.mail(GM, "SIGNON Mpa gmpw\nSTART")
    for k in range(7):
        h.send(addr(k), "SIGNON ?pa pw\nNO PREFERENCE")
    h.run()
    h.send(GM, "SIGNON Mpa gmpw\nPROCESS")
    h.judge.poll_sources()
    h.judge.process_pending()
    with h.judge.sessions() as s:
        assert (find_game(s, "pa").state, find_game(s, "pa").job) == ("bidding", "process")
    assert h.judge.game_work() == ["pa: ?pa resolved; results sent to all 7 players and the master"]
    with h.judge.sessions() as s:
        assert find_game(s, "pa").state == "resolved"


def test_a_stuck_games_job_waits_until_it_is_resumed(harness):
    from judge.failures import quarantine_game, unstick

    h = harness
    h.mail(GM, "CREATE ?sj gmpw preference\nSET MANUAL START")
    for k in range(7):
        h.send(addr(k), "SIGNON ?sj pw")
    h.run()
    h.send(GM, "SIGNON Msj gmpw\nSTART")
    h.judge.poll_sources()
    h.judge.process_pending()
    with h.judge.sessions() as s:
        game_id = find_game(s, "sj").id
    quarantine_game(h.judge.sessions, h.config, h.clock.now(), game_id, "Traceback\nRuntimeError: a bug")
    assert h.judge.game_work() == []
    with h.judge.sessions.begin() as s:
        unstick(s, find_game(s, "sj"), h.clock.now())
    assert h.judge.game_work() == ["sj: ?sj started: powers assigned; results sent to all 7 players and to you"]
