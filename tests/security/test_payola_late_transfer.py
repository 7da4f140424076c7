"""A TRANSFER or SET ACCEPT stored after a Payola deadline (issue 26, point
10): it was counted in the phase already due, moving a power's money after
the deadline, while a late sheet was refused. Both are refused as a late
sheet is, and are taken in the next phase."""

from __future__ import annotations

from judge.methods.payola import game as G
from tests.harness import Harness
from tests.test_payola_mail_rules import GM, addr, say, stored


def test_a_transfer_after_the_deadline_is_refused_as_a_late_sheet(harness: Harness):
    """Issue 26 (10): a TRANSFER stored after the deadline, before the phase
    was played, counted in that phase while a late sheet was refused."""
    h = harness
    h.mail(GM, "CREATE ?pr gmpw payola standard")
    for k in range(1, 8):
        h.send(addr(f"p{k}"), "SIGNON ?pr pw")
    h.run()
    joined = h.body(h.last_to(GM))  # issue 26 (12): the last player's notice in Payola's words
    assert "Check T, M and D" not in joined and "SET RULE, SET TAX, SET CAP, SET DUMMY" in joined
    h.mail(GM, "SIGNON Mpr gmpw\nSET POWER p1@example.test France\nSTART")
    before, _, deadline = stored(h)
    h.clock.advance(seconds=(deadline - h.clock.now()).total_seconds() + 60)
    # The mail is stored and read in the same pass, before the deadline's work plays the phase.
    reply = say(h, addr("p1"), "4 : A PAR - BUR\nTRANSFER 10 TO England\nSET ACCEPT FE")
    assert reply.count("the deadline of S1901M") == 3 and "has passed: the phase is played with what stood" in reply
    state, _, _ = stored(h)
    assert G.phase(state) == "F1901M"
    assert state.ledger.balance("France") == before.ledger.balance("France")
    assert state.ledger.balance("England") == before.ledger.balance("England")
    assert state.accept["France"] == before.accept["France"]
    assert state.reports[-1]["bribes"]["sheets"] == {}
    # In the next phase the same lines are taken.
    assert "10 AgP sent to England" in say(h, addr("p1"), "TRANSFER 10 TO England")
