"""LUI's board mails (issue 26, point 17): a bid of an F11 game mailed the
board to every player (10 mails a bid). The GM chooses with SET BOARDMAIL
BID|DIGEST|NONE; by default a game of 9 players or more gets one digest an
hour, a smaller one the board after each bid."""

from __future__ import annotations

from datetime import datetime, timedelta

from judge.games import find_game
from tests.harness import Harness

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def boards(h: Harness, who: str) -> int:
    return len([m for m in h.sent_to(addr(who)) if "the board has changed" in str(m["Subject"])])


def _game(h: Harness, name: str, players: list[str], lines: str) -> datetime:
    prizes = "\n".join(f"SET PRIZE {seat} 1 1" for seat in "OPQRSTUVWXYZ")
    h.mail(GM, f"CREATE ?{name} gmpw lui\n{lines}\n{prizes}")
    for p in players:
        h.send(addr(p), f"SIGNON ?{name} pw")
    h.run()
    h.mail(GM, f"SIGNON M{name} gmpw\nSTART")
    with h.judge.sessions() as s:
        opens = datetime.fromisoformat(find_game(s, name).method_state["opens_at"])
    h.clock.advance(seconds=(opens - h.clock.now()).total_seconds() + 60)
    h.run()
    return opens


def test_nine_players_get_an_hourly_digest_by_default(harness: Harness):
    h = harness
    players = [f"n{k}" for k in range(9)]
    h.mail(GM, "CREATE ?dg gmpw lui\nSET PLAYERS 9\nSET BOARDMAIL maybe")
    reply = h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "9 players, board mails hourly" in reply and "expected BID, DIGEST or NONE" in reply
    opens = _game(h, "dg2", players, "SET PLAYERS 9")
    for k, p in enumerate(players[:5]):
        h.mail(addr(p), f"SIGNON ?dg2 pw\nBID {'OPQRS'[k]} {k + 1}")
    assert boards(h, "n8") == 0  # five bids, no board mail yet
    h.clock.set(opens + timedelta(hours=1, minutes=1))
    h.run()
    assert boards(h, "n8") == 1  # one digest: the opening and the five bids
    assert "Z" in h.body([m for m in h.sent_to(addr("n8")) if "the board has changed" in str(m["Subject"])][0])
    h.clock.advance(seconds=3600)
    h.run()
    assert boards(h, "n8") == 1  # nothing changed since: no digest


def test_the_gm_chooses_a_board_mail_a_bid_or_none(harness: Harness):
    h = harness
    players = [f"b{k}" for k in range(9)]
    _game(h, "bb", players, "SET PLAYERS 9\nSET BOARDMAIL BID")
    h.mail(addr("b0"), "SIGNON ?bb pw\nBID O 1")
    h.mail(addr("b1"), "SIGNON ?bb pw\nBID P 2")
    assert boards(h, "b8") == 3  # the opening and each bid
    _game(h, "bn", [f"c{k}" for k in range(9)], "SET PLAYERS 9\nSET BOARDMAIL NONE")
    h.mail(addr("c0"), "SIGNON ?bn pw\nBID O 1\nBOARD")
    h.clock.advance(seconds=3 * 3600)
    h.run()
    assert boards(h, "c8") == 0 and boards(h, "c0") == 0
    assert any("?bn: the board" == str(m["Subject"]) for m in h.sent_to(addr("c0")))  # BOARD still answers
