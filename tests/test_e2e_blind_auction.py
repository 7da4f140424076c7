"""A whole Blind Auction by mail, on SQLite and on PostgreSQL.

The GM creates a 7-player game; seven players join; six mail bids (one list
invalid, one resubmitted, one No Preference); one never sends. The clock
passes the deadline, the GM is told of the missing player, decides No
Preference for them and processes; every player's result mail is in the
outbox with the chart and the draws.
"""

from __future__ import annotations

import re

from sqlalchemy import select

from judge import audit
from judge.games import find_game
from judge.resolution import run_resolution
from judge.store.models import Game, InboundMessage, OutboxMessage, Resolution

GM = "Gina Master <gm@example.test>"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
PLAYERS = {
    "ann@example.test": "Ann",
    "bob@example.test": "Bob",
    "cat@example.test": "Cat",
    "dan@example.test": "Dan",
    "eve@example.test": "Eve",
    "fay@example.test": "Fay",
    "gus@example.test": "Gus",
}
BIDS = {
    "ann@example.test": [40, 30, 20, 15, 10, 5, 1],
    "bob@example.test": [40, 5, 20, 30, 10, 15, 1],  # ties with ann on Austria
    "cat@example.test": [1, 5, 10, 15, 20, 30, 40],
    "dan@example.test": [10, 40, 30, 20, 15, 5, 1],  # first list; resubmitted below
}
DAN_SECOND = [1, 5, 10, 15, 20, 40, 30]


def bid_text(values, style=0):
    forms = ["{name}: {v}", "{name} {v}", "{letter}={v}"]
    return "\n".join(forms[(i + style) % 3].format(name=p, letter=p[0], v=v)
                     for i, (p, v) in enumerate(zip(POWERS, values)))


