"""The Lowest Unique Integer engine (judge/methods/lui/engine.py) against
every rule of issue 13 and of the seed (../shared/seeds/lowest-unique-
integer.txt), with a fake clock: hours after the pregame's end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.methods.lui import engine
from judge.methods.lui.board import Board, BoardError
from judge.methods.lui.commands import Bid, parse_line
from judge.methods.lui.engine import (
    AuctionOpened,
    BidPlaced,
    BidsCancelled,
    BoardChanged,
    BoardMailSet,
    BoardShown,
    ChipsBought,
    EcDecided,
    EcOverdue,
    FeeStarts,
    GameError,
    GameFinished,
    GameOver,
    GiftsDue,
    GiftsOverdue,
    GmWarning,
    Outbid,
    PregameBidTaken,
    PrizeSet,
    Rejected,
    SeatWon,
    TolGiven,
    apply,
    board_view,
    new_game,
    next_tick,
    tick,
)
from judge.methods.lui.settings import F8, F11, PLACEHOLDER, SettingsError, preset
from tests.lui_helpers import GM, Game, rejected

ROOT = Path(__file__).resolve().parent.parent
SEED_RULE_4 = "No bid can be made that matches a standing bid or a winning bid."


# --------------------------------------------------------------------------
# The board
# --------------------------------------------------------------------------

def test_f11_is_4_by_3_seats_o_to_z_in_reading_order():
    assert F11.board.grid() == (("O", "P", "Q"), ("R", "S", "T"), ("U", "V", "W"), ("X", "Y", "Z"))
    assert F11.board.neighbours("O") == ("X", "P", "R", "Q")  # above (wraps), right, below, left (wraps)
    assert F11.board.neighbours("Z") == ("W", "X", "Q", "Y")


def test_the_seeds_sizes_are_rows_by_columns():
    """The seed: "a rectangular board of size 4x3, creating 12 seats" (F11),
    "size 3x3, creating 9 seats" (F8), seats "labeled O-Z reading order":
    rows x columns, reading order left to right, top to bottom."""
    seed = ROOT.parent / "shared" / "seeds" / "lowest-unique-integer.txt"
    if not seed.exists():
        pytest.skip("the seed is not beside this checkout")
    text = seed.read_text(encoding="utf-8")
    f11, f8 = text.split("F8: Lowest Unique Integer", 1)
    for part, settings, first in ((f11, F11, "O"), (f8, F8, "R")):
        rows, cols, seats = map(int, re.search(r"board of size (\d)x(\d), creating (\d+) seats", part).groups())
        assert (settings.rows, settings.cols) == (rows, cols) and rows * cols == seats
        assert f"labeled {first}-Z reading order" in part or f"go from {first} to Z" in text
        assert settings.board.seats[0] == first and settings.board.grid()[0][:2] == (first, chr(ord(first) + 1))


def test_f8_is_3_by_3_seats_r_to_z():
    assert F8.board.grid() == (("R", "S", "T"), ("U", "V", "W"), ("X", "Y", "Z"))
    assert F8.board.neighbours("V") == ("S", "W", "Y", "U")
    assert F8.board.neighbours("R") == ("X", "S", "U", "T")


@pytest.mark.parametrize("rows,cols", [(r, c) for r in range(3, 9) for c in range(3, 9) if r * c <= 26])
def test_every_allowed_size_has_four_distinct_neighbours_and_ends_at_z(rows, cols):
    board = Board(rows, cols)
    assert board.seats[-1] == "Z" and len(board.seats) == rows * cols
    for seat in board.seats:
        ns = board.neighbours(seat)
        assert len(set(ns)) == 4 and seat not in ns
        assert all(seat in board.neighbours(n) for n in ns)  # adjacency is symmetric


@pytest.mark.parametrize("rows,cols", [(2, 3), (3, 2), (1, 12), (12, 1), (2, 2), (0, 5), (3, 9), (5, 6)])
def test_sides_below_3_and_boards_over_26_seats_are_refused(rows, cols):
    with pytest.raises(BoardError):
        Board(rows, cols)
    with pytest.raises(SettingsError):
        preset("F11", rows=rows, cols=cols)


def _doc_neighbour_table(title: str) -> dict[str, tuple[str, ...]]:
    text = (ROOT / "docs" / "lui.md").read_text()
    section = text.split(title, 1)[1]
    rows = re.findall(r"^\| ([A-Z]) \| ([A-Z]) \| ([A-Z]) \| ([A-Z]) \| ([A-Z]) \|$", section, re.M)
    table: dict[str, tuple[str, ...]] = {}
    for row in rows:
        if row[0] in table:
            break
        table[row[0]] = row[1:]
    return table


@pytest.mark.parametrize("settings,title", [(F11, "### F11's neighbours"), (F8, "### F8's neighbours")])
def test_the_docs_list_every_seats_four_neighbours(settings, title):
    board = settings.board
    assert _doc_neighbour_table(title) == {s: board.neighbours(s) for s in board.seats}


# --------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------

def test_the_presets_carry_every_number_of_the_seed():
    assert (F11.starting_chips, F11.chip_price, F11.pregame_hours, F11.pregame_bids_hours) == (20, 1, 24, 24)
    assert (F8.starting_chips, F8.chip_price, F8.pregame_hours, F8.pregame_bids_hours) == (16, 2, 24, 23)
    for s in (F11, F8):
        assert (s.timer_hours, s.quiet_hours, s.fee_after_hours, s.bid_fee, s.cancel_after_hours) == \
            (24, 24, 240, 1, 360)
    assert (F11.tol.winner, F11.tol.adjacent, F11.tol.total()) == (2, 1, 6)
    assert (F8.tol.winner, F8.tol.adjacent, F8.tol.total()) == (1, 1, 5)


def test_the_prize_table_is_a_placeholder_the_gm_is_warned_about_until_set():
    s = preset("F8")
    assert s.placeholder_seats == set(s.board.seats) and all(p == PLACEHOLDER for _, p in s.prizes)
    assert "placeholder" in s.warnings()[0] and "R, S, T, U, V, W, X, Y, Z" in s.warnings()[0]
    s = s.with_prizes({seat: (1, 0) for seat in "RSTUVWXY"})
    assert "on seat Z:" in s.warnings()[0]
    s = s.with_prize("Z", 3, 1)
    assert s.warnings() == [] and s.prize("Z").garnets == 3


def test_settings_are_changed_by_name_and_refused_when_impossible():
    s = preset("f8", timer_hours=12, prizes={"z": [2, 1]})
    assert s.timer_hours == 12 and s.prize("Z").priority == 1 and s.preset == "F8"
    assert preset("F11", rows=3, cols=4).board.seats == tuple("OPQRSTUVWXYZ")
    for bad in ({"timer_hours": 0}, {"starting_chips": -1}, {"chip_price": 0}, {"bid_fee": -1},
                {"pregame_bids_hours": 25}, {"colour": "red"}, {"timer_hours": float("nan")}):
        with pytest.raises(SettingsError):
            preset("F11", **bad)
    with pytest.raises(SettingsError, match="unknown preset"):
        preset("F9")
    with pytest.raises(SettingsError):
        F11.with_prize("A", 1, 1)
    with pytest.raises(SettingsError):
        F11.with_prize("Z", -1, 0)


def test_a_game_needs_distinct_one_word_players():
    for players in ([], ["a", "a"], ["a b"], [""]):
        with pytest.raises(GameError):
            new_game(F11, players)
    with pytest.raises(GameError, match="not a player"):
        new_game(F11, ["a"], garnets={"b": 1})
    with pytest.raises(GameError):
        new_game(F11, ["a"], garnets={"a": -1})


# --------------------------------------------------------------------------
# The seed's examples, word for word
# --------------------------------------------------------------------------

def test_seed_example_a_bid_matching_a_standing_bid_is_invalid_until_outbid():
    g = Game()
    # "For example, Reds bid 1 on seat Z."
    g.ok("reds", "BID 1 Z", 1)
    # "A bid of 1 on seat Y, or any other seat, is now invalid, as it matches a standing bid."
    for seat in "YOQ":
        r = g.no("ann", f"BID {seat} 1", 2, "4")
        assert SEED_RULE_4 in r.message and "1 is reds's standing bid on Z" in r.message
    # "If Crawron outbids Reds, and bids 2 on seat Z, a bid of 1 becomes valid again."
    events = g.ok("crawron", "BID Z 2", 3)
    (out,) = g.of(Outbid, events)
    assert (out.player, out.seat, out.amount, out.by, out.new_amount) == ("reds", "Z", 1, "crawron", 2)
    g.ok("ann", "BID Y 1", 4)


def test_seed_example_a_winning_bid_is_taken_for_the_rest_of_the_game():
    g = Game()
    g.ok("reds", "BID 1 Z", 0.5)
    g.ok("crawron", "BID 2 Z", 1)
    g.ok("bob", "BID O 10", 10)  # keeps the auction going past Z's timer
    # "If Crawron wins seat Z with a bid of 2, ..."
    (won,) = g.of(SeatWon, g.tick(25))
    assert (won.player, won.seat, won.amount, won.at) == ("crawron", "Z", 2, 25)
    # "... no player can bid on seat Z, or bid 2 for the rest of the game."
    r = g.no("ann", "BID Z 7", 26, "1")
    assert "Seat Z is already won: crawron won it with 2." in r.message
    r = g.no("ann", "BID X 2", 26, "4")
    assert SEED_RULE_4 in r.message and "2 is the winning bid on Z (crawron)" in r.message
    # "Reds may still bid 1 on seat Y, and other players may outbid him with a minimal bid of 3."
    g.ok("reds", "BID 1 Y", 27)
    r = g.no("ann", "BID Y 2", 28, "4")
    assert "The lowest bid on Y that matches none is 3." in r.message
    g.ok("ann", "BID Y 3", 28)


# --------------------------------------------------------------------------
# The four rules, each naming its numbers
# --------------------------------------------------------------------------

def test_rule_1_not_on_a_seat_with_your_own_bid():
    g = Game()
    g.ok("reds", "BID Z 3", 1)
    r = g.no("reds", "BID Z 4", 2, "1")
    assert r.message.startswith("Rule 1: A player cannot bid on a seat that is already won, or that has their own "
                                "bid on it.")
    assert "Seat Z has your own bid of 3 on it." in r.message


@pytest.mark.parametrize("amount,words", [("0", "0 is not positive."), ("-3", "-3 is not positive."),
                                          ("2.5", "2.5 is not a whole number.")])
def test_rule_2_a_positive_integer(amount, words):
    g = Game()
    r = g.no("reds", f"BID Z {amount}", 1, "2")
    assert r.message == ("Rule 2: A bid may only be a positive integer amount, that's larger than the current bid. "
                         + words)


def test_rule_2_larger_than_the_current_bid():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    for amount in (4, 5):
        r = g.no("ann", f"BID Z {amount}", 2, "2")
        assert f"The current bid on Z is 5 (reds); {amount} is not larger." in r.message


def test_rule_3_standing_bids_within_the_chips_held():
    g = Game(garnets={"reds": 1})
    g.ok("reds", "BID O 10", 1)
    g.ok("reds", "BID P 9", 1)
    r = g.no("reds", "BID Q 2", 1, "3")
    assert r.message == ("Rule 3: The sum of all bids that a player has standing cannot exceed the total amount "
                         "of chips they have. You have 20 chips; your standing bids (O 10, P 9) and this one (2) "
                         "would add up to 21.")
    r = g.no("ann", "BID Q 21", 1, "3")
    assert "You have 20 chips; a bid of 21 is more." in r.message
    g.ok("reds", "BUY", 2)  # a chip more: now it fits
    g.ok("reds", "BID Q 2", 2)


def test_rule_3_chips_come_back_when_outbid_and_go_when_a_seat_is_won():
    g = Game()
    g.ok("reds", "BID O 15", 1)
    g.no("reds", "BID P 6", 1, "3")
    g.ok("ann", "BID O 16", 2)
    g.ok("reds", "BID P 6", 3)  # the 15 are free again
    g.ok("bob", "BID Q 1", 20)
    g.tick(27.5)  # reds wins P for 6: 14 chips left for good
    assert g.state.player("reds").chips == 14
    r = g.no("reds", "BID R 15", 27.5, "3")
    assert "You have 14 chips" in r.message


def test_rule_4_names_what_it_matches_and_the_rules_are_checked_in_order():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    r = g.no("ann", "BID Y 5", 2, "4")
    assert "5 is reds's standing bid on Z. The lowest bid on Y that matches none is 1." in r.message
    r = g.no("reds", "BID Y 5", 2, "4")  # your own standing amount too
    assert "5 is reds's standing bid on Z" in r.message
    # Breaking 2 and 4 at once: the first rule broken is named.
    g.ok("ann", "BID Y 3", 3)
    g.no("bob", "BID Y 3", 4, "2")


def test_a_seat_not_on_the_board_a_stranger_and_the_gm_cannot_bid():
    g = Game("F8")
    r = g.no("reds", "BID O 3", 1, "seat")
    assert "the seats are R-Z" in r.message
    g.no("mallory", "BID Z 3", 1, "player")
    g.no(GM, "BID Z 3", 1, "player")


def test_a_rejected_bid_changes_nothing_and_tells_only_the_bidder():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    before = g.state
    state, events = apply(before, "ann", parse_line("BID Z 4"), 1)
    assert state == before
    (r,) = events
    assert isinstance(r, Rejected) and r.player == "ann" and r.command == Bid(seat="Z", amount=4, written="4")


# --------------------------------------------------------------------------
# A valid bid: recorded at once, the outbid told, the board to all
# --------------------------------------------------------------------------

def test_a_valid_bid_tells_the_outbid_player_and_mails_the_board():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    events = g.ok("ann", "BID Z 6", 2)
    placed, out, board = events
    assert placed == BidPlaced(2, "ann", "Z", 6, 26, 0, False)
    assert out == Outbid(2, "reds", "Z", 5, "ann", 6)
    assert board == BoardChanged(2, ("reds", "crawron", "ann", "bob"))
    assert g.state.standing_on("Z").player == "ann"


def test_board_mail_off_and_board_on_request():
    g = Game()
    assert g.send("bob", "SET BOARD MAIL OFF", -5) == (BoardMailSet(-5, "bob", False),)
    g.tick(0)
    (board,) = g.of(BoardChanged, g.ok("reds", "BID Z 5", 1))
    assert "bob" not in board.recipients and "reds" in board.recipients
    assert g.send("bob", "BOARD", 1) == (BoardShown(1, "bob"),)
    assert g.send(GM, "BOARD", 1) == (BoardShown(1, None),)
    g.ok("bob", "SET BOARD MAIL ON", 2)
    (board,) = g.of(BoardChanged, g.ok("ann", "BID Y 6", 3))
    assert "bob" in board.recipients


def test_the_board_view_shows_bids_timers_won_seats_and_chips_left():
    g = Game(prizes={"Z": (3, 1)})
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID O 7", 10)
    g.tick(25)
    view = board_view(g.state)
    cells = {c.seat: c for row in view.rows for c in row}
    assert [c.seat for c in view.rows[0]] == ["O", "P", "Q"]
    assert cells["Z"].won.player == "reds" and cells["Z"].won.amount == 5 and cells["Z"].standing is None
    assert (cells["Z"].prize_garnets, cells["Z"].prize_priority) == (3, 1)
    assert cells["O"].standing.ends_at == 34 and cells["O"].won is None
    assert dict(view.chips_left) == {"reds": 15, "crawron": 20, "ann": 13, "bob": 20}


# --------------------------------------------------------------------------
# BUY
# --------------------------------------------------------------------------

def test_buy_is_refused_without_enough_garnets():
    g = Game("F8", garnets={"reds": 3})
    r = g.no("reds", "BUY 2", 1, "garnet")
    assert r.message == "A chip costs 2 garnets: 2 chips cost 4, and you have 3."
    r = g.no("ann", "/buy", 1, "garnet")
    assert r.message == "A chip costs 2 garnets: 1 chip costs 2, and you have 0."
    (bought,) = g.send("reds", "BUY", 1)
    assert bought == ChipsBought(1, "reds", 1, 2, 17, 1)  # to the buyer only
    g.no("reds", "BUY 0", 1, "buy")


def test_buy_in_the_pregame_counts_for_the_pregame_bid():
    g = Game(garnets={"reds": 5})
    g.ok("reds", "BID Z 23", -10)
    g.ok("reds", "BUY 3", -9)
    g.tick(0)
    assert g.state.standing_on("Z").amount == 23


# --------------------------------------------------------------------------
# The pregame
# --------------------------------------------------------------------------

def test_pregame_bids_are_processed_highest_priority_first():
    # Priority reds 4, crawron 3, ann 2, bob 1. Typed in lowest first (the
    # host's way), bob's 2 would have been outbid; highest first, it is
    # refused by rule 2 and reds's 5 stands, then ann's 6 outbids it.
    g = Game()
    g.ok("bob", "BID Z 2", -20)
    g.ok("ann", "BID 6 Z", -19)
    g.ok("reds", "BID Z 5", -18)
    g.ok("crawron", "BID Y 5", -17)
    events = g.tick(0)
    assert events[0] == AuctionOpened(0, ("reds", "crawron", "ann", "bob"))
    rejections = rejected(events)
    assert [(r.player, r.rule) for r in rejections] == [("crawron", "4"), ("bob", "2")]
    assert "5 is reds's standing bid on Z" in rejections[0].message
    assert "The current bid on Z is 6 (ann)" in rejections[1].message
    assert g.of(Outbid, events) == [Outbid(0, "reds", "Z", 5, "ann", 6)]
    assert g.state.standing_on("Z").player == "ann"


def test_the_highest_priority_bid_always_goes_through():
    g = Game(priority={"reds": 1, "crawron": 2, "ann": 9, "bob": 3})
    for k, p in enumerate(["reds", "crawron", "bob", "ann"]):
        g.ok(p, f"BID Z {10 - k}", -20 + k)  # ann's is the lowest bid
    events = g.tick(0)
    assert events[0].order[0] == "ann"
    assert [e.player for e in g.of(BidPlaced, events)][0] == "ann"


def test_all_pregame_timers_start_together_and_a_bid_can_be_replaced():
    g = Game()
    g.ok("reds", "BID Z 5", -23)
    (taken,) = g.ok("reds", "BID Y 4", -3)
    assert isinstance(taken, PregameBidTaken) and (taken.replaced.seat, taken.replaced.amount) == ("Z", 5)
    g.ok("ann", "BID O 7", -1)
    g.tick(0)
    assert {(b.seat, b.placed_at, b.ends_at) for b in g.state.standing} == {("Y", 0, 24), ("O", 0, 24)}
    assert g.state.standing_on("Z") is None


def test_f8_pregame_bids_close_an_hour_before_the_results():
    g = Game("F8")
    assert g.state.clock == -24
    g.ok("reds", "BID Z 5", -1.5)
    r = g.no("ann", "BID Y 4", -1, "phase")
    assert "Pregame bids closed at -1 h; the auction opens at 0 h." == r.message
    g.ok("ann", "BOARD", -0.5)
    g.tick(0)
    assert g.state.standing_on("Z").ends_at == 24  # "expiring the next deadline"


def test_pregame_bids_are_checked_when_processed_and_form_when_sent():
    g = Game()
    g.no("reds", "BID Z 0", -5, "2")
    g.no("reds", "BID A 3", -5, "seat")
    g.ok("reds", "BID Z 21", -5)  # more chips than reds holds: refused only when processed
    events = g.tick(0)
    (r,) = rejected(events)
    assert (r.player, r.rule, r.at) == ("reds", "3", 0)


def test_pregame_ties_are_broken_by_the_seeds_tiebreak_then_the_roster():
    g = Game(priority={"reds": 2, "crawron": 2, "ann": 1, "bob": 0},
             previous_priority=[{"reds": 1, "crawron": 0, "ann": 5, "bob": 5}])
    g.ok("reds", "BID Z 5", -5)
    g.ok("crawron", "BID Z 6", -5)
    events = g.tick(0)
    # crawron was lower in the previous round: stays at 2, reds gains 1 and goes first.
    assert events[0].order == ("reds", "crawron")
    assert g.state.standing_on("Z").player == "crawron"
    assert not g.of(GmWarning, events)[:-1]  # only the prize table's warning
    assert g.state.player("reds").priority == 2  # the order's tiebreak changes no priority

    g = Game(priority={"reds": 2, "crawron": 2, "ann": 1, "bob": 0})
    g.ok("reds", "BID Z 5", -5)
    g.ok("crawron", "BID Z 6", -5)
    events = g.tick(0)
    assert events[0].order == ("crawron", "reds")  # reds, listed first, ranks lowest
    assert any("roster's order" in w.message for w in g.of(GmWarning, events))


SEED_PRIORITY = ("Submissions of players of higher priority will be processed first, which means the submission "
                 "of the player with highest priority will always go through.")


def test_the_submission_of_the_player_with_highest_priority_always_goes_through():
    """The seed's sentence (issue 26): with priorities reds 1 and the others
    0, four pregame bids of 5 on Z: reds's is processed first and stands;
    the tie among the others is broken among them and never puts one of
    them before reds."""
    seed = ROOT.parent / "shared" / "seeds" / "lowest-unique-integer.txt"
    if seed.exists():
        assert SEED_PRIORITY in " ".join(seed.read_text(encoding="utf-8").split())
    g = Game(priority={"reds": 1, "crawron": 0, "ann": 0, "bob": 0})
    for p in ("bob", "ann", "crawron", "reds"):
        g.ok(p, "BID Z 5", -5)
    events = g.tick(0)
    assert events[0].order[0] == "reds"
    assert g.state.standing_on("Z").player == "reds"
    assert sorted((r.player, r.rule) for r in rejected(events)) == [("ann", "2"), ("bob", "2"), ("crawron", "2")]


def test_the_final_priority_keeps_a_player_who_had_more_ahead():
    """Issue 26: reds alone wins priority (Z: 1); the others' tie at 0 is
    broken among them, and reds stays first (not {reds: 1, crawron: 0,
    ann: 2, bob: 3})."""
    g = Game(priority={"reds": 0, "crawron": 0, "ann": 0, "bob": 0}, prizes={"Z": (0, 1)})
    g.ok("reds", "BID Z 5", 1)
    g.run_out()
    final = {p.name: p.priority for p in g.state.players}
    assert max(final, key=final.__getitem__) == "reds"
    assert sorted(final.values()) == [0, 1, 2, 3]
    assert final["reds"] == 3 and dict(g.state.tiebreak.gains)["reds"] == 2


def test_an_f11_command_at_the_pregame_end_is_an_auction_bid():
    g = Game()
    events = g.ok("reds", "BID Z 5", 0)
    assert isinstance(events[0], AuctionOpened)
    placed = g.of(BidPlaced, events)
    assert placed == [BidPlaced(0, "reds", "Z", 5, 24, 0, False)]


# --------------------------------------------------------------------------
# Timers
# --------------------------------------------------------------------------

def test_each_bid_has_its_own_timer_and_an_outbid_one_dies():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 2)
    g.ok("bob", "BID Z 7", 3)
    assert next_tick(g.state) == 26  # ann's; reds's timer (25) died with the bid
    won = g.of(SeatWon, g.tick(26))
    assert [(w.player, w.seat, w.at) for w in won] == [("ann", "Y", 26)]
    assert next_tick(g.state) == 27


def test_timers_that_ran_out_unwatched_fire_at_their_own_times_in_order():
    g = Game(prizes={"Z": (2, 1), "Y": (1, 3)})
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 2)
    g.ok("bob", "BID X 7", 0.5 + 2)
    events = g.tick(500)  # the daemon was down for days
    won = g.of(SeatWon, events)
    assert [(w.seat, w.at) for w in won] == [("Z", 25), ("Y", 26), ("X", 26.5)]
    (over,) = g.of(GameOver, events)
    assert over.at == 26.5 and over.reason == "quiet"
    assert [e.at for e in events] == sorted(e.at for e in events)
    reds = g.state.player("reds")
    assert (reds.chips, reds.garnets) == (15, 2)
    assert g.state.clock == 500


def test_a_bid_at_the_moment_the_timer_runs_out_is_too_late():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID O 9", 20)
    events = g.send("bob", "BID Z 6", 25)
    assert isinstance(events[0], SeatWon)
    assert events[-1].rule == "1"


def test_the_timer_is_a_setting():
    g = Game(timer_hours=6)
    g.ok("reds", "BID Z 5", 1)
    assert g.state.standing_on("Z").ends_at == 7
    assert g.of(SeatWon, g.tick(7))[0].at == 7


def test_the_clock_never_runs_backwards():
    g = Game()
    g.tick(5)
    with pytest.raises(GameError):
        tick(g.state, 4)
    with pytest.raises(GameError):
        apply(g.state, "reds", parse_line("BOARD"), 4.5)


# --------------------------------------------------------------------------
# The end of the auction: all won, 24 quiet hours, 10 days, 15 days
# --------------------------------------------------------------------------

def test_the_game_ends_when_every_seat_is_won():
    g = Game("F8", quiet_hours=48)
    bids = {"reds": "R1 U5 Y9", "crawron": "S2 V6", "ann": "T3 W7", "bob": "X4 Z8"}
    for p, words in bids.items():
        for w in words.split():
            g.ok(p, f"BID {w[0]} {w[1:]}", 1)
    (over,) = g.of(GameOver, g.tick(25))
    assert (over.at, over.reason, over.winner, over.seat, over.amount) == (25, "all-won", "reds", "R", 1)
    assert g.state.ended_at == 25 and len(g.state.won) == 9


def test_the_game_ends_after_24_hours_without_a_new_valid_bid():
    g = Game()
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 10)
    g.no("bob", "BID Y 2", 30, "2")  # refused bids are no new bids
    assert next_tick(g.state) == 34
    (over,) = g.of(GameOver, g.tick(40))
    assert (over.at, over.reason) == (34, "quiet")
    g.no("bob", "BID O 3", 41, "phase")
    g.no("bob", "BUY", 41, "phase")


def test_no_bid_at_all_ends_the_game_at_24_hours_with_no_winner():
    g = Game(players=("a", "b", "c"))
    events = g.tick(100)
    (over,) = g.of(GameOver, events)
    assert (over.at, over.winner, over.tol) == (24, None, ())
    assert "Nobody won a seat" in g.of(GmWarning, events)[-1].message
    # Everyone holds the starting 20 chips: all are EC candidates; the GM chooses.
    assert over.ec_candidates == ("a", "b", "c") and over.chooser is None and over.ec_deadline is None
    g.no("a", "EC b", 101, "ec")
    (decided, finished) = g.send(GM, "EC b", 102)
    assert decided == EcDecided(102, "b", "gm") and isinstance(finished, GameFinished)


def test_longer_timers_than_the_quiet_time_still_run_out():
    g = Game(timer_hours=48)
    g.ok("reds", "BID Z 5", 1)
    assert not g.of(GameOver, g.tick(30))
    (over,) = g.of(GameOver, g.tick(100))
    assert (over.at, over.reason) == (49, "quiet")


def _keep_alive(g: Game, until: float, step: float = 20) -> None:
    """reds and crawron outbid each other on O every `step` hours."""
    t, k = 1.0, 1
    while t <= until:
        g.ok(("reds", "crawron")[k % 2], f"BID O {k}", t)
        t, k = t + step, k + 1


def test_after_10_days_every_new_bid_costs_a_garnet():
    g = Game(garnets={"ann": 1, "bob": 0})
    _keep_alive(g, 230)
    assert g.of(FeeStarts, g.tick(240)) == [FeeStarts(240, 1)]
    g.ok("bob", "BID Z 15", 240)  # "longer than 10 days": not yet at 240 itself
    r = g.no("bob", "BID Y 4", 240.5, "garnet")
    assert r.message == "The game has run for more than 10 days: every new bid costs 1 garnet, and you have 0."
    (placed, board) = g.ok("ann", "BID Y 16", 241)
    assert placed.fee == 1 and g.state.player("ann").garnets == 0 and g.state.player("ann").fees == 1
    g.no("ann", "BID X 2", 242, "garnet")
    assert g.state.history[-1].fee == 1


def test_at_15_days_standing_bids_are_cancelled_and_the_game_ends():
    g = Game(garnets={p: 10 for p in ("reds", "crawron", "ann", "bob")})
    g.ok("ann", "BID Z 20", 1)  # won at 25
    _keep_alive(g, 330, step=20)  # the last one: crawron's 17 on O at 321
    g.ok("bob", "BID Y 19", 336)  # its timer runs out exactly at 360: won before the cancel
    g.ok("reds", "BID O 18", 341)
    events = g.tick(400)
    kinds = [type(e).__name__ for e in events]
    assert kinds[:3] == ["SeatWon", "BoardChanged", "BidsCancelled"]
    (cancelled,) = g.of(BidsCancelled, events)
    assert [(b.seat, b.player, b.amount) for b in cancelled.bids] == [("O", "reds", 18)]
    (over,) = g.of(GameOver, events)
    assert (over.at, over.reason, over.winner, over.seat) == (360, "day-15", "bob", "Y")
    assert [r.outcome for r in g.state.history if r.seat == "O"][-1] == "cancelled"
    # Cancelled bids are not paid for.
    assert g.state.player("reds").chips == 20 and g.state.player("crawron").chips == 20
    g.no("reds", "BID P 1", 400, "phase")


def test_a_bid_at_15_days_is_refused():
    g = Game(timer_hours=1000, quiet_hours=1000, garnets={"reds": 1})
    g.ok("ann", "BID Z 3", 1)
    r = g.no("reds", "BID Y 4", 360, "phase")
    assert "ended at 360 h" in r.message


# --------------------------------------------------------------------------
# Prizes
# --------------------------------------------------------------------------

def test_the_winner_of_a_seat_pays_the_bid_and_gets_its_garnets_and_priority():
    g = Game(garnets={"reds": 1}, priority={"reds": 3, "crawron": 1, "ann": 2, "bob": 0})
    g.ok(GM, "SET PRIZE Z 3 2", -10)
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 20)
    (won,) = g.of(SeatWon, g.tick(25))
    assert (won.garnets, won.priority) == (3, 2)
    reds = g.state.player("reds")
    assert (reds.chips, reds.garnets, reds.priority) == (15, 4, 5)


def test_set_prize_is_the_gms_until_the_seat_is_won():
    g = Game()
    assert g.send(GM, "SET PRIZE Z 3 1", -10) == (PrizeSet(-10, "Z", 3, 1),)
    g.no("reds", "SET PRIZE Z 9 9", -9, "gm")
    g.no(GM, "SET PRIZE A 1 1", -9, "seat")
    g.ok("reds", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 20)
    g.tick(25)
    r = g.no(GM, "SET PRIZE Z 1 1", 26, "prize")
    assert "(3 garnets, 1 priority)" in r.message
    g.ok(GM, "SET PRIZE Y 1 1", 26)  # not won yet
    assert g.of(SeatWon, g.tick(44))[0].garnets == 1


def test_the_gm_is_warned_of_the_placeholder_when_the_auction_opens():
    g = Game()
    warnings = g.of(GmWarning, g.tick(0))
    assert any("placeholder" in w.message for w in warnings)
    g = Game(prizes={s: (1, 1) for s in "OPQRSTUVWXYZ"})
    assert not g.of(GmWarning, g.tick(0))


# --------------------------------------------------------------------------
# End of game: winner and ToL, EC, gifts, final priority
# --------------------------------------------------------------------------

def _won(g: Game, seats: dict[str, tuple[str, int]], at: float = 1) -> tuple:
    """Each seat bid on as given, then the clock run to the game's end."""
    for seat, (player, amount) in seats.items():
        g.ok(player, f"BID {seat} {amount}", at)
    return g.tick(at + 24)


