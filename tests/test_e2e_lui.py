"""Lowest Unique Integer by mail, end to end on SQLite and PostgreSQL (issue
13): a whole F8 game (8 players) and a whole F11 game (11 players), the
daemon restarted in the middle while timers run out (they fire with their
own time, in the stored events), outbid and board mails (the PNG decoded),
SET BOARD MAIL OFF, a rejected bid changing nothing, BUY refused without
garnets, the EC chosen and the ToL given by mail, the final results."""

from __future__ import annotations

import io
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.methods.lui.persist import from_json
from judge.store.models import Event
from tests.harness import Harness

Image = pytest.importorskip("PIL.Image")

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def restart(h: Harness, data_dir, migrated_database_url) -> Harness:
    """The daemon stops and a new one starts on the same store and folders,
    its clock where the old one's was."""
    now = h.clock.now()
    h.close()
    new = Harness(data_dir, migrated_database_url)
    new.clock.advance(seconds=(now - new.clock.now()).total_seconds())
    return new


def state(h: Harness, name: str):
    with h.judge.sessions() as s:
        g = find_game(s, name)
        return from_json(g.method_state["state"]), datetime.fromisoformat(g.method_state["opens_at"]), g.next_tick, g.state


def lui_events(h: Harness, name: str, kind: str) -> list[Event]:
    with h.judge.sessions() as s:
        g = find_game(s, name)
        rows = s.scalars(select(Event).where(Event.game_id == g.id, Event.kind == "lui")
                         .order_by(Event.id)).all()
        return [r for r in rows if r.data.get("event") == kind]


def mails(h: Harness, who: str, subject_part: str) -> list:
    return [m for m in h.sent_to(who) if subject_part in str(m["Subject"])]


def png_of(msg) -> Image.Image:
    parts = [p for p in msg.iter_attachments() if p.get_content_type() == "image/png"]
    assert len(parts) == 1
    img = Image.open(io.BytesIO(parts[0].get_content()))
    img.load()
    return img


def at(h: Harness, opens: datetime, hours: float) -> None:
    """Move the clock to `hours` after the auction opened."""
    target = opens + timedelta(hours=hours)
    h.clock.advance(seconds=(target - h.clock.now()).total_seconds())


def say(h: Harness, who: str, game: str, text: str) -> str:
    h.mail(addr(who), f"SIGNON ?{game} pw\n{text}")
    return h.body(h.last_to(addr(who)))


def setup(h: Harness, game: str, preset: str, players: list[str], gm_lines: str) -> None:
    h.mail(GM, f"CREATE ?{game} gmpw lui\nSET PRESET {preset}")
    for p in players:
        h.send(addr(p), f"SIGNON ?{game} pw")
    h.run()
    h.mail(GM, f"SIGNON M{game} gmpw\n{gm_lines}\nSTART")
    reply = h.body(h.last_to(GM))
    assert f"?{game} started: the pregame is open; {len(players)} players were sent the rules" in reply, reply
    assert "Warning" not in reply.split("> START")[1]  # every prize set
    for p in players:
        start = h.last_to(addr(p))
        assert "Lowest Unique Integer starts" in str(start["Subject"])
        assert f'You are "{p}" in this game' in h.body(start)
        assert png_of(start).size[0] > 300


