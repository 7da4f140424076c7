"""Payola's DPjudge rules and dummies by mail (issue 26, points 3, 5, 6 and
10, whose attack is tests/security/test_payola_late_transfer.py): the GM's SET RULE, SET TAX, SET CAP and SET DUMMY before START reach
the game (game.new_game with the rules and dummies), a power nobody claimed
or an EJECTed player's is a dummy, TRANSFER goes by the rules (ONE_TRANSFER,
ANON_TRANSFER), the rules and dummies are in each movement phase's record
(judge resolve's input), and a TRANSFER or SET ACCEPT stored after the
deadline is refused as a late sheet is."""

from __future__ import annotations

from sqlalchemy import select

from judge.games import find_game
from judge.methods import get_method
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from judge.store.models import Event
from tests.harness import Harness

GM = "gm@example.test"


def addr(name: str) -> str:
    return f"{name}@example.test"


def stored(h: Harness, name: str = "pr"):
    with h.judge.sessions() as s:
        g = find_game(s, name)
        state, players = load(g)
        return state, players, g.deadline


def say(h: Harness, who: str, text: str) -> str:
    h.mail(who, f"SIGNON ?pr pw\n{text}")
    return h.body(h.sent_to_kind(who, "reply")[-1])


def test_the_gms_rules_and_dummies_by_mail(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?pr gmpw payola standard")
    for k in range(1, 6):  # five players for seven powers
        h.send(addr(f"p{k}"), "SIGNON ?pr pw")
    h.run()
    h.mail(GM, "SIGNON Mpr gmpw\nSTART")
    assert "?pr has 5 of its 7 players" in h.body(h.sent_to_kind(GM, "reply")[-1])
    h.mail(GM, "SIGNON Mpr gmpw\nSET DUMMY Atlantis\nSET DUMMY Italy Turkey\nSET RULE ONE_TRANSFER ANON_TRANSFER\n"
               "SET RULE MADE_UP\nSET TAX 10\nSET CAP 25\nSET POWER p1@example.test France\n"
               "SET POWER p2@example.test England\nSTART")
    reply = h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "nobody plays Italy, Turkey (civil disorder from the start)" in reply
    assert "Atlantis is not a power of ?pr" in reply
    assert "MADE_UP" in reply.split("SET RULE MADE_UP")[1].split(">")[0]  # refused, with the reason
    assert "the rules in force: ANON_TRANSFER, ONE_TRANSFER" in reply
    assert "every centre is worth 10 AgP a year" in reply and "a year's income is at most 25 AgP" in reply
    state, players, deadline = stored(h)
    # The GM's dummies: the game takes five players for seven powers.
    assert state.dummies == ("Italy", "Turkey") and len(players) == 5 and not {"Italy", "Turkey"} & set(players)
    assert state.accept["Italy"] == "?" and state.accept["Turkey"] == "?"
    assert "nobody plays Italy, Turkey (civil disorder)" in reply.split("> START")[1]
    assert {"ONE_TRANSFER", "ANON_TRANSFER"} <= state.rules.flags and state.rules.tax == 10
    assert state.ledger.balance("France") == 25  # 3 centres at 10 AgP, capped at 25
    assert state.ledger.balance("Russia") == 25

    # TRANSFER by the rules: one a phase to each power; the receiver is not told who sent it.
    reply = say(h, addr("p1"), "TRANSFER 5 TO England\nTRANSFER 5 TO England")
    assert "5 AgP sent to England" in reply
    assert "you sent England a transfer in S1901M already: one a phase to each power (ONE_TRANSFER)" in reply
    told = h.last_to(addr("p2"))
    assert "5 AgP from someone" in str(told["Subject"]) and "France" not in h.body(told)
    state, _, _ = stored(h)
    assert state.ledger.balance("France") == 20 and state.ledger.balance("England") == 30

    # EJECT: the power is a dummy from now on (its sheet dropped, its list '?').
    ejected_power, ejected = next((p, a) for p, a in players.items() if p not in ("France", "England"))
    say(h, ejected, "2 : A " + {"Germany": "BER H", "Austria": "VIE H", "Russia": "MOS H", "Turkey": "CON H",
                                "Italy": "ROM H"}[ejected_power])
    assert ejected_power in stored(h)[0].sheets
    h.mail(GM, f"SIGNON Mpr gmpw\nEJECT {ejected}")
    assert "civil disorder" in h.body(h.last_to(GM))
    state, players, _ = stored(h)
    assert ejected_power in state.dummies and ejected_power not in state.sheets
    assert state.accept[ejected_power] == "?" and ejected_power not in players

    # The phase's record holds the rules and the dummies, and replays with them.
    h.clock.advance(seconds=72 * 3600)
    h.run()
    with h.judge.sessions() as s:
        record = next(e.data for e in s.scalars(select(Event).where(Event.kind == "payola"))
                      if e.data["event"] == "movement")
    assert record["input"]["rules"] == ["ANON_TRANSFER", "ONE_TRANSFER"]
    assert record["input"]["tax"] == 10 and record["input"]["cap"] == 25
    assert sorted(record["input"]["dummies"]) == sorted(state.dummies)
    again = get_method("payola").resolve_file(record["input"], bytes.fromhex(record["seed"]))
    assert again["rules"] == ["ANON_TRANSFER", "ONE_TRANSFER"] and again["dummies"] == sorted(state.dummies)
    assert G.phase(stored(h)[0]) == "F1901M"


def test_a_sheets_reply_names_the_mails_lines_and_sums_the_sheet_up_once(harness: Harness):
    """Issue 26 (14): a refused offer line was "line 1" when it was the
    mail's 7th, and every accepted line repeated ~30 words."""
    h = harness
    h.mail(GM, "CREATE ?pr gmpw payola standard")
    for k in range(1, 8):
        h.send(addr(f"p{k}"), "SIGNON ?pr pw")
    h.run()
    h.mail(GM, "SIGNON Mpr gmpw\nSET POWER p1@example.test France\nSTART")
    reply = say(h, addr("p1"), "Hello GM,\n\n4 : A PAR - BUR\n2*3 : F BRE - MAO\n5 $\n4 : A PAR BURR")
    # SIGNON is the mail's line 1: the refused offer is its 7th.
    assert "line 7: 4 : A PAR BURR" in reply and "line 1: 4 : A PAR BURR" not in reply
    assert reply.count("replaces your previous sheet") == 1 and "Done: offer 2\n" in reply
    assert ("your sheet for S1901M: 3 lines, offers of up to 10 AgP and 5 AgP kept back, against your balance "
            "of 48 AgP") in reply
    assert "Instead 'BURR'. This line is not part of your sheet" in reply
    state, _, _ = stored(h)
    assert state.sheets["France"] == "4 : A PAR - BUR\n2*3 : F BRE - MAO\n5 $"
