"""The GM's EJECT and REPLACE in a running Lowest Unique Integer game, in
the engine (docs/lui.md, "Players leaving"): a replacement takes over the
seat whole, under their own name; an ejected player's standing bids are
cancelled and what they hold stays theirs. Every state passes
lui_helpers.check (nothing created or lost), and a log holding the GM's
EJECT and REPLACE lines replays to the same state."""

from __future__ import annotations

from judge.methods.lui import engine
from judge.methods.lui.engine import (
    BoardChanged,
    EcDecided,
    GameFinished,
    GmWarning,
    PlayerEjected,
    PlayerReplaced,
    Standing,
)
from judge.methods.lui.replay import replay, run
from tests.lui_helpers import GM, Game


def totals(state) -> tuple[int, int]:
    """Chips and garnets in the game: held by the players, or paid for seats."""
    chips = sum(p.chips for p in state.players) + sum(w.amount for w in state.won)
    garnets = sum(p.garnets for p in state.players)
    return chips, garnets


def test_a_replacement_takes_over_the_seat_whole_under_their_own_name():
    g = Game(players=("reds", "crawron", "ann", "bob"), garnets={"ann": 3}, prizes={"S": (2, 1)})
    g.ok("ann", "BID 4 S", -5)  # a pregame bid
    g.ok("ann", "SET BOARD MAIL OFF", -4)
    g.tick(0.5)
    g.ok("ann", "BUY 2", 1)
    g.ok("ann", "BID Z 9", 1)
    g.ok("reds", "BID Y 10", 2)
    before = g.state.player("ann")
    events = g.send(GM, "REPLACE ann zoe", 3)
    assert events[0] == PlayerReplaced(3, "ann", "zoe") and isinstance(events[1], BoardChanged)
    assert "zoe" in events[1].recipients  # board mail on again: it was ann's choice
    s = g.state
    assert not s.has_player("ann")
    zoe = s.player("zoe")
    assert (zoe.chips, zoe.garnets, zoe.priority, zoe.bought) == (before.chips, before.garnets, before.priority, 2)
    assert [(b.seat, b.player, b.amount) for b in s.standing] == [("S", "zoe", 4), ("Y", "reds", 10),
                                                                   ("Z", "zoe", 9)]
    assert [r.player for r in s.history] == ["zoe", "zoe", "reds"]
    assert s.roster_changes == (engine.RosterChange(3, "ann", "zoe"),)
    # The seat's timers run on: zoe wins S with ann's bid and gets the prize.
    g.no("ann", "BID O 1", 4, "player")
    g.tick(24)
    assert g.state.won_seat("S").player == "zoe" and g.state.player("zoe").garnets == 3 - 2 + 2
    g.no("zoe", "BID S 11", 25, "1")
    g.run_out()
    assert g.state.winner == "zoe"  # S with 4 is the lowest winning bid
    out = replay(g.replay_data())
    assert out["winner"] == "zoe" and out["roster_changes"] == [{"at": 3, "old": "ann", "new": "zoe"}]
    assert run(g.replay_data()).state == g.state


def test_replace_refusals():
    g = Game(players=("reds", "crawron", "ann"))
    g.no("reds", "REPLACE ann zoe", -3, "gm")
    g.no(GM, "REPLACE ann crawron", -3, "player")  # a name already in the game
    g.no(GM, "REPLACE zed zoe", -3, "player")
    g.ok(GM, "EJECT ann", -2)
    g.no(GM, "REPLACE ann zoe", -1, "player")  # ejected already
    g.no(GM, "EJECT ann", -1, "player")