def test_a_whole_f8_game_by_mail(tmp_path, migrated_database_url):
    data_dir = tmp_path / "data"
    h = Harness(data_dir, migrated_database_url)
    players = [f"p{k}" for k in range(1, 9)]
    prizes = "\n".join(f"SET PRIZE {seat} {k % 3} {k % 2}" for k, seat in enumerate("RSTUVWXYZ"))
    setup(h, "f8", "F8", players,
          f"{prizes}\nSET GARNETS p1 2\nSET PRIORITY p2 5\nSET PRIORITY p1 1\nSET TIMER 24")
    _, opens, next_tick, _ = state(h, "f8")
    assert next_tick == opens

    # The pregame: p2 (priority 5) is checked before p1 (priority 1).
    assert "pregame bid of 1 on R is stored" in say(h, "p1", "f8", "BID 1 R")
    assert "pregame bid of 2 on R is stored" in say(h, "p2", "f8", "BID R 2")
    assert "board mails off" in say(h, "p4", "f8", "SET BOARD MAIL OFF")
    at(h, opens, 1)  # the daemon ran late: the auction opened at its own time
    h.run()
    opened = lui_events(h, "f8", "AuctionOpened")
    assert [e.data["fired_at"] for e in opened] == [opens.isoformat()]
    assert opened[0].data["order"] == ["p2", "p1"]
    news = next(b for b in map(h.body, h.sent_to(addr("p1"))) if "The auction is open" in b)
    assert "refused when the auction opened: Rule 2" in news and "The current bid on R is 2 (p2); 1 is not larger" in news

    # Two bids in one mail, in line order: one board mail for the mail.
    boards_before = len(mails(h, addr("p5"), "the board has changed"))
    reply = say(h, "p3", "f8", "BID S 3\n/bid 4 T")
    assert reply.count("Done: your bid of") == 2
    boards = mails(h, addr("p5"), "the board has changed")
    assert len(boards) == boards_before + 1
    assert "| p3             bid 3 |" in h.body(boards[-1]).replace("  ", " ") or "bid 3" in h.body(boards[-1])
    img = png_of(boards[-1])
    assert img.format == "PNG" and img.size[0] > 300
    assert not mails(h, addr("p4"), "the board has changed")  # SET BOARD MAIL OFF

    # Outbid: p3 is told at once.
    say(h, "p5", "f8", "BID S 5")
    outbid = mails(h, addr("p3"), "outbid on S")
    assert len(outbid) == 1 and "p5 bid 5 on seat S" in h.body(outbid[0])

    # A rejected bid changes nothing.
    before, *_ = state(h, "f8")
    reply = say(h, "p6", "f8", "BID U 5")
    assert ("Rejected: Rule 4: No bid can be made that matches a standing bid or a winning bid. 5 is p5's standing "
            "bid on S.") in reply
    after, *_ = state(h, "f8")
    assert (after.standing, after.players, after.history) == (before.standing, before.players, before.history)

    # BUY: refused without garnets; bought privately with them.
    assert "Rejected: A chip costs 2 garnets: 1 chip costs 2, and you have 0." in say(h, "p7", "f8", "BUY")
    reply = say(h, "p1", "f8", "BUY 2\nBUY")
    assert "2 chips cost 4, and you have 2" in reply and "Done: bought" in reply
    private = mails(h, addr("p1"), "chips bought")
    assert len(private) == 1 and "You hold 17 chips and 0 garnets" in h.body(private[0])
    assert private[0]["X-Judge-Private"] == "yes"
    assert "the board is in a mail of its own" in say(h, "p4", "f8", "BOARD")
    asked = h.sent_to(addr("p4"))[-2]
    assert "the board" in str(asked["Subject"]) and png_of(asked)

    at(h, opens, 2)
    for who, line in [("p6", "BID U 6"), ("p7", "BID V 7"), ("p8", "BID W 8"), ("p4", "BID X 9"),
                      ("p1", "BID Y 10"), ("p3", "BID Z 11")]:
        assert "Done: your bid of" in say(h, who, "f8", line)

    # The daemon stops; every timer runs out while it is down.
    h = restart(h, data_dir, migrated_database_url)
    at(h, opens, 40)
    h.run()
    won = lui_events(h, "f8", "SeatWon")
    assert len(won) == 9
    expected = {"R": 24, "T": 25, "S": 25, "U": 26, "V": 26, "W": 26, "X": 26, "Y": 26, "Z": 26}
    for e in won:
        assert e.data["fired_at"] == (opens + timedelta(hours=expected[e.data["seat"]])).isoformat()
        assert e.at == h.clock.now()  # recorded at the restart, fired with its own time
    s, _, next_tick, game_state = state(h, "f8")
    assert s.phase == "finished" and s.end_reason == "all-won" and s.ended_at == 26
    assert s.winner == "p2" and dict(s.tol_awarded) == {"p2": 1, "p4": 1, "p5": 1, "p6": 1, "p3": 1}
    assert s.ec == "p3" and s.ec_by == "rule"  # the fewest chips: 16 - 4 - 11
    assert next_tick is None and game_state == "resolved"
    for who in players + ["gm"]:
        results = h.sent_to_kind(addr(who), "result")
        assert len(results) == 1, who
        body = h.body(results[0])
        assert "the final standings" in body.lower() and "EC: p3 (rule)" in body
        assert "Every valid bid, in order:" in body and "p5                     5 on S" in body
    # The game is over: a bid is refused.
    assert "Rejected: The auction is over" in say(h, "p8", "f8", "BID R 12")
    h.close()


