"""A blind-random game has no bids, no T, M or D and no auction: nothing its
master or its players are mailed before START says otherwise (issue 10).
A Blind Auction keeps its own wording."""

from __future__ import annotations

import re

GM = "gm@example.test"
TP = "tp@other.test"
PLAYERS = [f"p{i}@example.test" for i in range(7)]

# "bid" as a word, or the start of one: bid, bids, bidding, bidder.
AUCTION_WORDING = re.compile(r"T, M and D|auction|\bbid", re.I)


def _bodies(h, who: str) -> list[str]:
    return [h.body(m) for m in h.sent_to(who)]


def _auction_wording(h, who: str) -> list[str]:
    return [f"{who}: {m.group(0)!r} in\n{text}" for text in _bodies(h, who)
            for m in [AUCTION_WORDING.search(text)] if m]


def _fill(h, game: str, players=PLAYERS) -> None:
    for p in players:
        h.mail(p, f"SIGNON ?{game} pw\nLIST\nENTROPY {p}\nLIST ?{game}")


def test_nothing_before_start_of_a_blind_random_game_speaks_of_an_auction(harness):
    h = harness
    h.mail(GM, f"CREATE ?bg gmpw blind-random\nSET THIRDPARTY {TP}\nSET VARIANT standard\n"
               f"SET METHOD blind-random\nSET DEADLINE +72h\nLIST")
    _fill(h, "bg", PLAYERS[:6])
    # The master changes their mind about a player before the game starts.
    h.mail(GM, "SIGNON Mbg gmpw\nEJECT p5@example.test\nREPLACE p4@example.test Quinn <q@example.test>\n"
               "NO PREFERENCE FOR p3@example.test\nEJECT nobody\nLIST ?bg")
    h.mail("q@example.test", "LIST ?bg")
    _fill(h, "bg", ["p5b@example.test", "p6@example.test"])
    h.mail(GM, "SIGNON Mbg gmpw\nLIST")

    everyone = [GM, *PLAYERS[:5], "q@example.test", "p5@example.test", "p5b@example.test", "p6@example.test"]
    assert all(_bodies(h, who) for who in everyone)
    found = [hit for who in everyone for hit in _auction_wording(h, who)]
    assert not found, "\n\n".join(found)

    # The notice that the last seat is taken tells the master what comes next.
    notice = h.body([m for m in h.sent_to(GM) if str(m["Subject"]) == "?bg: p6 joined"][-1])
    assert "All players are in" in notice
    assert TP in notice and "third party" in notice and "SET THIRDPARTY" in notice
    assert re.search(r"^START$", notice, re.M) and "blinded power message" in notice


def test_a_blind_random_game_without_a_third_party_is_told_to_name_one(harness):
    h = harness
    h.mail(GM, "CREATE ?bg gmpw blind-random")
    _fill(h, "bg")
    notice = h.body(h.last_to(GM))
    assert "no third party yet" in notice and re.search(r"^SET THIRDPARTY \S+@\S+$", notice, re.M)
    assert re.search(r"^START$", notice, re.M)
    assert not _auction_wording(h, GM)


def test_a_variant_change_keeps_the_third_party(harness):
    h = harness
    h.mail(GM, f"CREATE ?bg gmpw blind-random\nSET THIRDPARTY {TP}\nSET VARIANT standard")
    done = re.search(r"^Done: variant of \?bg is now standard: .*$", h.body(h.last_to(GM)), re.M).group(0)
    assert done.endswith(f"blinding protocol, third party {TP}"), done


def test_blind_random_refuses_auction_settings_without_speaking_of_an_auction(harness):
    h = harness
    h.mail(GM, "CREATE ?bg gmpw blind-random\nSET T 140\nSET D T/U\nNO PREFERENCE FOR p1")
    reply = h.body(h.last_to(GM))
    assert reply.count("Rejected: ?bg uses blind-random") == 3
    assert "which has no T, M or D" in reply and "drawn at random" in reply
    assert not AUCTION_WORDING.search(reply)


def test_a_blind_auction_still_asks_to_check_t_m_and_d(harness):
    h = harness
    h.mail(GM, "CREATE ?ba gmpw blind-auction")
    _fill(h, "ba")
    notice = h.body(h.last_to(GM))
    assert "Check T, M and D (LIST ?ba)" in notice and "open the auction" in notice
    assert "third party" not in notice


def test_preference_and_random_games_are_told_start_assigns_at_once(harness):
    h = harness
    for method in ("preference", "random"):
        # SET MANUAL START: else a preference game starts by itself when full.
        h.mail(GM, f"CREATE ?{method} gmpw {method}" + ("\nSET MANUAL START" if method == "preference" else ""))
        _fill(h, method)
        notice = h.body(h.last_to(GM))
        assert "All players are in" in notice and re.search(r"^START$", notice, re.M)
        assert "at once" in notice
        assert not AUCTION_WORDING.search(notice), notice


def test_help_names_every_method_and_the_blinding_commands(harness):
    h = harness
    h.mail("ann@example.test", "HELP")
    text = h.body(h.last_to("ann@example.test"))
    methods = re.search(r"^  SET METHOD name .*the methods \(also at CREATE\):\n +(.*)$", text, re.M).group(1).split(", ")
    assert {"blind-auction", "preference", "random", "blind-random", "lui", "pt3", "payola"} <= set(methods)
    for line in ("SET THIRDPARTY address", "BLINDED ?game TOKEN NUMBER", "BLIND ?game TOKEN NUMBER",
                 "CLAIM ?game NUMBER", "RERUN"):
        assert line in text, line
    assert re.search(r"^  RERUN .*blind-random.*new blinds", text, re.M)
    assert re.search(r"^  START .*\n.*blind-random", text, re.M)
    # Whole in the reply: the judge's own text is never cut (tests/test_help.py).
    assert "more characters" not in text and "Mail your commands to judge@example.test" in text