def test_f11_tol_winner_two_and_one_for_each_adjacent_winner():
    g = Game(players=("w", "a", "b", "c", "d", "e"), garnets={p: 5 for p in "abcde"})
    # The lowest winning bid: w on S, whose neighbours are P, T, V, R.
    events = _won(g, {"S": ("w", 1), "P": ("a", 2), "T": ("b", 3), "V": ("c", 4), "R": ("d", 5), "O": ("e", 6)})
    (over,) = g.of(GameOver, events)
    assert over.winner == "w" and over.seat == "S"
    assert dict(over.tol) == {"w": 2, "a": 1, "b": 1, "c": 1, "d": 1}  # e's O is not adjacent


def test_f11_unclaimed_adjacent_seats_give_their_tol_to_the_winner():
    g = Game(players=("w", "a", "b"))
    (over,) = g.of(GameOver, _won(g, {"S": ("w", 1), "P": ("a", 2), "Z": ("b", 3)}))
    assert dict(over.tol) == {"w": 5, "a": 1}  # always 6 in all
    g = Game(players=("w", "a"))
    (over,) = g.of(GameOver, _won(g, {"S": ("w", 3)}))
    assert dict(over.tol) == {"w": 6}


def test_f11_the_winner_of_an_adjacent_seat_may_be_the_winner_or_win_two():
    g = Game(players=("w", "a", "b"))
    (over,) = g.of(GameOver, _won(g, {"S": ("w", 1), "P": ("w", 2), "T": ("a", 3), "V": ("a", 4), "R": ("b", 5)}))
    assert dict(over.tol) == {"w": 3, "a": 2, "b": 1}


