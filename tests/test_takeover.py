"""Observers (SIGNON Ogame) and take-over requests (SIGNON Xgame), issue 11:
an observer gets the public mail and no seat; a request is mailed to the
master, approved by REPLACE with the asker's own password; a blind game
answers every letter alike."""

from __future__ import annotations

from judge.games import find_game

GM = "gm@example.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]


def _auction(h):
    h.mail(GM, "CREATE ?g gmpw blind-auction")
    h.mail("olga@example.test", "SIGNON Og watchpw")
    for p in PLAYERS:
        h.mail(p, "SIGNON ?g pw\nNO PREFERENCE")
    h.mail(GM, "SIGNON Mg gmpw\nSTART")
    for p in PLAYERS:
        h.mail(p, "SIGNON ?g pw\nNO PREFERENCE")
    h.mail(GM, "SIGNON Mg gmpw\nPROCESS")


def test_an_observer_takes_no_seat_and_gets_the_public_mail_only(harness):
    h = harness
    _auction(h)
    with h.judge.sessions() as s:
        assert find_game(s, "g").state == "resolved"
    mails = h.sent_to("olga@example.test")
    subjects = [m["Subject"] for m in mails]
    assert "?g has started" in subjects
    result = h.sent_to_kind("olga@example.test", "result")
    assert len(result) == 1 and "For the forum, paste this post" not in h.body(result[0])
    assert not any("you play" in s or "bid" in s.lower() for s in subjects)
    # A second SIGNON Ogame needs the observer's password.
    h.mail("olga@example.test", "SIGNON Og wrong")
    assert "wrong password" in h.body(h.last_to("olga@example.test"))
    h.mail(GM, "SIGNON Mg gmpw\nEJECT olga@example.test")
    assert "the observer of olga <olga@example.test> in ?g is ended" in h.body(h.last_to(GM))


def test_a_takeover_request_is_approved_by_replace_with_the_askers_password(harness):
    h = harness
    _auction(h)
    with h.judge.sessions() as s:
        holder = next(p for p in find_game(s, "g").players if p.power == "England")
        old = holder.address
    h.mail("nina@example.test", "SIGNON Zg npw")
    assert "?g has no power with the letter Z" in h.body(h.last_to("nina@example.test"))
    h.mail("nina@example.test", "SIGNON Eg npw")
    assert "your request to take over England in ?g was sent to its master" in h.body(h.last_to("nina@example.test"))
    notice = h.body(h.last_to(GM))
    assert f"REPLACE {old} nina@example.test" in notice
    # A forged second request cannot change the password to be approved.
    h.mail("nina@example.test", "SIGNON Eg forged")
    assert "wrong password" in h.body(h.last_to("nina@example.test"))
    h.mail(GM, "SIGNON Mg gmpw\nREPLACE England nina@example.test")
    assert "now plays England" in h.body(h.sent_to_kind(GM, "reply")[-1])
    assert "you now play England" in h.last_to("nina@example.test")["Subject"]
    assert "you have left the game" in h.last_to(old)["Subject"]
    h.mail("nina@example.test", "SIGNON ?g npw")
    assert "signed on to ?g as nina" in h.body(h.last_to("nina@example.test"))
    h.mail(old, "SIGNON ?g pw")
    assert "you are no longer in ?g (replaced)" in h.body(h.last_to(old))


def test_takeover_in_a_forming_game_points_to_signon(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw blind-auction")
    h.mail("nina@example.test", "SIGNON Eg npw")
    assert "join it with SIGNON ?g yourpassword" in h.body(h.last_to("nina@example.test"))


def test_a_blind_game_answers_every_letter_alike(harness):
    h = harness
    h.mail(GM, "CREATE ?bg gmpw blind-random\nSET THIRDPARTY tp@example.test")
    answers = set()
    for letter in "EFZ":
        h.mail("nina@example.test", f"SIGNON {letter}bg npw")
        answers.add(h.body(h.last_to("nina@example.test")).split("\n", 3)[3])
    assert len(answers) == 1 and "never says who plays which power" in answers.pop()


def test_an_observer_hears_when_the_master_moves_the_deadline(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw blind-auction")
    h.mail("olga@example.test", "SIGNON Og watchpw")
    h.mail(PLAYERS[0], "SIGNON ?g pw")
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +5d")
    moved = [m for m in h.sent_to("olga@example.test") if "the deadline is now" in m["Subject"]]
    assert len(moved) == 1
    assert "You observe this game" in h.body(moved[0])
    assert "1 player was told" in h.body(h.last_to(GM))
