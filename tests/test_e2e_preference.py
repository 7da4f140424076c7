"""Preference lists by mail, in nJudge's own style, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select

from judge.games import find_game
from judge.resolution import run_resolution
from judge.store.models import Resolution

GM = "gm@example.test"
LISTS = {
    "ann@example.test": "FRIGATE",
    "bob@example.test": "E[FGR][TAI]",
    "cat@example.test": "f(rg)",
    "dan@example.test": "*",
    "eve@example.test": "",
    "fay@example.test": "Italy, Turkey, [Austria Russia]",
}


def test_njudge_style_preference_game(harness):
    h = harness
    h.mail(GM, "create ?prefs gmpw preference standard\nset prfboth\nset manual start\nsignoff")
    assert "Done: PRFBOTH" in h.body(h.last_to(GM))

    for address, text in LISTS.items():
        h.send(address, f"signon ?prefs pass\nset preference {text}\nsignoff")
    h.run()
    for address, text in LISTS.items():
        assert "Done: preference list for ?prefs" in h.body(h.last_to(address)), address
    # The master was told of every list as it came, and LIST shows them all.
    told = "\n".join(h.body(m) for m in h.sent_to(GM))
    assert "bob <bob@example.test> sent a preference list for ?prefs:\n\n    E[FGR][TAI]" in told
    assert "dan <dan@example.test> sent a preference list for ?prefs:\n\n    *" in told
    assert "eve <eve@example.test> sent a preference list for ?prefs:\n\n    SET PREFERENCE with no list" in told
    h.mail(GM, "signon Mprefs gmpw\nlist")
    listed = h.body(h.last_to(GM))
    assert "bob <bob@example.test>: list in: England, then [France, Germany, Russia], then [Turkey, Austria, " \
           "Italy]" in listed

    h.mail("gus@example.test", "signon ?prefs pass\nset preference EFX\nset preference EFGE\nsignoff")
    reply = h.body(h.last_to("gus@example.test"))
    assert "line 2, column 18: 'X' is not a power's letter" in reply
    assert "    SET PREFERENCE EFX\n                     ^" in reply
    assert "line 3, column 19: 'E' (England) is listed twice" in reply
    h.mail("gus@example.test", "signon ?prefs pass\nset pref GA")

    # A change of mind before the start counts.
    h.mail("ann@example.test", "signon ?prefs pass\nset preference RFIGATE")

    h.mail(GM, "signon Mprefs gmpw\nstart")
    assert "?prefs starts now: its powers are drawn as a job of their own" in h.body(h.sent_to_kind(GM, "reply")[-1])

    with h.judge.sessions() as s:
        game = find_game(s, "prefs")
        assert game.state == "resolved"
        res = s.scalars(select(Resolution).where(Resolution.game_id == game.id)).one()
        assert run_resolution(res.input, bytes.fromhex(res.seed)) == res.result
    record = res.result
    assert record["method"] == "preference"
    assert res.input["submissions"]["ann@example.test"] == "RFIGATE"
    players = list(LISTS) + ["gus@example.test"]
    assert sorted(record["assignment"]) == sorted(players)
    assert len(set(record["assignment"].values())) == 7
    assert record["rounds"][0]["random"].keys() == {"dan@example.test"}  # the * player, first
    assert any(d["what"] == "random-power" for d in record["draws"])
    assert sum(record["values"].values()) == record["total"]
    for address in players:
        results = h.sent_to_kind(address, "result")
        assert len(results) == 1
        body = h.body(results[0])
        assert f"play {record['assignment'][address]}" in body and record["seed"] in body
    master = h.body(h.sent_to_kind(GM, "result")[0])
    assert "[b]Power assignment by preference lists: prefs[/b]" in master

    # Lists are closed once the game has started.
    h.mail("bob@example.test", "signon ?prefs pass\nset preference A")
    assert "has started: preference lists can no longer change" in h.body(h.last_to("bob@example.test"))


def test_duplex_game_by_mail(harness):
    h = harness
    h.mail(GM, "CREATE ?duo gmpw preference\nSET PLAYERS 3\nSET PREFERENCE OPTIMAL\nSET MANUAL START")
    reply = h.body(h.last_to(GM))
    assert "duplex game: 3 players share the 7 powers" in reply and "by the best total" in reply
    for address, text in [("a@example.test", "AEF"), ("b@example.test", "AEG"), ("c@example.test", "")]:
        h.send(address, f"SIGNON ?duo pw\nSET PREFERENCE {text}")
    h.run()
    h.mail("d@example.test", "SIGNON ?duo pw")
    assert "?duo is full (3 players)" in h.body(h.last_to("d@example.test"))
    h.mail(GM, "SIGNON Mduo gmpw\nSTART")
    with h.judge.sessions() as s:
        record = s.scalars(select(Resolution)).one().result
    held = [p for powers in record["assignment"].values() for p in powers]
    assert sorted(held) == sorted(["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"])
    assert sorted(len(v) for v in record["assignment"].values()) == [2, 2, 3]
    assert len(record["rounds"]) == 3