def test_f11_the_lowest_winning_bid_wins_not_the_lowest_bid():
    g = Game(players=("w", "a", "b"))
    g.ok("a", "BID O 1", 1)
    g.ok("b", "BID O 2", 2)  # a's 1 is outbid: it wins nothing
    (over,) = g.of(GameOver, _won(g, {"Z": ("w", 3)}, at=3))
    assert (over.winner, over.seat, over.amount) == ("b", "O", 2)


def test_f8_tol_winner_one_each_adjacent_one_unclaimed_an_extra():
    g = Game("F8", players=("w", "a", "b", "c"))
    # V (centre) neighbours S, W, Y, U.
    (over,) = g.of(GameOver, _won(g, {"V": ("w", 1), "S": ("a", 2), "W": ("b", 3), "R": ("c", 4)}))
    assert dict(over.tol) == {"w": 3, "a": 1, "b": 1}  # Y and U unclaimed: the winner's extra ones
    assert sum(k for _, k in over.tol) == 5
    g = Game("F8", players=("w", "a", "b", "c"))
    (over,) = g.of(GameOver, _won(g, {"R": ("w", 1), "X": ("a", 2), "S": ("b", 3), "U": ("c", 4), "T": ("a", 5)}))
    assert dict(over.tol) == {"w": 1, "a": 2, "b": 1, "c": 1}  # R's neighbours X, S, U, T wrap around


