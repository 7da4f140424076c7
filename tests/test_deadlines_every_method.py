"""Deadlines in every method (issue 11, first part): players hear when the
master moves the deadline; a preference, random or blind-random game starts
at its deadline as START would, or its master hears why it cannot; LIST
shows every game's deadline."""

from __future__ import annotations

from judge.games import find_game
from tests.test_e2e_blinding import tp_url  # noqa: F401 (a fixture: the third party judge's store)

GM = "gm@example.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]


def _create(h, method: str, players=PLAYERS) -> None:
    # A preference game would start when its last player signs on: this
    # one waits for its deadline.
    h.mail(GM, f"CREATE ?g gmpw {method}" + ("\nSET MANUAL START" if method == "preference" else ""))
    for p in players:
        h.mail(p, "SIGNON ?g pw")


def test_players_are_told_when_the_master_moves_the_deadline(harness):
    h = harness
    _create(h, "blind-random", PLAYERS[:3])
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +48h")
    assert "3 players were told" in " ".join(h.body(h.last_to(GM)).split())
    for p in PLAYERS[:3]:
        mail = h.last_to(p)
        assert "deadline is now" in mail["Subject"] and "The master of ?g set its deadline" in h.body(mail)
        assert str(mail["To"]) == p  # one mail each: in a blind game addresses are not shared
    # The same deadline again tells nobody again.
    before = len(h.sent_to(PLAYERS[0]))
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE " + find_deadline(h))
    assert len(h.sent_to(PLAYERS[0])) == before


def find_deadline(h) -> str:
    with h.judge.sessions() as s:
        return find_game(s, "g").deadline.strftime("%Y-%m-%d %H:%M UTC")


def test_a_preference_game_is_assigned_at_its_deadline(harness):
    h = harness
    _create(h, "preference")
    h.mail(PLAYERS[0], "SIGNON ?g pw\nSET PREFERENCE EFGRAIT")
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +24h\nLIST ?g")
    assert "Deadline: " in h.body(h.last_to(GM)) and "not set" not in h.body(h.last_to(GM)).split("Deadline:")[1][:20]
    h.clock.advance(hours=25)
    h.run()
    with h.judge.sessions() as s:
        assert find_game(s, "g").state == "resolved"
    assert any("the game started" in m["Subject"] for m in h.sent_to(GM))
    assert all(len(h.sent_to_kind(p, "result")) == 1 for p in PLAYERS)


def test_a_game_that_cannot_start_at_its_deadline_tells_its_master_once(harness):
    h = harness
    _create(h, "random", PLAYERS[:5])
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +1h")
    h.clock.advance(hours=2)
    h.run()
    h.clock.advance(hours=2)
    h.run()
    told = [m for m in h.sent_to(GM) if "cannot start" in m["Subject"]]
    assert len(told) == 1 and "5 of its 7 players" in " ".join(h.body(told[0]).split())
    with h.judge.sessions() as s:
        game = find_game(s, "g")
        assert game.state == "forming" and game.deadline is None


# --- at the deadline the master gets the list of late players, in every method

def test_an_auction_master_gets_the_late_players_by_name_and_address(harness):
    h = harness
    _create(h, "blind-auction")
    h.mail(GM, "SIGNON Mg gmpw\nSTART")
    for p in PLAYERS[:5]:
        h.mail(p, "SIGNON ?g pw\nNO PREFERENCE")
    h.clock.advance(hours=73)
    h.run()
    mail = h.last_to(GM)
    body = h.body(mail)
    assert "2 players sent no bids" in mail["Subject"]
    assert "  p5 <p5@example.test>" in body and "  p6 <p6@example.test>" in body
    assert not any(f"<{p}>" in body for p in PLAYERS[:5])


def test_a_preference_master_hears_who_sent_no_list_at_the_deadline(harness):
    h = harness
    _create(h, "preference", PLAYERS[:6])
    h.mail(GM, "SIGNON Mg gmpw\nSET DEADLINE +24h")
    for p in PLAYERS[:4]:
        h.mail(p, "SIGNON ?g pw\nSET PREFERENCE EFGRAIT")
    h.mail(PLAYERS[6], "SIGNON ?g pw")  # the seventh joins at the last moment, without a list
    h.clock.advance(hours=25)
    h.run()
    mail = [m for m in h.sent_to(GM) if "the game started" in m["Subject"]][-1]
    body = " ".join(h.body(mail).split())
    assert "3 players sent no preference list, and so counted as not minding" in body
    assert all(f"<{p}>" in body for p in PLAYERS[4:]) and not any(f"<{p}>" in body for p in PLAYERS[:4])


def test_a_blind_random_master_hears_who_stalled_at_the_deadline(harness, tmp_path, tp_url):
    from tests.test_e2e_blinding import blind_of, cli, first_round, judges, start_game

    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    for k, p in enumerate(PLAYERS[:5]):
        first, token = first_round(post, p)
        b.send(p, f"BLINDED ?bg {token} {cli('add', first, blind_of(k)).split()[-1]}")
    post.settle()
    a.clock.advance(hours=73)
    post.settle()
    deadline = post.last_mail(GM, "the deadline passed")
    assert "It waits for: p5, p6" in " ".join(a.body(deadline).split())
    b.close()
