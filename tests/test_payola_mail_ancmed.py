"""A Payola year on another map by mail (issue 26, "how it is shown"):
ancmed, five powers, from the start mail to the income before the second
Spring, each mail read as the Roman player reads it. (The standard map's
year by mail: tests/test_e2e_payola.py.)"""

from __future__ import annotations

from judge.games import find_game
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from tests.harness import Harness

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def results(h: Harness, who: str, phase: str) -> str:
    mails = [m for m in h.sent_to(addr(who)) if f"Payola {phase} results" in str(m["Subject"])]
    assert len(mails) == 1, [str(m["Subject"]) for m in h.sent_to(addr(who))]
    return h.body(mails[0])


def test_a_payola_year_on_ancmed_by_mail(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?anc gmpw payola ancmed")
    assert "variant ancmed: Carthage (C), Egypt (E), Greece (G), Persia (P), Rome (R)" in h.body(h.last_to(GM))
    for k in range(1, 6):
        h.send(addr(f"p{k}"), "SIGNON ?anc pw")
    h.run()
    h.mail(GM, "SIGNON Manc gmpw\nSET POWER p1@example.test Rome\nSET POWER p2@example.test Carthage\n"
               "SET POWER p3@example.test Greece\nSTART")
    assert "S0001M: offer sheets are taken until Wed 04 Mar 2026 12:00 UTC" in h.body(h.sent_to_kind(GM, "reply")[-1])

    start = h.body(h.last_to(addr("p1")))
    assert "You are Rome" in start and "Your bank account holds 48 AgP. Your units: F NEA, A ROM, A RAV." in start
    # The examples are in Rome's own units and this map's powers, not A PAR - BUR and England.
    assert "4 : F NEA - " in start and "PAR" not in start.split("for instance")[1].split("Retreats")[0]
    assert "TRANSFER 10 TO Carthage" in start

    h.mail(addr("p1"), "SIGNON ?anc pw\n3 : A RAV - VEN\n2 : F NEA - SIC")
    reply = h.body(h.sent_to_kind(addr("p1"), "reply")[-1])
    assert "your sheet for S0001M: 2 lines, offers of up to 5 AgP, against your balance of 48 AgP" in reply
    h.mail(addr("p3"), "SIGNON ?anc pw\n1 : F NEA H")  # Greece bribes Rome's fleet to stay, and loses
    h.mail(addr("p2"), "SIGNON ?anc pw\n4 : A CAR - MAU")

    h.clock.advance(seconds=72 * 3600)
    h.run()
    spring = results(h, "p1", "S0001M")
    for line in ("S0001M ACCOUNT STATEMENT FOR ROME", "     3 AgP  A RAV - VEN", "     2 AgP  F NEA - SIC",
                 "Previous balance:                48 AgP", "New balance:                     43 AgP",
                 "Rome     3 centres (NEA RAV ROM); units: A ROM, F SIC, A VEN",
                 "Next: F0001M, deadline Sat 07 Mar 2026 12:00 UTC."):
        assert line in spring, (line, spring)
    greece = results(h, "p3", "S0001M")
    assert "Cost of your bribes:              0 AgP" in greece  # its losing bribe costs nothing

    h.clock.advance(seconds=72 * 3600)
    h.run()
    fall = results(h, "p1", "F0001M")
    assert "You sent no offer sheet." in fall and "Rome     4 centres (NEA RAV ROM SIC)" in fall
    assert "Next: W0001A" in fall

    h.clock.advance(seconds=24 * 3600)
    h.run()
    winter = results(h, "p1", "W0001A")
    assert "Income before S0002M: 62 AgP from 4 centres." in winter and "Your balance: 105 AgP." in winter
    assert "Rome waived 1 build." in winter
    with h.judge.sessions() as s:
        state, _ = load(find_game(s, "anc"))
    assert G.phase(state) == "S0002M"
    assert [r["phase"] for r in state.reports] == ["S0001M", "F0001M", "W0001A"]
    assert state.ledger.balance("Rome") == 105 and state.ledger.balance("Greece") == 48 + 48
