"""An F11 game of 9 players run by mail (issue 26, "how it is shown"):
SET PLAYERS 9, the prizes and a priority from an earlier game, pregame
bids, the auction's opening, bids and outbids, the hourly board digest,
seats won, the quiet day's end, the EC chosen by the winner and the ToL
given by mail, and the final standings, each mail read as a player reads
it: UTC times, never the engine's hours, and names, never addresses."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from judge.games import find_game
from judge.methods.lui.persist import from_json
from tests.harness import Harness

GM = "gm@example.test"
NAMES = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy"]
ENGINE_HOURS = re.compile(r"-?\d+\.\d+ h\b|\bat -?\d+(\.\d+)? h\b")


def addr(name: str) -> str:
    return f"{name}@example.test"


def bodies(h: Harness, who: str, since: int = 0) -> list[str]:
    return [f"{m['Subject']}\n{h.body(m)}" for m in h.sent_to(who)[since:]]


def say(h: Harness, who: str, text: str) -> str:
    h.mail(addr(who), f"SIGNON ?nine pw\n{text}")
    return h.body(h.sent_to_kind(addr(who), "reply")[-1])


def state(h: Harness):
    with h.judge.sessions() as s:
        g = find_game(s, "nine")
        return from_json(g.method_state["state"]), g.state


def test_an_f11_game_of_nine_players_by_mail(harness: Harness):
    h = harness
    prizes = "\n".join(f"SET PRIZE {seat} {k % 3} {k % 2}" for k, seat in enumerate("OPQRSTUVWXYZ"))
    h.mail(GM, f"CREATE ?nine gmpw lui\nSET PLAYERS 9\n{prizes}")
    created = h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "preset F11: 4 rows of 3, seats O-Z, 9 players, board mails hourly" in created
    for n in NAMES:
        h.send(addr(n), "SIGNON ?nine pw")
    h.run()
    assert "the auction's own timers run it" in h.body(h.last_to(GM))
    h.mail(GM, "SIGNON Mnine gmpw\nSET PRIORITY ann 2\nSTART")
    assert "?nine started: the pregame is open; 9 players were sent the rules" in h.body(h.sent_to_kind(GM, "reply")[-1])
    with h.judge.sessions() as s:
        opens = datetime.fromisoformat(find_game(s, "nine").method_state["opens_at"])
    rules = bodies(h, addr("bob"))[-1]
    assert 'You are "bob" in this game' in rules and "UTC" in rules

    # Pregame: ann (priority 2) and bob bid on Z; ann's goes through first, bob's 7 then outbids it.
    assert "your pregame bid of 5 on Z is stored" in say(h, "ann", "BID Z 5")
    say(h, "bob", "BID Z 7")
    say(h, "cat", "BID Y 3")
    mark = {n: len(h.sent_to(addr(n))) for n in NAMES}
    h.clock.set(opens + timedelta(minutes=5))
    h.run()
    ann = "\n".join(bodies(h, addr("ann"), mark["ann"]))
    assert "outbid on Z" in ann and "your bid of 5 there no longer stands" in ann
    assert "Your pregame bid of 5 on Z stands" not in ann  # not both in the same second
    assert "Your pregame bid of 7 on Z stands" in "\n".join(bodies(h, addr("bob"), mark["bob"]))

    # Bids in the first hour: no board mail a bid, one digest at the hour.
    for who, line in [("dan", "BID O 2"), ("eve", "BID P 4"), ("ann", "BID Z 9"), ("fay", "BID 1 Q")]:
        assert "Done: your bid of" in say(h, who, line)
    assert not [b for b in bodies(h, addr("gus"), mark["gus"]) if "the board has changed" in b]
    h.clock.set(opens + timedelta(hours=1, minutes=1))
    h.run()
    digests = [b for b in bodies(h, addr("gus"), mark["gus"]) if "the board has changed" in b]
    assert len(digests) == 1 and "SET BOARD MAIL OFF stops these mails" in digests[0]

    # The timers run out (24 h), then a quiet day ends the auction; the
    # winner chooses the EC by mail, those holding more than one ToL give them.
    from judge.methods.lui import engine

    chosen = given = False
    for _ in range(12):
        h.clock.advance(seconds=8 * 3600)
        h.run()
        s, game_state = state(h)
        if s.phase == "ec" and s.ec_chooser is not None and not chosen:
            reply = say(h, s.ec_chooser, f"EC {s.ec_candidates[-1]}")
            assert "Done: " in reply, reply
            chosen = True
        elif s.phase == "gifts":
            for giver, count in engine._owed(s):
                to = [n for n in engine._eligible(s) if n != giver][:count]
                assert "Done" in say(h, giver, "\n".join(f"GIVE TOL {n}" for n in to))
                given = True
        elif s.phase == "finished":
            break
    winner = s.winner
    assert chosen and s.ec_by == "winner" and given and len(s.gifts) >= 1  # both by the players' own mails
    s, game_state = state(h)
    assert s.phase == "finished" and game_state == "resolved"

    # Everything a player read: UTC times, never the engine's hours; names, not addresses.
    for n in NAMES:
        for body in bodies(h, addr(n)):
            assert not ENGINE_HOURS.search(body), (n, ENGINE_HOURS.search(body), body)
        final = [b for b in bodies(h, addr(n)) if "final standings" in b.lower()]
        assert len(final) == 1, n
        assert "@" not in final[0].split("\n", 1)[1].replace("judge@example.test", "")
    final = [b for b in bodies(h, addr("ann")) if "final standings" in b.lower()][0]
    assert f"Winner: {winner}" in final
