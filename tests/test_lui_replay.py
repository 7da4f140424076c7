"""The offline replay (judge/methods/lui/replay.py): issue 13's JSON contract,
and the property that random games never break rules (1)-(4), never make or
lose chips or garnets, and replay from their log to the very same state."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from judge.methods.lui import engine
from judge.methods.lui.commands import Bid, parse_line
from judge.methods.lui.engine import Rejected, next_tick
from judge.methods.lui.replay import ReplayError, replay, run
from tests.lui_helpers import GM, Game

ISSUE_EXAMPLE = {
    "method": "lui", "params": {"preset": "F11", "timer_hours": 24},
    "players": ["reds", "crawron", "ann"],
    "priority": {"reds": 3, "crawron": 1, "ann": 2},
    "garnets": {"reds": 2, "crawron": 0, "ann": 1},
    "prizes": {"O": [1, 0], "P": [0, 1]},
    "pregame": {"reds": "BID 5 Z"},
    "events": [{"at": 0.5, "player": "crawron", "text": "BID Z 6"},
               {"at": 30, "player": "crawron", "text": "EC ann"}],
}


def test_the_issues_example():
    out = replay(json.loads(json.dumps(ISSUE_EXAMPLE)))
    json.dumps(out)  # all of it is JSON
    assert out["results"] == [{"ok": True}, {"ok": True}]
    assert out["pregame"] == {"reds": {"ok": True, "seat": "Z", "bid": 5}}
    assert out["seats"]["Z"] == {"winner": "crawron", "bid": 6, "at": 24.5, "garnets": 0, "priority": 0}
    assert all(out["seats"][s] is None for s in "OPQRSTUVWXY")
    assert out["chips"] == {"reds": 20, "crawron": 14, "ann": 20}
    assert out["garnets"] == {"reds": 2, "crawron": 0, "ann": 1}
    assert out["priority"] == {"reds": 3, "crawron": 1, "ann": 2}
    assert (out["ended_at"], out["end_reason"], out["winner"], out["winning_bid"]) == (24.5, "quiet", "crawron", 6)
    assert out["tol"] == {"crawron": 6}  # Z's four neighbours unclaimed: all six to the winner
    assert out["ec_candidates"] == ["reds", "ann"] and out["ec"] == "ann" and out["ec_by"] == "winner"
    # crawron must give 5 ToL, but only reds may take one; nobody has: the
    # clock ran on to the gift deadline, where the GM hears of it.
    assert out["phase"] == "gifts" and out["clock"] == 54
    assert out["log"][-1] == {"type": "GiftsOverdue", "at": 54.0, "owed": [["crawron", 5]]}
    assert [h["outcome"] for h in out["history"]] == ["outbid", "won"]
    assert any("placeholder" in w and "Q, R" in w for w in out["warnings"])


def test_each_event_has_its_result_with_the_rule_broken():
    data = {"method": "lui", "params": {"preset": "F8"}, "players": ["reds", "crawron", "ann"],
            "garnets": {"ann": 1},
            "events": [{"at": 1, "player": "reds", "text": "/bid 1 Z"},
                       {"at": 2, "player": "ann", "text": "BID Y 1"},
                       {"at": 3, "player": "ann", "text": "BID Q 2"},
                       {"at": 4, "player": "ann", "text": "BID Z 1"},
                       {"at": 5, "player": "reds", "text": "BID Z 2"},
                       {"at": 6, "player": "crawron", "text": "BID Y 17"},
                       {"at": 7, "player": "ann", "text": "BUY"},
                       {"at": 8, "player": "ann", "text": "hello there"},
                       {"at": 9, "player": "zed", "text": "BOARD"},
                       {"at": 10, "player": "ann", "text": "EC reds"}]}
    results = replay(data)["results"]
    assert [r["ok"] for r in results] == [True] + [False] * 9
    assert [r["rule"] for r in results[1:]] == ["4", "seat", "2", "1", "3", "garnet", "syntax", "player", "phase"]
    assert "Rule 4: No bid can be made that matches a standing bid or a winning bid." in results[1]["message"]
    assert "column 1: expected a command" in results[7]["message"]


def test_a_text_of_several_lines_is_taken_line_by_line():
    data = {"method": "lui", "players": ["a", "b"], "garnets": {"a": 1},
            "events": [{"at": 1, "player": "a", "text": "BUY\nBID Z 21\nBID Y 21"}]}
    (result,) = replay(data)["results"]
    assert result["ok"] is False and result["rule"] == "3"
    assert [r["ok"] for r in result["lines"]] == [True, True, False]


def test_the_gm_is_player_null_or_gm_true():
    data = {"method": "lui", "players": ["a", "b"],
            "events": [{"at": -5, "player": None, "text": "SET PRIZE Z 3 1"},
                       {"at": -4, "gm": True, "text": "SET PRIZE Y 1 2"},
                       {"at": -3, "player": "a", "text": "SET PRIZE X 1 2"},
                       {"at": 1, "player": "a", "text": "BID Z 4"}]}
    out = replay(data)
    assert [r["ok"] for r in out["results"]] == [True, True, False, True]
    assert out["results"][2]["rule"] == "gm"
    assert out["settings"]["prizes"]["Y"] == [1, 2]
    assert out["seats"]["Z"]["garnets"] == 3 and out["garnets"]["a"] == 3 and out["priority"]["a"] == 1


def test_until_stops_the_clock():
    data = dict(ISSUE_EXAMPLE, events=ISSUE_EXAMPLE["events"][:1], until=10)
    out = replay(data)
    assert (out["phase"], out["clock"], out["ended_at"]) == ("auction", 10, None)
    assert out["standing"] == {"Z": {"player": "crawron", "bid": 6, "placed_at": 0.5, "ends_at": 24.5}}
    assert out["chips_left"]["crawron"] == 14 and out["chips"]["crawron"] == 20


def test_pregame_bids_are_judged_when_the_pregame_ends():
    data = {"method": "lui", "params": {"preset": "F8"}, "players": ["a", "b", "c"],
            "priority": {"a": 3, "b": 2, "c": 1},
            "pregame": {"a": "BID Z 5", "b": "BID Y 5", "c": "BID Z 0"},
            "events": [{"at": -0.5, "player": "c", "text": "BID X 3"}]}
    out = replay(data)
    assert out["pregame"]["a"] == {"ok": True, "seat": "Z", "bid": 5}
    assert out["pregame"]["b"]["rule"] == "4"
    assert out["pregame"]["c"]["rule"] == "2"  # refused when sent
    assert out["results"][0]["rule"] == "phase"  # F8: pregame bids closed at -1 h


@pytest.mark.parametrize("change,match", [
    ({"method": "preference"}, "method"),
    ({"colour": 1}, "unknown key"),
    ({"params": {"preset": "F9"}}, "unknown preset"),
    ({"params": {"timer": 3}}, "unknown setting"),
    ({"players": []}, "players"),
    ({"players": ["a", "a"]}, "named twice"),
    ({"pregame": {"zed": "BID Z 1"}}, "not a player"),
    ({"prizes": {"Z": [1]}}, "garnets, priority"),
    ({"prizes": {"A": [1, 1]}}, "no seat"),
    ({"events": [{"at": 2, "player": "a", "text": "BOARD"}, {"at": 1, "player": "a", "text": "BOARD"}]},
     "order they came"),
    ({"events": [{"at": "soon", "player": "a", "text": "BOARD"}]}, "number of hours"),
    ({"events": [{"at": -30, "player": "a", "text": "BOARD"}]}, "before"),
    ({"until": "never"}, "until"),
])
def test_a_log_that_cannot_be_replayed_is_refused(change, match):
    data = {"method": "lui", "players": ["a", "b"], **change}
    with pytest.raises(ReplayError, match=match):
        replay(data)


def test_the_replay_loads_neither_the_store_nor_templates():
    probe = ("import sys, judge.methods.lui.replay; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'sqlalchemy', 'alembic', 'jinja2', 'numpy', "
             "'scipy', 'numba'}))")
    run_ = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run_.stdout.strip() == "[]"


def test_a_live_game_ticked_at_odd_times_and_its_replay_agree():
    g = Game("F8", players=("a", "b", "c", "d"), garnets={"a": 4, "b": 1})
    g.ok("a", "BID Z 5", -20)
    g.ok("b", "BID Z 7", -10)
    g.ok("c", "BOARD", -5)
    g.tick(0.25)
    g.ok("c", "BID Y 3", 1)
    g.tick(13.7)
    g.send("d", "BID Y 3", 14)
    g.ok("a", "BUY 2", 15)
    g.ok("a", "BID Y 17", 16)
    g.tick(50)  # Y won at 40: the game is over, b has until 64 to choose the EC
    # b won Z with 7, the lowest: 1 ToL, and 3 for Z's unclaimed neighbours
    # (a won Y); c and d kept their 16 chips.
    assert (g.state.winner, g.state.ec_candidates, dict(g.state.tol_awarded)) == ("b", ("c", "d"), {"b": 4, "a": 1})
    g.ok("b", "EC c", 51)
    g.ok("b", "GIVE TOL d", 52)
    assert g.state.phase == engine.FINISHED
    g.tick(100)
    assert run(g.replay_data(until=g.state.clock)).state == g.state


# --------------------------------------------------------------------------
# Random games
# --------------------------------------------------------------------------

NAMES = ("ann", "bob", "cy", "dee", "eve")
SUBSTITUTES = ("zed", "yo")


@st.composite
def games(draw):
    name = draw(st.sampled_from(["F11", "F8"]))
    n = draw(st.integers(2, 5))
    players = NAMES[:n]
    tweaks = draw(st.fixed_dictionaries({}, optional={
        "timer_hours": st.sampled_from([6, 24, 30]), "quiet_hours": st.sampled_from([12, 24]),
        "fee_after_hours": st.sampled_from([10, 40]), "cancel_after_hours": st.sampled_from([30, 60, 90]),
        "bid_fee": st.sampled_from([1, 2]), "ec_hours": st.sampled_from([5, 24])}))
    if tweaks.get("cancel_after_hours", 360) < tweaks.get("fee_after_hours", 240):
        tweaks["fee_after_hours"] = 10
    garnets = {p: draw(st.integers(0, 4)) for p in players}
    priority = {p: draw(st.integers(0, 2)) for p in players}  # ties on purpose
    prizes = draw(st.dictionaries(st.sampled_from("RSTUVWXYZ"), st.tuples(st.integers(0, 3), st.integers(0, 2)),
                                  max_size=4))
    seats = "OPQRSTUVWXYZ" if name == "F11" else "RSTUVWXYZ"
    # Most bids on a few seats, with small amounts: clashes of every rule.
    seat = st.one_of(st.sampled_from(seats[-3:]), st.sampled_from(seats[-3:]), st.sampled_from(seats + "A"))
    amount = st.integers(0, 3).flatmap(lambda k: st.integers(1, 8) if k else st.integers(-1, 24))
    bid = st.builds(lambda s, a, first: f"BID {s} {a}" if first else f"/bid {a} {s}", seat, amount, st.booleans())
    other = st.one_of(
        st.builds(lambda k: f"BUY {k}", st.integers(0, 3)),
        st.just("BOARD"), st.sampled_from(["SET BOARD MAIL OFF", "SET BOARD MAIL ON"]),
        st.builds(lambda p: f"EC {p}", st.sampled_from(players)),
        st.builds(lambda p: f"GIVE TOL {p}", st.sampled_from(players)),
        st.builds(lambda s, g, p: f"SET PRIZE {s} {g} {p}", st.sampled_from(seats), st.integers(0, 3),
                  st.integers(0, 2)),
        st.just("BID Z 2.5"),
    )
    # The GM's EJECT and REPLACE (a player sending them is refused).
    roster = st.one_of(st.builds(lambda p: f"EJECT {p}", st.sampled_from(players + SUBSTITUTES)),
                       st.builds(lambda p, n: f"REPLACE {p} {n}", st.sampled_from(players + SUBSTITUTES),
                                 st.sampled_from(SUBSTITUTES)))
    end_game = st.one_of(st.builds(lambda p: f"EC {p}", st.sampled_from(players)),
                         st.builds(lambda p: f"GIVE TOL {p}", st.sampled_from(players)))
    line = st.integers(0, 11).flatmap(lambda k: bid if k < 6 else end_game if k < 8 else other if k < 10 else roster)
    actor = st.integers(0, 9).flatmap(lambda k: st.sampled_from(players + SUBSTITUTES[:k % 2]) if k else st.just(GM))
    ticks = st.sampled_from([None] * 6 + ["next", "next", "half", "far"])
    pregame = draw(st.lists(st.tuples(st.sampled_from([0.5, 3, 7]), actor, line, ticks), max_size=6))
    auction = draw(st.lists(st.tuples(st.sampled_from([0, 0, 0.5, 1, 2, 3, 5, 13]), actor, line, ticks),
                            min_size=10, max_size=80))
    return name, players, tweaks, garnets, priority, prizes, pregame, auction


def _fair(state, player, bid: Bid) -> str | None:
    """The four rules written out again, plainly, from the state the bid met:
    the rule it breaks first, or None."""
    if state.won_seat(bid.seat) is not None:
        return "1"
    current = state.standing_on(bid.seat)
    if current is not None and current.player == player:
        return "1"
    if bid.amount is None or bid.amount < 1 or (current is not None and bid.amount <= current.amount):
        return "2"
    if sum(s.amount for s in state.standing if s.player == player) + bid.amount > state.player(player).chips:
        return "3"
    if bid.amount in {s.amount for s in state.standing} | {w.amount for w in state.won}:
        return "4"
    return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_random_games_keep_the_rules_and_the_bank_and_replay_to_the_same_state(game):
    name, players, tweaks, garnets, priority, prizes, pregame, auction = game
    g = Game(name, players=players, garnets=garnets, priority=priority, prizes=prizes, **tweaks)
    at = -g.settings.pregame_hours
    steps = [(dt, *rest, False) for dt, *rest in pregame] + [(dt, *rest, k == 0) for k, (dt, *rest) in
                                                            enumerate(auction)]
    for dt, actor, text, extra_tick, opening in steps:
        at = max(at, 0.0) + dt if opening else at + dt
        # The daemon ticks when it likes: at the next timer, half-way, or
        # much later; the game must not care (Game.tick checks every state).
        nt = next_tick(g.state)
        if extra_tick == "next" and nt is not None and nt <= at + 40:
            g.tick(nt)
            at = max(at, nt)
        elif extra_tick == "half":
            g.tick(at - dt / 2 if at - dt / 2 >= g.state.clock else at)
        elif extra_tick == "far":
            at += 30
            g.tick(at)
        g.tick(at)
        before = g.state
        command = parse_line(text)
        events = g.send(actor, text, at)  # Game.send checks every invariant of the new state
        mine = [e for e in events if isinstance(e, Rejected) and e.at == at and e.command == command]
        if isinstance(command, Bid) and actor is not GM and before.phase == engine.AUCTION \
                and command.seat in before.settings.board and before.is_in(actor):
            rule = _fair(before, actor, command)
            if rule is not None:
                assert [e.rule for e in mine] == [rule]
            else:
                fee = before.settings.bid_fee if at > before.settings.fee_after_hours else 0
                if fee and before.player(actor).garnets < fee:
                    assert [e.rule for e in mine] == ["garnet"]
                else:
                    assert not mine and g.state.standing_on(command.seat).amount == command.amount
        if mine:
            assert g.state == before  # a rejected command changes nothing
    for e in g.events:
        event(type(e).__name__ + (":" + e.rule if isinstance(e, Rejected) else ""))
    event("phase " + g.state.phase)
    end = max(g.state.clock, 0.0) + 5
    g.tick(end)
    r = run(g.replay_data(until=end))
    assert r.state == g.state
    # And run out to the end, both ways.
    g.run_out()
    assert run(g.replay_data(until=g.state.clock)).state == g.state
