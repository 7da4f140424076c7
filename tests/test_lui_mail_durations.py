"""The GM's SET PREGAME and SET QUIET by mail (issue 26, point 13), within
the limits the operator sets ([methods.lui] gm_limits): the pregame a GM
shortens opens the auction sooner, a duration below the limit is refused
with the limit, the rest of the mail runs."""

from __future__ import annotations

from datetime import datetime, timedelta

from judge.games import find_game
from tests.harness import Harness

GM = "gm@example.test"


def test_set_pregame_and_quiet_by_mail(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?ld gmpw lui\nSET PRESET F8\nSET PREGAME 6h\nSET QUIET 30m\nSET QUIET 2d\nSET QUIET 99d\n"
               "SET PREGAME soon\nLIST ?ld")
    reply = h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "Done: the pregame 6h (6 h)" in reply
    assert "the quiet period (no new valid bid: the game ends) cannot be 30m: this judge lets the GM set it from 1 h to 30 days" in reply
    assert "the quiet period (no new valid bid: the game ends) 2d (48 h)" in reply
    assert "cannot be 99d" in reply
    assert "expected a duration (like 6h, 2d or 90m)" in reply
    assert "pregame 6 h, quiet period 48 h" in reply.split("LIST ?ld")[-1]
    with h.judge.sessions() as s:
        params = find_game(s, "ld").params
    assert params["pregame_hours"] == 6 and params["pregame_bids_hours"] == 5 and params["quiet_hours"] == 48
    for k in range(8):
        h.send(f"p{k}@example.test", "SIGNON ?ld pw")
    h.run()
    h.mail(GM, "SIGNON Mld gmpw\nSTART")
    with h.judge.sessions() as s:
        g = find_game(s, "ld")
        opens = datetime.fromisoformat(g.method_state["opens_at"])
    assert opens - h.clock.now() == timedelta(hours=6)  # the auction opens when the GM's pregame ends


def test_the_operators_limit(tmp_path, migrated_database_url):
    h = Harness(tmp_path / "data", migrated_database_url,
                sections={"methods": {"lui": {"gm_limits": {"pregame_hours": 12, "quiet_hours": 24}}}})
    try:
        h.mail(GM, "CREATE ?lo gmpw lui\nSET PREGAME 6h\nSET PREGAME 12h\nSET QUIET 12h")
        reply = h.body(h.sent_to_kind(GM, "reply")[-1])
        assert "the pregame cannot be 6h: this judge lets the GM set it from 12 h to 30 days" in reply
        assert "Done: the pregame 12h (12 h)" in reply
        assert "cannot be 12h: this judge lets the GM set it from 24 h" in reply
    finally:
        h.close()