def test_a_whole_f11_game_by_mail_with_ec_choice_and_gifts(tmp_path, migrated_database_url):
    data_dir = tmp_path / "data"
    h = Harness(data_dir, migrated_database_url)
    players = [f"q{k}" for k in range(1, 12)]
    prizes = "\n".join(f"SET PRIZE {seat} 1 {k % 3}" for k, seat in enumerate("OPQRSTUVWXYZ"))
    setup(h, "f11", "F11", players, prizes + "\nSET PRIORITY q1 9")
    _, opens, _, _ = state(h, "f11")
    say(h, "q1", "f11", "BID 1 S")
    say(h, "q11", "f11", "SET BOARD MAIL OFF")
    at(h, opens, 0.5)
    h.run()
    for who, line in [("q2", "BID P 3"), ("q3", "BID R 4"), ("q4", "BID 5 Z")]:
        assert "Done: your bid of" in say(h, who, "f11", line)
    # Issue 26 (17): 11 players get an hourly digest by default, not a board mail a bid.
    assert not mails(h, addr("q5"), "the board has changed")
    at(h, opens, 1.0)
    h.run()
    assert len(mails(h, addr("q5"), "the board has changed")) == 1  # the opening and three bids, one digest
    assert not mails(h, addr("q11"), "the board has changed")

    # Down from 1 h to 40 h: the timers run out at 24 h and 24.5 h, and
    # with nothing standing and no bid for a day, the game ends.
    h = restart(h, data_dir, migrated_database_url)
    at(h, opens, 40)
    h.run()
    s, _, next_tick, _ = state(h, "f11")
    assert s.phase == "ec" and s.end_reason == "quiet" and s.winner == "q1"
    over = lui_events(h, "f11", "GameOver")
    assert over[0].data["fired_at"] == (opens + timedelta(hours=s.ended_at)).isoformat()
    assert s.ended_at == 24.5
    # F11: 2 to the winner, 1 to each adjacent winner, unclaimed ones to the winner: 6 in all.
    assert dict(s.tol_awarded) == {"q1": 4, "q2": 1, "q3": 1}
    assert set(s.ec_candidates) == {f"q{k}" for k in range(5, 12)}
    assert next_tick == opens + timedelta(hours=24.5 + 24)  # the EC deadline
    ask = next(b for b in map(h.body, h.sent_to(addr("q1"))) if "You, the winner" in b)
    assert "You, the winner, choose the EC among q5, q6, q7, q8, q9, q10, q11: send EC name" in ask

    assert "Rejected: q2 is not among the EC candidates" in say(h, "q1", "f11", "EC q2")
    assert "Rejected: q1 chooses the EC, not you." in say(h, "q5", "f11", "EC q6")
    assert "Done: q5 is the EC" in say(h, "q1", "f11", "EC q5@example.test")
    give = next(b for b in map(h.body, h.sent_to(addr("q1"))) if "ToL gifts:" in b)
    assert "give 3 away" in give and "GIVE TOL name" in give
    reply = say(h, "q1", "f11", "GIVE TOL q5\nGIVE TOL q2\nGIVE TOL q6\nGIVE TOL q7\nGIVE TOL q8")
    assert "q5 is the EC: a ToL goes to a player with neither a ToL nor the EC." in reply
    assert "q2 holds a ToL already" in reply
    assert reply.count("Done: you gave a ToL to") == 3
    s, _, next_tick, game_state = state(h, "f11")
    assert s.phase == "finished" and game_state == "resolved" and next_tick is None
    assert {p.name: p.tol for p in s.players if p.tol} == {n: 1 for n in ("q1", "q2", "q3", "q6", "q7", "q8")}
    body = h.body(h.sent_to_kind(addr("q9"), "result")[0])
    assert "EC: q5 (winner)" in body and "q1 -> q6" in body
    assert "Winner: q1, seat S with 1." in body
    h.close()



