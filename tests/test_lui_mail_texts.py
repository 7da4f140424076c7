"""What LUI players and GMs read by mail (issue 26, point 12): times as
UTC times, not the engine's hours; a pregame bid outbid as the auction
opens is told "outbid" only; the priority ties the seed has no rule for in
one GM note; a winner keeping ToL nobody may receive is told, and the GM;
the last player's notice in LUI's own words; CREATE and LIST show the
seats, not a variant's powers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from judge.methods.lui import engine
from judge.methods.lui.live import Live, _merged, _shown
from judge.methods.lui.persist import to_json
from judge.methods.lui.settings import preset
from tests.harness import Harness

GM = "gm@example.test"
NAMES = [f"u{k}" for k in range(1, 9)]


def addr(name: str) -> str:
    return f"{name}@example.test"


def test_engine_hours_are_shown_as_utc_times():
    opens = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
    state = engine.new_game(preset("F8"), NAMES)
    live = Live({"state": to_json(state), "opens_at": opens.isoformat(), "names": {}})
    for message, when in (("The auction is over (it ended at 0.0456623 h).", opens + timedelta(hours=0.0456623)),
                          ("Pregame bids closed at -0.015 h; the auction opens at 0 h.", opens - timedelta(hours=0.015))):
        shown = _shown(live, engine.Rejected(0.0, "u1", "phase", message)).message
        assert " h" not in shown.replace(" h)", "") and live.when((when - opens).total_seconds() / 3600) in shown
        assert "UTC" in shown


def test_nested_ties_make_one_note():
    tail = (" are tied in priority now and in every earlier standing known; the seed has no rule for this, so the "
            "pregame order follows the roster's order (earliest listed ranks lowest).")
    groups = [", ".join(NAMES[k:]) for k in range(7)]
    notes = _merged([g + tail for g in groups] + ["The prize table is a placeholder."] * 2)
    assert len(notes) == 2 and notes[0].startswith(", ".join(NAMES) + " are tied")
    assert notes[1] == "The prize table is a placeholder."


def test_an_f8_opening_read_by_mail(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?lt gmpw lui\nSET PRESET F8\nLIST ?lt")
    created = h.body(h.last_to(GM))
    assert "Austria" not in created and "Powers (" not in created and "variant standard" not in created
    assert "seats" in created and "8 players" in created
    # LUI's own timers run it: no deadline reminders to promise.
    assert "Reminders:" not in created
    for n in NAMES:
        h.send(addr(n), "SIGNON ?lt pw")
    h.run()
    joined = h.body(h.last_to(GM))
    assert "Check T, M and D" not in joined and "open the\nauction" not in joined
    assert "SET PRIZE seat garnets priority" in joined and "the auction's own timers run it" in joined
    h.mail(addr("u1"), "LIST ?lt")  # issue 26 (16): before START, names only, not addresses
    listed = h.body(h.last_to(addr("u1")))
    assert "Players (8 of 8):" in listed and "u2" in listed and "u2@" not in listed
    assert "no list" not in listed and "Powers (" not in listed
    prizes = "\n".join(f"SET PRIZE {s} 1 1" for s in "RSTUVWXYZ")
    h.mail(GM, f"SIGNON Mlt gmpw\n{prizes}\nSTART")
    assert "?lt started" in h.body(h.last_to(GM))
    # Every priority 0: the roster's order decides. u8 ranks highest and bids first.
    h.mail(addr("u8"), "SIGNON ?lt pw\nBID Z 5")
    h.mail(addr("u7"), "SIGNON ?lt pw\nBID Z 6")
    before = {n: len(h.sent_to(addr(n))) for n in NAMES} | {GM: len(h.sent_to(GM))}
    h.clock.advance(seconds=24 * 3600 + 60)
    h.run()
    u8 = [h.body(m) for m in h.sent_to(addr("u8"))[before["u8"]:]]
    assert any("your bid of 5 there no longer stands" in b for b in u8)
    assert not any("Your pregame bid of 5 on Z stands" in b for b in u8)
    u7 = [h.body(m) for m in h.sent_to(addr("u7"))[before["u7"]:]]
    assert any("Your pregame bid of 6 on Z stands" in b for b in u7)
    gm = "\n".join(h.body(m) for m in h.sent_to(GM)[before[GM]:])
    assert gm.count("tied in priority") == 1 and ", ".join(sorted(NAMES)) + " are tied" in gm
    assert " h." not in gm and " h)" not in gm


def test_a_winner_keeping_tol_nobody_may_receive_is_told_and_the_gm(harness: Harness):
    """docs/lui.md: when nobody is left who may receive a ToL, the giver
    keeps the rest and the GM is told; the mails said nothing of it."""
    h = harness
    prizes = "\n".join(f"SET PRIZE {s} 1 1" for s in "RSTUVWXYZ")
    h.mail(GM, f"CREATE ?kt gmpw lui\nSET PRESET F8\nSET PLAYERS 2\n{prizes}")
    for n in ("ka", "kb"):
        h.send(addr(n), "SIGNON ?kt pw")
    h.run()
    h.mail(GM, "SIGNON Mkt gmpw\nSTART")
    with h.judge.sessions() as s:
        from judge.games import find_game

        opens = datetime.fromisoformat(find_game(s, "kt").method_state["opens_at"])
    h.clock.set(opens + timedelta(hours=1))
    h.mail(addr("ka"), "SIGNON ?kt pw\nBID R 1")
    h.clock.set(opens + timedelta(hours=2))
    h.mail(addr("kb"), "SIGNON ?kt pw\nBID S 2")
    for _ in range(8):
        h.clock.advance(seconds=12 * 3600)
        h.run()
        with h.judge.sessions() as s:
            g = find_game(s, "kt")
            phase = g.method_state["state"]["phase"]
            candidates = g.method_state["state"].get("ec_candidates") or []
        if phase == "ec":
            h.mail(GM, f"SIGNON Mkt gmpw\nEC {candidates[0]}")
        if g.state == "resolved":
            break
    assert g.state == "resolved"
    told = "\n".join(h.body(m) for m in h.sent_to(addr("ka")))
    gm = "\n".join(h.body(m) for m in h.sent_to(GM))
    assert "ka keeps 3 ToL more: nobody left in the game may receive one" in told
    assert "ka keeps 3 ToL more" in gm