def test_blind_auction_by_mail(harness):
    h = harness
    gm = "gm@example.test"

    h.mail(GM, "CREATE ?spring gmsecret blind-auction standard\nSET DEADLINE +48h\nSIGNOFF")
    reply = h.body(h.last_to(gm))
    assert "Done: game ?spring created" in reply and "gmsecret" not in reply

    for address, name in PLAYERS.items():
        h.send(f"{name} <{address}>", f"SIGNON ?spring pw-{name}\nSIGNOFF")
    h.run()
    assert "joined ?spring as Gus (player 7 of 7)" in h.body(h.last_to("gus@example.test"))
    assert "All players are in" in h.body(h.last_to(gm))

    h.mail(GM, "SIGNON Mspring gmsecret\nSTART")
    assert "the auction of ?spring is open" in h.body(h.last_to(gm))
    for address in PLAYERS:
        assert "Blind Auction for the powers of ?spring is open" in h.body(h.last_to(address))

    for k, (address, values) in enumerate(BIDS.items()):
        h.send(f"{PLAYERS[address]} <{address}>",
               f"SIGNON ?spring pw-{PLAYERS[address]}\n{bid_text(values, k)}\nSIGNOFF\n-- \nsent from my phone")
    h.run()
    for address in BIDS:
        assert "Done: bid list accepted" in h.body(h.last_to(address)), address

    # Dan changes his mind: the last valid list counts.
    h.clock.advance(hours=1)
    h.mail("dan@example.test", f"signon ?spring pw-Dan\n{bid_text(DAN_SECOND)}")
    assert "It replaces your list of" in h.body(h.last_to("dan@example.test"))

    # Eve's list breaks three rules: she is told each, and stands as No Preference.
    h.mail("eve@example.test", "SIGNON ?spring pw-Eve\nAustria 80\nEngland 30\nFrance 30\nGermany 15\n"
                               "Italy 10\nRussia 5\nTurkey 1")
    reply = h.body(h.last_to("eve@example.test"))
    assert "Rejected: bid list rejected, for 3 reasons" in reply
    assert "no bid may exceed M = 70" in reply
    assert "England and France both have 30 points" in reply
    assert "must not exceed T = 140" in reply
    assert "you bid No Preference" in reply

    h.mail("fay@example.test", "SIGNON ?spring pw-Fay\nNo Preference")
    assert "No Preference accepted" in h.body(h.last_to("fay@example.test"))

    # A wrong password changes nothing and says so.
    h.mail("fay@example.test", "SIGNON ?spring wrong\nAustria 70")
    reply = h.body(h.last_to("fay@example.test"))
    assert "wrong password for ?spring" in reply and "Ignored: 1 line" in reply

    # Gus never sends. The deadline passes: the GM is told, the game waits.
    h.clock.advance(hours=48)
    result = h.run()
    assert result["deadlines"] == ["spring: waiting for the master (1 missing)"]
    missing = h.body(h.last_to(gm))
    assert "Gus <gus@example.test>" in missing and "NO PREFERENCE FOR gus@example.test" in missing
    assert not h.sent_to_kind("gus@example.test", "result")

    # A late bid is refused.
    h.mail("ann@example.test", "SIGNON ?spring pw-Ann\nNo Preference")
    assert "has passed" in h.body(h.last_to("ann@example.test"))

    # PROCESS before deciding about Gus is refused with what to do.
    h.mail(GM, "SIGNON Mspring gmsecret\nPROCESS")
    assert "no bids yet from Gus" in h.body(h.last_to(gm))

    h.mail(GM, "SIGNON Mspring gmsecret\nNO PREFERENCE FOR gus@example.test\nPROCESS")
    assert "?spring is resolved now, as a job of its own: the results go to all 7 players" in h.body(h.sent_to_kind(gm, "reply")[-1])

    with h.judge.sessions() as s:
        game = find_game(s, "spring")
        assert game.state == "resolved"
        resolution = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).one()
        record = resolution.result
        # The stored input and seed replay to the stored result.
        assert run_resolution(resolution.input, bytes.fromhex(resolution.seed)) == record
        events = audit.game_events(s, game)

    assignment = record["assignment"]
    assert sorted(assignment) == sorted(PLAYERS)
    assert sorted(assignment.values()) == sorted(POWERS)
    assert record["chart"]["dan@example.test"] == dict(zip(POWERS, DAN_SECOND))
    assert record["chart"]["eve@example.test"] == dict.fromkeys(POWERS, 1)
    assert set(record["no_preference"]) == {"eve@example.test", "fay@example.test", "gus@example.test"}
    assert "eve@example.test" in record["rejected"]
    # Ann and Bob both bid 40 on Austria: a draw between them is recorded.
    assert any(d["what"] == "player" and set(d["options"]) >= {"ann@example.test", "bob@example.test"}
               for d in record["draws"])

    for address, name in PLAYERS.items():
        results = h.sent_to_kind(address, "result")
        assert len(results) == 1, address
        body = h.body(results[0])
        assert f"You, {name}, play {assignment[address]}" in body
        for other, power in assignment.items():
            assert re.search(rf"{power}\s+{PLAYERS[other]} <{re.escape(other)}>", body)
        row = " ".join(str(v) for v in record["chart"][address].values())
        cells = re.search(rf"^{name}\s+(.*?)\s+\d+(\s+\(.*\))?$", body, re.M).group(1)
        assert re.sub(r"[*\s]+", " ", cells).strip() == row
        for d in record["draws"]:
            assert f"stream word #{d['counter']}" in body
        assert resolution.seed in body
    gm_result = h.body(h.sent_to_kind(gm, "result")[0])
    assert "[b]Blind Auction results: spring[/b]" in gm_result and "[table]" in gm_result

    kinds = [e["kind"] for e in events]
    assert {"inbound", "command", "outbound", "draw", "resolution", "state"} <= set(kinds)
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    assert kinds.count("draw") == len(record["draws"])
    assert all("pw-" not in str(e) and "gmsecret" not in str(e) for e in events)

    # Every mail in got exactly one reply; nothing is left unprocessed or unsent.
    with h.judge.sessions() as s:
        inbound = s.scalars(select(InboundMessage)).all()
        assert {m.status for m in inbound} == {"done"}
        replies = s.scalars(select(OutboxMessage).where(OutboxMessage.kind == "reply")).all()
        assert sorted(r.inbound_id for r in replies) == sorted(m.id for m in inbound)
        assert {r.status for r in s.scalars(select(OutboxMessage))} == {"sent"}
        assert s.scalars(select(Game)).one().resolved_at == h.clock.now()