def test_the_gm_chooses_the_ec_when_the_winner_does_not(tmp_path, migrated_database_url):
    """F8 with 4 players: the GM changes a prize during the game, the EC's
    deadline runs out while the daemon is down (fired with its own time),
    the GM chooses by mail, the winner gives what can be given."""
    data_dir = tmp_path / "data"
    h = Harness(data_dir, migrated_database_url)
    players = ["a1", "a2", "a3", "a4"]
    prizes = "\n".join(f"SET PRIZE {seat} 1 1" for seat in "RSTUVWXYZ")
    setup(h, "ec", "F8", players, prizes + "\nSET PLAYERS 4")
    _, opens, _, _ = state(h, "ec")
    at(h, opens, 1)
    h.run()
    say(h, "a1", "ec", "BID Z 1")
    say(h, "a2", "ec", "BID Y 2")
    h.mail(GM, "SIGNON Mec gmpw\nSET PRIZE Y 5 2\nSET TIMER 12\nBID Z 3")
    reply = h.body(h.last_to(GM))
    assert "Done: seat Y now gives 5 garnets and 2 priority" in reply
    assert "its settings are fixed" in reply and "Rejected: The GM does not bid." in reply

    h = restart(h, data_dir, migrated_database_url)
    at(h, opens, 100)
    h.run()
    s, _, next_tick, _ = state(h, "ec")
    assert s.winner == "a1" and s.ec_candidates == ("a3", "a4") and s.ec_overdue and next_tick is None
    overdue = lui_events(h, "ec", "EcOverdue")
    assert [e.data["fired_at"] for e in overdue] == [(opens + timedelta(hours=25 + 24)).isoformat()]
    gm_news = next(b for b in map(h.body, h.sent_to(GM)) if "did not choose the EC in time" in b)
    assert "choose among a3, a4 with EC name" in gm_news
    assert "Rejected: The time to choose the EC ran out" in say(h, "a1", "ec", "EC a3")
    h.mail(GM, "SIGNON Mec gmpw\nEC a4")
    assert "Done: a4 is the EC" in h.body(h.last_to(GM))
    # F8: the winner 1, the adjacent winner (Y) 1, an unclaimed neighbour gives the winner one more.
    assert "Done: you gave a ToL to a3" in say(h, "a1", "ec", "GIVE TOL a3")
    s, _, _, game_state = state(h, "ec")
    assert game_state == "resolved" and s.ec_by == "gm"
    assert {p.name: p.tol for p in s.players} == {"a1": 3, "a2": 1, "a3": 1, "a4": 0}
    assert s.player("a2").garnets == 5 and s.player("a2").chips == 14
    body = h.body(h.sent_to_kind(addr("a4"), "result")[0])
    assert "EC: a4 (gm)" in body and "Y  a2                   won with   2" in body and "(5 garnets, 2 priority)" in body
    h.close()

if __name__ == "__main__":  # pragma: no cover - print a game's mails to read them
    import sys
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp())
    test_a_whole_f11_game_by_mail_with_ec_choice_and_gifts(d, f"sqlite:///{d / 'j.sqlite3'}")
    h = Harness(d / "data", f"sqlite:///{d / 'j.sqlite3'}")
    for m in h.sent_to(sys.argv[1] if len(sys.argv) > 1 else addr("q1")):
        print("=" * 70, "\nSubject:", m["Subject"], "\n" + h.body(m))