def test_an_ejected_players_standing_bids_are_cancelled_and_their_chips_stay_theirs():
    g = Game(players=("reds", "crawron", "ann", "bob"), garnets={"ann": 2}, prizes={"Z": (3, 1)})
    g.ok("ann", "BID Z 5", 1)
    g.ok("ann", "BID Y 6", 1)
    g.ok("ann", "BUY", 2)
    g.ok("bob", "BID W 8", 20)  # keeps the auction open
    g.tick(26)  # ann wins Z (5) and Y (6)
    assert g.state.won_seat("Z").player == "ann"
    g.ok("ann", "BID X 7", 27)
    chips, garnets = totals(g.state)
    held = g.state.player("ann")
    events = g.send(GM, "EJECT ann", 30)
    (ejected,) = g.of(PlayerEjected, events)
    assert ejected.cancelled == (Standing("X", "ann", 7, 27, 51),) and ejected.pregame_bid is None
    s = g.state
    assert [b.seat for b in s.standing] == ["W"]
    assert next(r for r in s.history if r.seat == "X").outcome == "cancelled"
    assert totals(s) == (chips, garnets)  # nothing created or lost
    after = s.player("ann")
    assert (after.chips, after.garnets, after.priority, after.out) == (held.chips, held.garnets, held.priority, True)
    assert "ann" not in g.of(BoardChanged, events)[-1].recipients
    g.no("ann", "BID V 9", 31, "player")
    g.no("ann", "BUY", 31, "player")
    # The seat is open again: a lower bid than the cancelled one is fine.
    g.ok("reds", "BID X 1", 32)
    g.run_out()
    s = g.state
    # reds's X with 1 is the lowest winning bid among the players still in;
    # ann's Y and Z, X's neighbours, count as unclaimed (their ToL go to the
    # winner, as U's and O's): 6 in all, none to ann, nor is ann EC candidate.
    assert s.winner == "reds" and s.winning_seat == "X"
    assert dict(s.tol_awarded) == {"reds": 6}
    assert "ann" not in s.ec_candidates
    assert run(g.replay_data()).state == s


def test_an_ejected_players_pregame_bid_is_dropped():
    g = Game(players=("reds", "crawron", "ann"))
    g.ok("ann", "BID Z 3", -10)
    (ejected,) = g.of(PlayerEjected, g.send(GM, "EJECT ann", -5))
    assert ejected.pregame_bid.amount == 3 and ejected.cancelled == ()
    g.tick(1)
    assert g.state.standing == ()


def test_the_ec_chooser_ejected_the_gm_chooses_and_a_lone_candidate_is_the_ec():
    g = Game(players=("w", "a", "b", "c"))
    g.ok("w", "BID S 1", 1)
    g.tick(25)
    assert g.state.phase == engine.EC and g.state.ec_candidates == ("a", "b", "c") and g.state.ec_chooser == "w"
    events = g.send(GM, "EJECT w", 26)
    assert g.of(GmWarning, events) and g.state.ec_chooser is None and engine.next_tick(g.state) is None
    g.ok(GM, "EJECT a", 27)
    assert g.state.ec_candidates == ("b", "c")
    events = g.send(GM, "EJECT b", 28)
    assert EcDecided(28, "c", "rule") in events
    # The winner w left with 6 ToL: nobody owes gifts any more.
    assert isinstance(events[-1], GameFinished) and g.state.phase == engine.FINISHED
    assert run(g.replay_data()).state == g.state


def test_a_giver_ejected_keeps_their_tol_and_the_game_finishes():
    g = Game(players=("w", "a", "b", "c"))
    g.ok("w", "BID S 1", 1)
    g.ok("a", "BID P 19", 1)
    g.tick(25)
    g.ok("w", "EC b", 26)
    assert g.state.phase == engine.GIFTS
    events = g.send(GM, "EJECT w", 27)
    assert isinstance(events[-1], GameFinished) and g.state.player("w").tol == 5
    g.no(GM, "EJECT a", 28, "phase")


def test_a_replacement_during_the_gifts_owes_them():
    g = Game(players=("w", "a", "b", "c"))
    g.ok("w", "BID S 1", 1)
    g.tick(25)
    g.ok("w", "EC b", 26)
    g.ok(GM, "REPLACE w v", 27)
    assert g.state.winner == "v" and dict(g.state.tol_awarded)["v"] == 6
    g.no("w", "GIVE TOL a", 28, "player")
    g.ok("v", "GIVE TOL a", 28)
    g.ok("v", "GIVE TOL c", 29)
    assert g.state.phase == engine.FINISHED and [(x.giver, x.to) for x in g.state.gifts] == [("v", "a"), ("v", "c")]
    assert run(g.replay_data()).state == g.state
