"""The REPLACE trap (issue 27, point 1): a Blind Auction's deadline passes
with a player silent; the master replaces them, as the judge's own notice
recommends, and sends PROCESS. The replacement may bid until that PROCESS,
every text says so, and the game ends with every player assigned. A new
deadline the master sets then is for the players whose bids were not in:
the bids in at the close stand."""

from __future__ import annotations

import re

from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Resolution

GM = "gm@example.test"
NAMES = ["ann", "bob", "cat", "dan", "eve", "fay", "gus"]
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def _auction_waiting_for_gus(h) -> None:
    h.mail(GM, "CREATE ?spring gmpw blind-auction standard\nSET DEADLINE +48h")
    for n in NAMES:
        h.mail(f"{n}@example.test", f"SIGNON ?spring pw-{n}")
    h.mail(GM, "SIGNON Mspring gmpw\nSTART")
    for k, n in enumerate(NAMES[:6]):
        bids = ", ".join(f"{p} {b}" for p, b in zip(POWERS, [40, 30, 20, 15, 10, 5, 1][k:] + [40, 30, 20, 15, 10,
                                                                                                5, 1][:k]))
        h.mail(f"{n}@example.test", f"SIGNON ?spring pw-{n}\n{bids}")
    h.clock.advance(hours=49)
    h.run()
    with h.judge.sessions() as s:
        assert find_game(s, "spring").state == "waiting"


def _token(h, address: str) -> str:
    body = h.body(h.sent_to(address)[-1])
    return re.search(r"^SIGNON \?spring ([A-Z0-9]{10})$", body, re.M).group(1)


def test_a_replacement_named_after_the_deadline_bids_until_process(harness):
    h = harness
    _auction_waiting_for_gus(h)
    notice = " ".join(h.body(h.last_to(GM)).split())
    assert "A replacement may bid until your PROCESS" in notice

    h.mail(GM, "SIGNON Mspring gmpw\nREPLACE gus@example.test Hal <hal@example.test>")
    reply = " ".join(h.body(h.last_to(GM)).split())
    assert "replaced by hal@example.test (Hal)" in reply
    assert "The deadline has passed: Hal may bid until you send PROCESS" in reply

    invitation = " ".join(h.body(h.sent_to("hal@example.test")[-1]).split())
    assert "has passed, but you, as the replacement, may still bid: until the master processes the auction" \
        in invitation
    assert "before the deadline" not in invitation

    # PROCESS before Hal's bids: refused, saying that Hal may still bid.
    h.mail(GM, "SIGNON Mspring gmpw\nPROCESS")
    refused = " ".join(h.body(h.last_to(GM)).split())
    assert "no bids yet from Hal <hal@example.test> (Hal, named after the deadline, may still bid until your " \
           "PROCESS" in refused

    token = _token(h, "hal@example.test")
    h.mail("Hal <hal@example.test>", f"SIGNON ?spring {token}\nSET PASSWORD halpw")
    h.mail("hal@example.test", "SIGNON ?spring halpw")
    assert "you may bid until the master processes the auction (PROCESS)" in h.body(h.last_to("hal@example.test"))
    h.mail("hal@example.test", "SIGNON ?spring halpw\nAustria 2, England 40, France 30, Germany 20, Italy 10, "
                               "Russia 5, Turkey 1")
    accepted = " ".join(h.body(h.last_to("hal@example.test")).split())
    assert "Done: bid list accepted" in accepted
    assert "You may change it until the master processes the auction (PROCESS)." in accepted

    # The others' bids stand: closed for them.
    h.mail("ann@example.test", "SIGNON ?spring pw-ann\nNo Preference")
    assert "has passed; bids are closed and yours stand" in h.body(h.last_to("ann@example.test"))

    h.mail(GM, "SIGNON Mspring gmpw\nPROCESS")
    assert "?spring is resolved now, as a job of its own: the results go to all 7 players" in h.body(h.sent_to_kind(GM, "reply")[-1])
    with h.judge.sessions() as s:
        game = find_game(s, "spring")
        record = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).one().result
    assert sorted(record["assignment"].values()) == sorted(POWERS)
    assert "hal@example.test" in record["assignment"] and "gus@example.test" not in record["assignment"]
    assert record["chart"]["hal@example.test"]["England"] == 40
    assert h.sent_to_kind("hal@example.test", "result")


def test_a_new_deadline_is_for_those_whose_bids_were_not_in(harness):
    h = harness
    _auction_waiting_for_gus(h)
    h.mail(GM, "SIGNON Mspring gmpw\nSET DEADLINE +24h")
    reply = h.body(h.last_to(GM))
    assert "bidding is open again until then for the players whose bids were not in" in reply
    told = " ".join(h.body(h.sent_to("ann@example.test")[-1]).split())
    assert "Your bids were in when the auction closed, and they stand" in told
    assert any("You may send or change your bids until then" in h.body(m) for m in h.sent_to("gus@example.test"))
    # Reminders go to those who may still bid: Gus, not Ann.
    assert any("reminder" in str(m["Subject"]) for m in h.sent_to("gus@example.test"))
    assert not any("reminder" in str(m["Subject"]) for m in h.sent_to("ann@example.test"))

    # Ann's bids stand; Gus, who sent nothing, may bid now.
    h.mail("ann@example.test", "SIGNON ?spring pw-ann\nNo Preference")
    assert "closed at" in h.body(h.last_to("ann@example.test")) and "they stand" in h.body(
        h.last_to("ann@example.test"))
    h.mail("gus@example.test", "SIGNON ?spring pw-gus\nNo Preference")
    assert "Done: No Preference accepted" in h.body(h.last_to("gus@example.test"))

    # At the new deadline nobody is missing: the judge resolves by itself.
    h.clock.advance(hours=25)
    h.run()
    with h.judge.sessions() as s:
        assert find_game(s, "spring").state == "resolved"
    assert h.sent_to_kind("gus@example.test", "result")
