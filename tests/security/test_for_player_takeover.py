"""The GM takes over a player with FOR (issue 9).

The attack: `FOR c@x.org` then `SET PASSWORD x` changed c's password, and
bids and ENTROPY went in as c's, and c was not told. FOR now enters a list
and nothing else (bids, NO PREFERENCE, SET PREFERENCE); SET PASSWORD and
ENTROPY are refused with the reason; and every player named by FOR is
mailed the lines entered in their name and what came of each.
"""

from __future__ import annotations

from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Entropy, Submission

GM = "gm@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
PLAYERS = [f"p{i}@example.test" for i in range(7)]


def _game(h, method: str = "blind-auction", start: bool = True) -> None:
    # A preference game would start by itself when its last player signs on.
    manual = "\nSET MANUAL START" if method == "preference" else ""
    h.mail(GM, f"CREATE ?g gmpw {method}\nSET DEADLINE +24h{manual}")
    for a in PLAYERS:
        h.send(a, "SIGNON ?g pw")
    h.run()
    if start:
        h.mail(GM, "SIGNON Mg gmpw\nSTART")


def _entered_for(h, address: str) -> list[str]:
    return [h.body(m) for m in h.sent_to_kind(address, "notice") if "in your name" in str(m["Subject"])]


def test_for_gm_takes_over_a_player_with_set_password_and_entropy(harness):
    h = harness
    _game(h)
    bids = "\n".join(f"{p}: {v}" for p, v in zip(POWERS, [40, 30, 20, 15, 10, 5, 1]))
    h.mail(GM, f"SIGNON Mg gmpw\nFOR {PLAYERS[0]}\nSET PASSWORD taken\nENTROPY the master's own\n{bids}\n"
               f"FOR {PLAYERS[1]}\nNo Preference\nSIGNOFF\nFOR {PLAYERS[2]}\nNo Preference")
    reply = h.body(h.last_to(GM))
    assert "Rejected: the master cannot set a player's password: FOR enters only bids" in reply
    assert "Rejected: the master cannot add ENTROPY for p0" in reply
    assert "bid list accepted: Austria 40" in reply and "No Preference accepted" in reply
    assert "taken" not in reply

    # p0's password and the seed are untouched.
    h.mail(PLAYERS[0], "SIGNON ?g taken")
    assert "wrong password for ?g" in h.body(h.last_to(PLAYERS[0]))
    h.mail(PLAYERS[0], "SIGNON ?g pw")
    assert "signed on to ?g as p0" in h.body(h.last_to(PLAYERS[0]))
    with h.judge.sessions() as s:
        assert s.scalars(select(Entropy)).all() == []
        game = find_game(s, "g")
        by_id = {p.id: p.address for p in game.players}
        assert sorted(by_id[x.player_id] for x in s.scalars(select(Submission))) == PLAYERS[:2]

    # Each player named by FOR is told, once, what was entered and how it went.
    told = _entered_for(h, PLAYERS[0])
    assert len(told) == 1
    assert "> SET PASSWORD ****\nRejected: the master cannot set a player's password" in told[0]
    assert "> ENTROPY the master's own\nRejected: the master cannot add ENTROPY" in told[0]
    assert "> Austria: 40\n> England: 30\n" in told[0] and "Done: bid list accepted: Austria 40" in told[0]
    assert GM in told[0] and "No Preference" not in told[0] and "taken" not in told[0]
    told = _entered_for(h, PLAYERS[1])
    assert len(told) == 1 and "> No Preference\nDone: No Preference accepted" in told[0]
    assert "Austria: 40" not in told[0]
    assert _entered_for(h, PLAYERS[2]) == []  # after SIGNOFF nothing was read


def test_for_enters_a_preference_list_and_tells_the_player(harness):
    h = harness
    _game(h, "preference", start=False)
    h.mail(GM, f"SIGNON Mg gmpw\nFOR p3\nSET PREFERENCE E[FGR][TAI]\nFOR p3\nSET PREFERENCE XYZ\nSTART")
    reply = h.body(h.last_to(GM))
    assert "preference list for ?g" in reply and "only the master of ?g may do this" in reply
    told = _entered_for(h, PLAYERS[3])
    assert len(told) == 1  # one notice a player, however many FOR lines named them
    assert "> SET PREFERENCE E[FGR][TAI]\nDone: preference list for ?g" in told[0]
    assert "> SET PREFERENCE XYZ\nRejected:" in told[0]
    assert "> START" in told[0]  # the master's START, refused as p3's: p3 sees it tried


def test_a_for_ends_at_the_next_signon(harness):
    """FOR's refusals hold only for the lines it covers: after a SIGNON in
    the same mail, that signed-on player's own SET PASSWORD and ENTROPY run
    (the FOR flag once stayed on to the end of the mail)."""
    h = harness
    _game(h, start=False)
    h.mail(PLAYERS[0], f"SIGNON ?g pw\nSIGNON Mg gmpw\nFOR {PLAYERS[1]}\nSIGNON ?g pw\nSET PASSWORD mine\n"
                       f"ENTROPY blue whale")
    reply = h.body(h.last_to(PLAYERS[0]))
    assert "your password for ?g changed" in reply and "entropy noted" in reply
    assert not _entered_for(h, PLAYERS[1])  # nothing was entered in p1's name
