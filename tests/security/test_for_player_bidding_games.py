"""FOR player in the bidding games (issue 26, point 8): the GM's FOR enters
what the docs say it enters, a player's bids or offer sheet (and a LUI
player's ToL gifts, a Payola power's orders), never what moves their money
or their settings. Before, `TRANSFER 48 TO England` and `SET ACCEPT` went
in for a Payola power, and BUY and SET BOARD MAIL for a LUI player."""

from __future__ import annotations

from judge.games import find_game
from judge.methods.lui.persist import from_json as lui_state
from judge.methods.payola.live import load

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def test_for_a_payola_power_enters_its_sheet_not_a_transfer_or_its_acceptance_list(harness):
    h = harness
    h.form_game(GM, "CREATE ?fp gmpw payola standard", [addr(f"p{k}") for k in range(1, 8)])
    h.mail(GM, f"SIGNON Mfp gmpw\nSET POWER {addr('p3')} France\nSTART")
    with h.judge.sessions() as s:
        before, _ = load(find_game(s, "fp"))
    h.mail(GM, f"SIGNON Mfp gmpw\nFOR {addr('p3')}\nTRANSFER 48 TO England\nSET ACCEPT FE\n4 : A PAR - BUR")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply
    assert reply.count("cannot send") == 2
    assert "cannot send TRANSFER for a power: FOR enters a power's offer sheet and orders" in reply
    assert "cannot send SET ACCEPT for a power" in reply
    with h.judge.sessions() as s:
        after, _ = load(find_game(s, "fp"))
    assert after.ledger.balance("France") == before.ledger.balance("France")
    assert after.ledger.balance("England") == before.ledger.balance("England")
    assert after.accept["France"] == before.accept["France"]
    assert after.sheets["France"] is not None  # the sheet went in
    assert "offer 1 of the sheet" in reply  # the reply is the master's, who sent it
    # France's player is told what was entered in their name, refusals included.
    told = [h.body(m) for m in h.sent_to(addr("p3")) if "in your name" in str(m["Subject"])]
    assert told and "TRANSFER 48 TO England" in told[-1] and "cannot send TRANSFER" in told[-1]


def test_for_a_lui_player_enters_bids_not_buy_ec_or_board_mail(harness):
    h = harness
    players = [f"u{k}" for k in range(1, 9)]
    h.form_game(GM, "CREATE ?fl gmpw lui\nSET PRESET F8", [addr(p) for p in players])
    h.mail(GM, "SIGNON Mfl gmpw\nSET PRIZE Z 1 1\nSTART")
    assert "?fl started" in h.body(h.last_to(GM))
    h.mail(GM, f"SIGNON Mfl gmpw\nFOR {addr('u1')}\nBUY 3\nSET BOARD MAIL OFF\nEC u2\nBID Z 5")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply
    for word in ("BUY", "SET BOARD MAIL", "EC"):
        assert f"cannot send {word} for a player: FOR enters a player's bids and ToL gifts" in reply
    assert "your pregame bid of 5 on Z is stored" in reply
    with h.judge.sessions() as s:
        state = lui_state(find_game(s, "fl").method_state["state"])
    u1 = state.player("u1")
    assert u1.board_mail and u1.chips == state.player("u2").chips  # nothing bought, nothing turned off


def test_for_a_pt3_player_sets_nothing(harness):
    h = harness
    h.mail(GM, "CREATE ?ft gmpw pt3")
    h.send(addr("ann"), "SIGNON ?ft pw")
    h.send(addr("bob"), "SIGNON ?ft pw")
    h.run()
    joined = h.body(h.last_to(GM))  # issue 26 (12): the last player's notice in PT3's words
    assert "Check T, M and D" not in joined and "Both players are in. Check who plays X and O" in joined
    h.mail(GM, f"SIGNON Mft gmpw\nFOR {addr('ann')}\nSET BALANCE X 1000\nSET X bob")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply
    assert reply.count("only the GM of ?ft changes its settings") == 2
    with h.judge.sessions() as s:
        assert find_game(s, "ft").params["balance_x"] == "100"
