"""A finished LUI game's public page and resolution.json (issue 26, point
11): the record names players by their names in the game, the part of the
address before the @ ("john.doe1.private"); the web shows each player's
public name instead, in the results and in the record it publishes (with
stand-ins that `judge verify` still re-runs), and the seats won beside the
players, not "Power: -"."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from email.utils import formataddr

from judge.games import find_game
from judge.methods import get_method
from judge.web import queries

GM = "gm@example.test"


def address(k: int) -> str:
    return f"john.doe{k}.private@example.test"


def test_a_finished_lui_game_shows_names_not_address_local_parts(harness):
    h = harness
    h.form_game(GM, "CREATE ?fin gmpw lui\nSET PRESET F8",
                [formataddr((f"Player {k} Smith", address(k))) for k in range(1, 9)])
    prizes = "\n".join(f"SET PRIZE {seat} 1 1" for seat in "RSTUVWXYZ")
    h.mail(GM, f"SIGNON Mfin gmpw\n{prizes}\nSTART")
    with h.judge.sessions() as s:
        opens = datetime.fromisoformat(find_game(s, "fin").method_state["opens_at"])
    h.clock.set(opens + timedelta(hours=1))
    h.run()
    h.mail(address(3), "SIGNON ?fin pw\nBID Z 2")
    h.mail(address(5), "SIGNON ?fin pw\nBID R 1")
    for _ in range(6):  # the timers, the quiet day, the EC's and the gifts' deadlines
        h.clock.advance(seconds=26 * 3600)
        h.run()
        with h.judge.sessions() as s:
            state = find_game(s, "fin").method_state["state"]
        if state["phase"] == "ec":  # the winner let the EC's time run out: the GM chooses
            h.mail(GM, f"SIGNON Mfin gmpw\nEC {state['ec_candidates'][0]}")
        elif state["phase"] == "gifts":  # the GM enters each gift owed, FOR its giver
            from judge.methods.lui import engine
            from judge.methods.lui.persist import from_json

            st = from_json(state)
            for giver, count in engine._owed(st):
                to = [n for n in engine._eligible(st) if n != giver][:count]
                lines = "\n".join(f"GIVE TOL {n}" for n in to)
                h.mail(GM, f"SIGNON Mfin gmpw\nFOR {giver}@example.test\n{lines}")
    with h.judge.sessions() as s:
        game = find_game(s, "fin")
        assert game.state == "resolved", game.method_state["state"]["phase"]
        page = queries.game_page(s, game)
        record = queries.public_record(s, game)
    shown = json.dumps(page["results"]) + json.dumps(page["players"])
    assert "john.doe" not in shown and "Player 3 Smith" in shown
    assert {p["name"]: p["power"] for p in page["players"]}["Player 3 Smith"] == "Z"
    assert {p["name"]: p["power"] for p in page["players"]}["Player 5 Smith"] == "R"
    assert page["seated"] and page["variant"] is None  # seats of its own, no variant's powers
    text = json.dumps(record)
    assert "john.doe" not in text and "private" not in text
    assert "Player 3 Smith" in record["names"].values()
    # The published record replays to its own result (the stand-ins are names like any).
    again = get_method("lui").resolve_file(record["input"], b"")
    assert again["winner"] == record["result"]["winner"] and again["seats"] == record["result"]["seats"]
