"""nJudge's habits (issue 11): CREATE makes a preference game by default and
takes a variant alone; a preference game starts by itself when its last
player signs on (unless SET MANUAL START); SIGN ON in two words, a checked
variant, the hint for a game named without its prefix; signing on again
shows the list; the master's notice counts a duplex game's seats."""

from __future__ import annotations

import pytest

from judge.config import load_config
from judge.games import find_game
from tests.harness import Harness

GM = "gm@example.test"
CLASSICAL = {"variants": {"classical": {"powers": ["Carthage", "Egypt", "Greece", "Persia", "Rome"]}}}


@pytest.fixture
def h(tmp_path, migrated_database_url):
    # The judge's real default method (the shared harness makes Blind Auctions).
    harness = Harness(tmp_path / "data", migrated_database_url, sections=CLASSICAL,
                      default_method=load_config(None, data_dir=tmp_path).default_method)
    yield harness
    harness.close()


def _game(h, name="g"):
    with h.judge.sessions() as s:
        g = find_game(s, name)
        return g.method, g.variant, g.state


def test_create_without_method_makes_a_preference_game_and_a_variant_alone_works(h):
    h.mail(GM, "CREATE ?g gmpw\nCREATE ?c gmpw classical\nCREATE ?b gmpw blind-auction\n"
               "CREATE ?r gmpw classical random\nCREATE ?x gmpw youngstown")
    reply = h.body(h.last_to(GM))
    assert _game(h, "g") == ("preference", "standard", "forming")
    assert _game(h, "c") == ("preference", "classical", "forming")
    assert _game(h, "b") == ("blind-auction", "standard", "forming")
    assert _game(h, "r") == ("random", "classical", "forming")
    assert "'youngstown' is neither a method (blind-auction, blind-random, lui, payola, preference, pt3, random) nor a variant" in reply
    assert "It starts by itself when the last player has signed on" in reply


def test_a_preference_game_starts_by_itself_when_the_last_player_signs_on(h):
    h.mail(GM, "CREATE ?g gmpw classical\nSET DEADLINE +72h")
    for i in range(4):
        h.mail(f"p{i}@example.test", f"SIGN ON ?g pw{i}")
    assert _game(h)[2] == "forming"
    notice = h.last_to(GM)
    assert notice["Subject"] == "?g: p3 joined" and "4 of its 5 players" in h.body(notice)
    # The last player's SET PREFERENCE, below the SIGNON, counts.
    h.mail("p4@example.test", "SIGNON ?g pw4\nSET PREFERENCE R")
    assert "You are the last player" in h.body(h.sent_to_kind("p4@example.test", "reply")[-1])
    assert _game(h)[2] == "resolved"
    assert "you play Rome" in h.sent_to_kind("p4@example.test", "result")[0]["Subject"]
    for i in range(4):  # no list: they did not mind
        assert len(h.sent_to_kind(f"p{i}@example.test", "result")) == 1
    notices = [m for m in h.sent_to_kind(GM, "notice") if "p4" in m["Subject"]]
    assert len(notices) == 1 and notices[0]["Subject"] == "?g: p4 joined: the game started by itself"
    body = " ".join(h.body(notices[0]).split())
    assert "5 of its 5 players" in body and "started by itself" in body and "SET T" not in body
    assert "open the auction" not in body


def test_set_manual_start_waits_for_start_and_set_auto_start_starts_a_full_game(h):
    h.mail(GM, "CREATE ?g gmpw classical\nSET MANUAL START")
    for i in range(5):
        h.mail(f"p{i}@example.test", f"SIGNON ?g pw{i}")
    assert _game(h)[2] == "forming"
    body = h.body(h.last_to(GM))
    assert "You asked for a manual start" in body and "SET DEADLINE +72h" not in body and "SET T" not in body
    h.mail(GM, "SIGNON Mg gmpw\nSET AUTO START")
    assert "all 5 players of ?g are in" in h.body(h.sent_to_kind(GM, "reply")[-1])
    assert _game(h)[2] == "resolved"
    h.mail(GM, "CREATE ?b gmpw blind-auction\nSET MANUAL START")
    assert "?b uses blind-auction, which never starts by itself" in h.body(h.last_to(GM))


def test_a_duplex_game_counts_its_seats_and_starts_when_they_are_taken(h):
    h.mail(GM, "CREATE ?d gmpw\nSET PLAYERS 3")
    h.mail("a@example.test", "SIGNON ?d pw")
    assert "1 of its 3 players" in h.body(h.last_to(GM))
    h.mail("b@example.test", "SIGNON ?d pw")
    h.mail("c@example.test", "SIGNON ?d pw")
    assert _game(h, "d")[2] == "resolved"
    assert "3 of its 3 players" in h.body(h.sent_to_kind(GM, "notice")[-1])


def test_signon_checks_the_variant_and_shows_it_unmasked(h):
    h.mail(GM, "CREATE ?g gmpw classical")
    h.mail("p@example.test", "SIGNON ?g secretpw standard\nLIST")
    reply = h.body(h.last_to("p@example.test"))
    assert "> SIGNON ?g **** standard" in reply and "secretpw" not in reply
    assert "?g is played on the variant classical, not standard" in reply and "1 line after this point was not read" in reply
    h.mail("p@example.test", "SIGNON ?g secretpw classical")
    assert "joined ?g" in h.body(h.last_to("p@example.test"))


def test_a_game_named_without_its_prefix_gets_a_hint_and_no_word_on_the_password(h):
    h.mail(GM, "CREATE ?spring gmpw")
    h.mail("p@example.test", "SIGNON spring anything")
    reply = h.body(h.last_to("p@example.test"))
    assert "there is no game ?pring. Did you mean the game ?spring? Then write SIGNON ?spring yourpassword" in reply
    assert "Ogame" in reply and "Xgame" in reply and "password" not in reply.split("Did you mean")[0].lower()
    h.mail("p@example.test", "SIGNON Qnowhere pw")
    assert "Did you mean" not in h.body(h.last_to("p@example.test"))


def test_signing_on_again_shows_the_players_list(h):
    h.mail(GM, "CREATE ?g gmpw\nSET MANUAL START")
    h.mail("p@example.test", "SIGNON ?g pw")
    h.mail("p@example.test", "SIGNON ?g pw")
    assert "Your preference list: none yet" in h.body(h.last_to("p@example.test"))
    h.mail("p@example.test", "SIGNON ?g pw\nSET PREFERENCE E[FG]")
    h.mail("p@example.test", "SIGNON ?g pw")
    assert "Your preference list: England, then [France, Germany]" in h.body(h.last_to("p@example.test"))


def test_the_auction_notice_shows_the_deadline_set_instead_of_suggesting_one(tmp_path, migrated_database_url):
    h = Harness(tmp_path / "data", migrated_database_url, sections=CLASSICAL)
    try:
        h.mail(GM, "CREATE ?a gmpw blind-auction classical\nSET DEADLINE 2026-03-09 12:00")
        for i in range(5):
            h.mail(f"p{i}@example.test", "SIGNON ?a pw")
        body = h.body(h.last_to(GM))
        assert "All players are in" in body and "SET DEADLINE +72h" not in body and "Mon 09 Mar 2026" in body
    finally:
        h.close()