def test_ec_with_nobody_at_the_threshold_is_the_fewest_chips():
    g = Game(players=("w", "a", "b"))
    events = _won(g, {"S": ("w", 1), "P": ("a", 2), "T": ("b", 20)})
    (over,) = g.of(GameOver, events)
    assert over.ec_candidates == ("b",) and g.state.ec == "b" and g.state.ec_by == "rule"


def test_bought_chips_count_for_the_ec():
    g = Game(players=("w", "a", "b"), garnets={"a": 3})
    g.ok("a", "BUY 3", -1)
    (over,) = g.of(GameOver, _won(g, {"S": ("w", 1), "P": ("a", 2), "T": ("b", 3)}))
    assert over.ec_candidates == ("a",)  # 20 + 3 - 2 = 21: at least the starting 20


def test_several_ec_candidates_the_winner_chooses_within_the_deadline():
    g = Game(players=("w", "a", "b", "c"))
    (over,) = g.of(GameOver, _won(g, {"S": ("w", 1)}))
    assert over.ec_candidates == ("a", "b", "c") and over.chooser == "w" and over.ec_deadline == 49
    assert next_tick(g.state) == 49
    g.no("a", "EC b", 30, "ec")
    g.no(GM, "EC b", 30, "ec")  # not yet the GM's
    r = g.no("w", "EC w", 30, "ec")
    assert "not among the EC candidates (a, b, c)" in r.message
    g.no("w", "GIVE TOL a", 30, "phase")  # gifts come after the EC
    events = g.send("w", "EC b", 31)
    assert events[0] == EcDecided(31, "b", "winner")
    assert g.of(GiftsDue, events) == [GiftsDue(31, (("w", 5),), ("a", "c"))]


