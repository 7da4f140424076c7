"""A Payola game by mail that ends (issue 14), on SQLite and PostgreSQL:
the stored position is set near the end (France with 17 centres, a fleet
next to Tunis), the GM plays Spring with PROCESS, France's bribe takes
Tunis in the Fall: the 18th centre ends the game, the results say who won
and reveal the committed secret (whose SHA-256 is the commitment), the
game is resolved and takes no more lines."""

from __future__ import annotations

import hashlib

from judge.games import find_game
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from tests.harness import Harness
from tests.payola_helpers import near_the_end

GM = "gm@example.test"


def addr(k: int) -> str:
    return f"p{k}@example.test"


def test_the_18th_centre_ends_the_game_and_reveals_the_seed(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?end gmpw payola standard")
    commitment = h.body(h.last_to(GM)).split("SHA-256 ")[1].split(".")[0]
    for k in range(1, 8):
        h.send(addr(k), "SIGNON ?end pw")
    h.run()
    h.mail(GM, "SIGNON Mend gmpw\nSET POWER p3@example.test France\nSTART")
    near_the_end(h, "end")
    h.mail(GM, "SIGNON Mend gmpw\nPROCESS")
    assert "S1901M of ?end is played now" in h.body(h.sent_to_kind(GM, "reply")[-1])
    assert str(h.last_to(GM)["Subject"]) == "?end: Payola S1901M results (GM)"
    h.mail(addr(3), "SIGNON ?end pw\n1 : F NAF - TUN")
    assert "offer 1 of the sheet" in h.body(h.last_to(addr(3)))
    h.mail(GM, "SIGNON Mend gmpw\nPROCESS")
    assert "F1901M of ?end is played now" in h.body(h.sent_to_kind(GM, "reply")[-1])
    with h.judge.sessions() as s:
        game = find_game(s, "end")
        assert game.state == "resolved" and game.deadline is None
        state, _ = load(game)
    assert G.is_over(state) and len(G.centres(state)["France"]) == 18
    for who in (addr(3), GM):
        body = h.body([m for m in h.sent_to(who) if "F1901M results" in str(m["Subject"])][0])
        assert "The game is over: France wins with 18 centres." in body
        secret = body.split("The judge's secret seed is revealed: ")[1].split()[0]
        assert hashlib.sha256(bytes.fromhex(secret)).hexdigest() == commitment
    h.mail(addr(3), "SIGNON ?end pw\nLEDGER")
    assert "is not running" in h.body(h.last_to(addr(3)))
