"""Reminders before a deadline (issue 11), as nJudge and DPjudge send them:
the players who have not sent what the deadline waits for are reminded at
each time before it (24 h and 1 h unless the master's SET REMINDERS or the
configuration says otherwise), once per deadline and time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from judge.games import find_game
from judge.reminders import ReminderError, due, parse_hours
from tests.test_e2e_blinding import tp_url  # noqa: F401 (a fixture: the third party judge's store)

GM = "gm@example.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]
BIDS = "Austria: 7\nEngland: 6\nFrance: 5\nGermany: 4\nItaly: 3\nRussia: 2\nTurkey: 1"


# --- the rules, without a judge ---------------------------------------------

@pytest.mark.parametrize("text, hours", [
    ("24h 1h", (24.0, 1.0)), ("24h,1h", (24.0, 1.0)), ("1h, 24h", (24.0, 1.0)), ("48", (48.0,)),
    ("2d 90m", (48.0, 1.5)), ("OFF", ()), ("none", ()), ("DEFAULT", None),
])
def test_set_reminders_reads_what_masters_write(text, hours):
    assert parse_hours(text) == hours


@pytest.mark.parametrize("text, why", [
    ("soon", "cannot read 'soon'"), ("24h 1x", "cannot read '1x'"), ("0h", "not between"),
    ("8d", "not between"), ("1h 2h 3h 4h 5h 6h", "at most 5"), ("", "needs the hours"),
])
def test_set_reminders_refuses_what_it_cannot_read_and_says_what_to_send(text, why):
    with pytest.raises(ReminderError) as err:
        parse_hours(text)
    assert why in str(err.value) and "SET REMINDERS 24h 1h" in str(err.value)


def test_set_reminders_is_linear_in_a_long_line():
    import time

    line = "1h " * 20000 + "x"
    start = time.thread_time()
    with pytest.raises(ReminderError):
        parse_hours(line)
    assert time.thread_time() - start < 0.5


def test_a_reminder_is_due_once_per_deadline_and_time_and_late_ones_make_one_mail():
    deadline = datetime(2026, 3, 5, 12, tzinfo=timezone.utc)
    at = lambda h: deadline - timedelta(hours=h)  # noqa: E731
    key = deadline.isoformat()
    assert due(deadline, at(25), (24, 1), []) is None
    assert due(deadline, at(24), (24, 1), []) == 24
    assert due(deadline, at(23), (24, 1), [(key, 24)]) is None
    assert due(deadline, at(0.5), (24, 1), [(key, 24)]) == 1
    assert due(deadline, at(0.5), (24, 1), [(key, 24), (key, 1)]) is None
    # Entering the window late: one reminder, the nearest time's.
    assert due(deadline, at(0.5), (24, 1), []) == 1
    assert due(deadline, at(3), (24, 1), [(key, 1)]) is None
    # A moved deadline: due again.
    assert due(deadline, at(10), (24, 1), [("2026-03-04T12:00:00+00:00", 24)]) == 24
    # At the deadline the deadline's own work takes over.
    assert due(deadline, deadline, (24, 1), []) is None


# --- through the judge --------------------------------------------------------

def _auction(h, deadline="+72h") -> None:
    h.mail(GM, "CREATE ?g gmpw blind-auction")
    for p in PLAYERS:
        h.mail(p, "SIGNON ?g pw")
    h.mail(GM, f"SIGNON Mg gmpw\nSET DEADLINE {deadline}\nSTART")


def _reminders(h, address: str) -> list:
    return [m for m in h.sent_to(address) if "reminder" in m["Subject"]]


def _deadline(h):
    with h.judge.sessions() as s:
        return find_game(s, "g").deadline


def test_an_auction_reminds_the_players_without_bids_at_24h_and_1h(harness):
    h = harness
    _auction(h)
    h.mail(PLAYERS[0], "SIGNON ?g pw\n" + BIDS)  # in: never reminded
    h.mail(PLAYERS[1], "SIGNON ?g pw\nAustria: 200")  # an invalid list only: reminded, told so
    h.mail(PLAYERS[2], "SIGNON ?g pw\nNO PREFERENCE")  # No Preference is an answer
    h.clock.advance(hours=47)
    h.run()
    assert not _reminders(h, PLAYERS[3])  # 25 hours left: not yet
    h.clock.advance(hours=1, minutes=1)
    h.run()
    h.run()  # a second pass sends nothing again
    for p in PLAYERS[3:]:
        mails = _reminders(h, p)
        assert len(mails) == 1, p
        body = " ".join(h.body(mails[0]).split())
        assert "no bids from you yet" in body and "about 24 hours" in body
        assert "SIGNON ?g yourpassword" in body and "Austria: 7" in body
        assert str(mails[0]["To"]) == p  # one mail each
    assert not _reminders(h, PLAYERS[0]) and not _reminders(h, PLAYERS[2])
    invalid = " ".join(h.body(_reminders(h, PLAYERS[1])[0]).split())
    assert "breaks a rule (it stands as No Preference)" in invalid
    # 1 hour before: the second reminder; the player who bid meanwhile gets none.
    h.mail(PLAYERS[3], "SIGNON ?g pw\n" + BIDS)
    h.clock.set(_deadline(h) - timedelta(minutes=59))
    h.run()
    assert len(_reminders(h, PLAYERS[4])) == 2 and "about 59 minutes" in h.body(_reminders(h, PLAYERS[4])[1])
    assert len(_reminders(h, PLAYERS[3])) == 1
    # The log says what was sent, for the operator.
    with h.judge.sessions() as s:
        from judge.audit import game_events

        sent = [e for e in game_events(s, find_game(s, "g")) if e["kind"] == "reminder"]
    assert [(e["hours"], e["players"]) for e in sent] == [(24.0, 5), (1.0, 4)]


def test_a_moved_deadline_makes_the_reminders_due_again_and_late_ones_are_one_mail(harness):
    h = harness
    _auction(h, "+2h")
    h.run()
    # Set two hours ahead: the 24 hours' time has passed already: one mail.
    assert len(_reminders(h, PLAYERS[6])) == 1
    h.clock.advance(minutes=61)
    h.run()
    assert len(_reminders(h, PLAYERS[6])) == 2
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +30h")
    h.clock.advance(hours=6, minutes=1)
    h.run()
    mails = _reminders(h, PLAYERS[6])
    assert len(mails) == 3 and _deadline(h).strftime("%d %b %Y %H:%M") in h.body(mails[-1])


def test_set_reminders_per_game_and_off(harness):
    h = harness
    _auction(h, "+72h")
    h.mail(GM, "SIGNON Mg gmpw\nSET REMINDERS 48h 2h\nLIST")
    reply = h.body(h.last_to(GM))
    assert "Done: reminders of ?g: 48h and 2h before the deadline" in reply
    assert "Reminders: 48h and 2h before the deadline" in reply
    # A random draw waits on nobody's mail: its LIST promises no reminders.
    h.mail(GM, "CREATE ?rr gmpw random\nLIST ?rr")
    assert "Reminders:" not in h.body(h.last_to(GM))
    h.clock.advance(hours=24, minutes=1)
    h.run()
    assert len(_reminders(h, PLAYERS[0])) == 1
    h.clock.advance(hours=23)  # 24 hours left: not a time of this game
    h.run()
    assert len(_reminders(h, PLAYERS[0])) == 1
    h.mail(GM, "SIGNON Mg gmpw\nSET REMINDERS OFF")
    h.clock.advance(hours=23)
    h.run()
    assert len(_reminders(h, PLAYERS[0])) == 1
    # Only the master, and a refusal that says what to send.
    h.mail(PLAYERS[0], "SIGNON ?g pw\nSET REMINDERS 24h")
    assert "only the master of ?g" in h.body(h.last_to(PLAYERS[0]))
    h.mail(GM, "SIGNON Mg gmpw\nSET REMINDERS tomorrow")
    assert "Rejected: cannot read 'tomorrow'" in h.body(h.last_to(GM))
    assert "SET REMINDERS 24h 1h" in " ".join(h.body(h.last_to(GM)).split())


def test_the_configured_reminders_are_the_default(tmp_path, migrated_database_url):
    from tests.harness import Harness

    h = Harness(tmp_path / "data", migrated_database_url, reminder_hours=[6])
    try:
        _auction(h, "+72h")
        h.clock.advance(hours=48)
        h.run()
        assert not _reminders(h, PLAYERS[0])
        h.clock.advance(hours=18)
        h.run()
        assert len(_reminders(h, PLAYERS[0])) == 1 and "about 6 hours" in h.body(_reminders(h, PLAYERS[0])[0])
    finally:
        h.close()


def test_a_preference_game_reminds_the_players_without_a_list(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw preference\nSET DEADLINE +30h")
    for p in PLAYERS[:4]:  # (a full game starts at once)
        h.mail(p, "SIGNON ?g pw")
    h.mail(PLAYERS[0], "SIGNON ?g pw\nSET PREFERENCE EFGRAIT")
    h.clock.advance(hours=6, minutes=1)
    h.run()
    assert not _reminders(h, PLAYERS[0])
    mail = _reminders(h, PLAYERS[1])
    assert len(mail) == 1
    body = " ".join(h.body(mail[0]).split())
    assert "SET PREFERENCE AEFGIRT" in body and "Without one you count as not minding" in body


def test_a_random_game_reminds_nobody(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw random")
    for p in PLAYERS[:3]:
        h.mail(p, "SIGNON ?g pw")
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +30h")
    h.clock.advance(hours=29)
    h.run()
    assert not any(_reminders(h, p) for p in PLAYERS[:3])


def test_a_blind_game_reminds_only_the_players_the_protocol_waits_for(harness, tmp_path, tp_url):
    """Each in a mail of their own, naming nobody else: a blind game never
    shows who plays in it to another player (tests/security/test_blind_game.py)."""
    from tests.test_e2e_blinding import GM as BLIND_GM, PLAYERS as BLIND_PLAYERS
    from tests.test_e2e_blinding import blind_of, cli, first_round, judges, start_game

    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)  # the default deadline: 72 hours
    late = BLIND_PLAYERS[5]
    for k, p in enumerate(BLIND_PLAYERS):
        if p != late:
            first, token = first_round(post, p)
            b.send(p, f"BLINDED ?bg {token} {cli('add', first, blind_of(k)).split()[-1]}")
    post.settle()
    a.clock.advance(hours=48, minutes=1)
    post.settle()
    reminded = {p: [m for m in post.boxes[p] if "reminder" in m["Subject"]] for p in BLIND_PLAYERS}
    assert [p for p, mails in reminded.items() if mails] == [late] and len(reminded[late]) == 1
    mail = reminded[late][0]
    body = " ".join(a.body(mail).split())
    assert str(mail["To"]) == late and "your blinded message" in body and "BLINDED ?bg YOURTOKEN RESULT" in body
    assert not any(q in body or q.split("@")[0] in body for q in BLIND_PLAYERS if q != late)
    assert BLIND_GM not in body
    b.close()


def test_set_variant_and_set_method_keep_the_reminders(harness):
    """They reset the method's settings, not the judge's own."""
    h = harness
    h.mail(GM, "CREATE ?v gmpw blind-auction\nSET REMINDERS 48h 2h\nSET VARIANT standard\nSET METHOD preference\n"
               "SET METHOD blind-auction\nSET T 100\nLIST ?v")
    reply = h.body(h.last_to(GM))
    assert "Reminders: 48h and 2h before the deadline" in reply
    assert "T set (T = 100" in reply and "reminders" not in reply.split("T set")[1].split("\n")[0]


def test_each_reminded_method_has_its_own_reminder_and_a_new_one_gets_the_plain_one():
    """A method's reminder is its own template (its capability's Reminders), found
    through the registry; a method that names none gets the plain words,
    which name no other method's commands."""
    from types import SimpleNamespace

    from judge.methods import METHODS
    from judge.methods.interface import Reminders, reminders_of
    from judge.templating import render_mail

    reminded = {name: reminders_of(METHODS[name]).template for name in METHODS if reminders_of(METHODS[name])}
    assert set(reminded) >= {"blind-auction", "preference", "blind-random", "payola"}
    assert len(set(reminded.values())) == len(reminded)  # each its own words
    deadline = datetime(2026, 3, 4, 12, 0, tzinfo=timezone.utc)
    game = SimpleNamespace(name="newgame", method="countdown", deadline=deadline)
    subject, body = render_mail(Reminders("bidding").template, game=game, docs_url="https://example.test/docs", left="1 hour")
    assert subject == "?newgame: reminder, the deadline waits for you"
    assert "1 hour from now" in body and "HELP countdown says what to send." in body
    assert "bid" not in body.lower() and "preference" not in body.lower()