def test_the_gm_decides_the_ec_when_the_winner_does_not():
    g = Game(players=("w", "a", "b", "c"))
    _won(g, {"S": ("w", 1)})
    assert g.of(EcOverdue, g.tick(49)) == [EcOverdue(49, ("a", "b", "c"))]
    r = g.no("w", "EC b", 50, "ec")
    assert "ran out at 49 h" in r.message
    events = g.send(GM, "EC c", 50)
    assert events[0] == EcDecided(50, "c", "gm")
    g.no(GM, "EC a", 51, "phase")


def test_tol_gifts_are_checked_and_the_game_finishes_when_all_are_given():
    g = Game(players=("w", "a", "b", "c", "d"))
    _won(g, {"S": ("w", 1), "P": ("a", 2), "O": ("b", 3)})  # w 5 ToL, a 1; b holds 17, c and d 20
    assert dict(g.state.tol_awarded) == {"w": 5, "a": 1}
    g.ok("w", "EC c", 30)  # candidates c, d (20 chips)
    assert g.state.phase == engine.GIFTS
    g.no("a", "GIVE TOL b", 31, "tol")  # a holds only 1
    g.no("w", "GIVE TOL a", 31, "tol")  # a holds one already
    g.no("w", "GIVE TOL c", 31, "tol")  # c is the EC
    g.no("w", "GIVE TOL w", 31, "tol")
    g.no("w", "GIVE TOL zed", 31, "tol")
    g.no(GM, "GIVE TOL b", 31, "player")
    assert g.send("w", "GIVE TOL b", 32) == (TolGiven(32, "w", "b"),)
    (given, finished) = g.send("w", "GIVE TOL d", 33)
    # Nobody left with neither a ToL nor the EC: w keeps the rest.
    assert finished == GameFinished(33, (("w", 2),))
    assert {p.name: p.tol for p in g.state.players} == {"w": 3, "a": 1, "b": 1, "c": 0, "d": 1}
    g.no("w", "GIVE TOL c", 34, "phase")


def test_gifts_finish_the_game_when_nobody_owes_any_more():
    names = ("w", "a", "b", "c", "d", "e", "f", "g")
    g = Game(players=names)
    _won(g, {"S": ("w", 1), "Z": ("a", 30 - 11)})
    assert dict(g.state.tol_awarded) == {"w": 6}
    assert g.state.ec_candidates == ("b", "c", "d", "e", "f", "g")
    g.ok("w", "EC g", 26)
    for k, p in enumerate("abcde"):
        events = g.send("w", f"GIVE TOL {p}", 27 + k)
    assert isinstance(events[-1], GameFinished) and events[-1].kept == ()
    assert g.state.phase == engine.FINISHED and g.state.finished_at == 31
    assert next_tick(g.state) is None


def test_the_gm_hears_when_gifts_are_overdue():
    g = Game(players=("w", "a", "b"))
    _won(g, {"S": ("w", 1), "P": ("a", 25 - 6)})  # a 1 chip left, b 20: b is EC
    assert g.state.ec == "b" and g.state.phase == engine.FINISHED  # w's 5: no one eligible (a has a ToL)
    g = Game(players=("w", "a", "b", "c"))
    _won(g, {"S": ("w", 1), "P": ("a", 19)})
    assert g.state.ec_candidates == ("b", "c")
    g.ok("w", "EC b", 26)
    assert g.of(GiftsOverdue, g.tick(100)) == [GiftsOverdue(50, (("w", 4),))]


def test_final_priority_has_the_prizes_and_no_tie():
    g = Game(players=("a", "b", "c"), priority={"a": 3, "b": 2, "c": 0}, prizes={"S": (0, 1), "P": (0, 2)})
    _won(g, {"S": ("b", 1), "P": ("c", 2)})
    # a 3, b 3, c 2 after the prizes; a and b tied: b had less in the previous
    # round (this game's start), so b stays at 3 and a gains 1.
    assert {p.name: p.priority for p in g.state.players} == {"a": 4, "b": 3, "c": 2}


def test_the_bid_history_keeps_every_valid_bid_with_its_fate():
    g = Game()
    g.ok("reds", "BID Z 5", -3)
    g.ok("ann", "BID Z 6", 1)
    g.no("bob", "BID Z 6", 2, "2")
    g.ok("bob", "BID Y 7", 2)
    g.tick(100)
    assert [(r.at, r.player, r.seat, r.amount, r.pregame, r.outcome, r.outcome_at) for r in g.state.history] == [
        (0, "reds", "Z", 5, True, "outbid", 1), (1, "ann", "Z", 6, False, "won", 25),
        (2, "bob", "Y", 7, False, "won", 26)]


def test_commands_out_of_their_phase():
    g = Game()
    g.no("reds", "EC ann", -5, "phase")
    g.no("reds", "GIVE TOL ann", -5, "phase")
    g.no(GM, "SET BOARD MAIL OFF", -5, "player")
    g.no(GM, "BUY", -5, "player")
