"""The PT3 engine (judge/methods/pt3/engine.py), the grammar of its mail
lines (grammars/pt3.lark) and the replay of a log (replay.py): every rule
of docs/pt3.md "By mail"."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from judge.methods.pt3 import engine as E
from judge.methods.pt3.commands import Pt3SyntaxError, claims, parse_line
from judge.methods.pt3.persist import from_json, to_json
from judge.methods.pt3.replay import ReplayError, replay

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def game(x="10", o="10", **kw) -> E.State:
    return E.new_game(E.params_from({"balance_x": x, "balance_o": o, **kw}, 2), ("xa", "ob"), T0)


def send(state: E.State, side: str, line: str, hours: float = 1) -> tuple[E.State, tuple[E.Event, ...]]:
    return E.apply(state, side, parse_line(line), at(hours))


def rejected(state: E.State, side: str, line: str, reason: str, hours: float = 1) -> E.Rejected:
    after, events = send(state, side, line, hours)
    assert after == state, "a refused command changed the state"
    (e,) = events
    assert isinstance(e, E.Rejected) and e.reason == reason, events
    return e


def season(state: E.State, x_line: str | None, o_line: str | None, hours: float = 1) -> E.State:
    for side, line in (("X", x_line), ("O", o_line)):
        if line is not None:
            state, _ = send(state, side, line, hours)
    return state


# --------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------

def test_the_higher_bid_places_the_seasons_mark_on_its_square_and_only_the_winner_pays():
    s = game("10", "10")
    s, events = send(s, "X", "BID 3.25 B2")
    assert s.board == "." * 9 and [type(e) for e in events] == [E.BidTaken]  # sealed: nothing yet
    s, events = send(s, "O", "BID 3.24 A1")
    assert s.board == "....X...." and s.balances == (Decimal("6.75"), Decimal("10"))
    (resolved,) = [e.season for e in events if isinstance(e, E.SeasonResolved)]
    assert (resolved.winner, resolved.bid, resolved.mark, resolved.by_deadline) == ("X", Decimal("3.25"), "X", False)
    # Season 2 places O's mark, wherever the winner of the bid chooses.
    s = season(s, "BID 5 C3", "BID 4 A1", hours=2)
    assert s.board == "....X...O" and s.balances == (Decimal("1.75"), Decimal("10"))
    assert s.season == 3 and s.mark == "X"


def test_a_tie_goes_to_o_which_may_place_x_where_it_harms_x_least():
    s = season(game(), "BID 2 B2", "BID 2.00 A2")
    assert s.board == ".X......." and s.balances == (Decimal("10"), Decimal("8"))
    assert s.seasons[0].winner == "O"


def test_a_bid_is_replaced_until_the_season_resolves():
    s, _ = send(game(), "X", "BID 1 A1")
    s, (taken,) = send(s, "X", "BID B2 2")
    assert taken.replaced.amount == Decimal("1") and taken.replaced.square == 0
    s = season(s, None, "BID 1.5 C3")
    assert s.board == "....X...." and s.balances == (Decimal("8"), Decimal("10"))


@pytest.mark.parametrize("line,reason,data", [
    ("BID 10.01 B2", "over_balance", {"amount": Decimal("10.01"), "balance": Decimal("10")}),
    ("BID 1.005 B2", "too_many_places", {"places": 2}),
    ("BID -1 B2", "negative", {}),
    ("BID 1 A1", "occupied", {"square": 0}),
])
def test_a_bid_is_refused_at_once_with_its_reason(line, reason, data):
    s = season(game(), "BID 1 A1", "BID 0 C3")
    e = rejected(s, "O", line, reason)
    for k, v in data.items():
        assert getattr(e, k) == v


def test_the_gm_may_allow_more_decimal_places():
    s, _ = send(game(places=4), "X", "BID 1.0005 B2")
    assert s.bid_of("X").amount == Decimal("1.0005")
    rejected(game(places=0), "X", "BID 1.5 B2", "too_many_places")
    s, _ = send(game(places=0), "X", "BID 1.00 B2")  # trailing zeros are no places
    assert s.bid_of("X") is not None


def test_money_is_exact_at_the_largest_balance_and_a_huge_bid_is_refused_not_a_crash():
    top = "999999999999.999999"
    s = season(game(top, top, places=6), "BID 0.000001 B2", "BID 0 A1")
    assert s.balances[0] == Decimal("999999999999.999998")
    e = rejected(s, "O", "BID " + "9" * 40 + " A1", "over_balance", hours=2)
    assert E.money(e.amount, 6) == "9" * 40 and E.money(Decimal("3.5"), 2) == "3.50"


def test_a_bid_of_the_whole_balance_is_taken_and_leaves_nothing():
    s = season(game("4.5", "10"), "BID 4.50 B2", "BID 4.49 A1")
    assert s.balances == (Decimal("0.00"), Decimal("10"))
    rejected(s, "X", "BID 0.01 A1", "over_balance", hours=2)


def test_the_deadline_counts_a_missing_bid_as_none_and_any_bid_beats_it():
    s, _ = send(game(season_hours=24), "O", "BID 0 C3")
    assert E.next_tick(s) == at(24)
    s, events = E.tick(s, at(23.9))
    assert events == () and s.board == "." * 9
    s, events = E.tick(s, at(30))  # late: fired with its own time
    (resolved,) = [e.season for e in events]
    assert resolved.at == at(24) and resolved.by_deadline and resolved.missing == ("X",)
    assert s.board == "........X" and s.balances == (Decimal("10"), Decimal("10"))  # O paid its 0
    assert E.next_tick(s) == at(48)


def test_with_no_bid_from_either_the_mark_goes_on_the_first_empty_square_free():
    s = season(game(), "BID 1 A1", "BID 0 C3")
    s, events = E.tick(s, at(100))  # two deadlines pass: both fire, each at its own time
    assert [e.season.at for e in events] == [at(49), at(97)]
    assert s.board == "XOX......" and s.balances == (Decimal("9"), Decimal("10"))
    assert [x.winner for x in s.seasons[1:]] == [None, None]


def test_a_command_after_a_deadline_fires_the_deadline_first():
    s, _ = send(game(season_hours=10), "X", "BID 1 A1")
    s, events = send(s, "O", "BID 2 B2", hours=11)  # season 1 closed at 10 h without O's bid
    assert [type(e) for e in events] == [E.SeasonResolved, E.BidTaken]
    assert s.board == "X........" and s.season == 2 and s.bid_of("O").square == 4


def test_x_wins_with_a_line_and_the_game_ends():
    s = game("100", "100")
    for k, (x, o) in enumerate([("BID 9 A1", "BID 1 B1"), ("BID 0 B1", "BID 5 C3"), ("BID 9 A2", "BID 1 B2"),
                                ("BID 0 B2", "BID 5 C2")]):
        s = season(s, x, o, hours=k + 1)
    assert s.board == "XX.....OO" and not s.over
    s, events = send(s, "X", "BID 20 A3", hours=6)
    s, events = send(s, "O", "BID 19 C1", hours=6)
    assert s.over and s.winner == "X" and s.line == (0, 1, 2) and s.deadline is None
    assert isinstance(events[-1], E.GameOver) and events[-1].winner == "X"
    assert E.next_tick(s) is None and E.tick(s, at(1000)) == (s, ())
    rejected(s, "O", "BID 1 B3", "over", hours=7)


def test_three_o_end_nothing_and_a_full_board_without_x_line_is_os_win():
    s = game("100", "100")
    # O wins every bid (ties), so O places every mark: X's where no line forms.
    plan = ["A1", "A2", "B1", "B3", "C2", "B2", "A3", "C1", "C3"]  # X O X O X O X O X
    for k, sq in enumerate(plan):
        s = season(s, "BID 0 " + sq, "BID 0 " + sq, hours=k + 1)
        if k < 8:
            assert not s.over
    assert s.board == "XOXXOOOXX" and s.seasons[-1].number == 9
    assert E.x_line(s.board) is None and s.over and s.winner == "O" and s.line is None


def test_o_line_ends_nothing():
    s = game("100", "100")
    # O places O on A1, A2, A3 (seasons 2, 4, 6); X elsewhere, no X line.
    for k, (x, o) in enumerate([("BID 1 C1", "BID 0 C1"), ("BID 0 A1", "BID 1 A1"), ("BID 1 B3", "BID 0 B3"),
                                ("BID 0 A2", "BID 1 A2"), ("BID 1 C2", "BID 0 C2"), ("BID 0 A3", "BID 1 A3")]):
        s = season(s, x, o, hours=k + 1)
    assert s.board == "OOO..XXX."
    assert not s.over and s.season == 7


def test_gm_settings_during_the_game_and_advice():
    s = game()
    rejected(s, "X", "ADVICE", "advice_off")
    rejected(s, "X", "SET ADVICE ON", "gm_only")
    rejected(s, E.GM, "BID 1 A1", "not_gm")
    s, (changed,) = send(s, E.GM, "SET ADVICE ON")
    assert changed.what == "advice" and s.advice
    _, (asked,) = send(s, "O", "ADVICE")
    assert isinstance(asked, E.AdviceAsked) and asked.side == "O"
    s, _ = send(s, E.GM, "SET SEASON 5")
    assert s.deadline == at(48)  # this season's deadline stays
    s = season(s, "BID 1 A1", "BID 0 B1", hours=2)
    assert s.deadline == at(2 + 5)


def test_params_are_checked_and_round_trip():
    p = E.params_from({"balance_x": "58.04", "balance_o": "100", "places": 2, "season_hours": 24}, 2)
    assert E.params_from(p.as_dict(), 2) == p
    for bad, says in [({"balance_x": "1.001"}, "more than 2 decimal places"), ({"balance_o": "-1"}, "negative"),
                      ({"places": 9}, "places must be"), ({"season_hours": 0}, "1..1440 hours"),
                      ({"balance_x": "ten"}, "not an amount"), ({"colour": 1}, "unknown settings"),
                      ({"balance_o": "1000000000000"}, "less than 1000000000000")]:
        with pytest.raises(E.ParamError, match=says):
            E.params_from(bad, 2)
    assert E.check_params(2, E.params_from({"balance_x": "0"}, 2)) == ["X's balance is 0: X can only bid 0"]


def test_the_state_round_trips_through_json():
    s, _ = send(season(game("58.04", "100"), "BID 3.25 B2", "BID 1 A1"), "O", "BID 2 C3", hours=2)
    assert from_json(to_json(s)) == s
    import json

    assert from_json(json.loads(json.dumps(to_json(s)))) == s


# --------------------------------------------------------------------------
# The grammar
# --------------------------------------------------------------------------

@pytest.mark.parametrize("line,square,written", [
    ("BID 3.25 B2", 4, "3.25"), ("bid b2 3.25", 4, "3.25"), ("BID 3 5", 4, "3"), ("BID 0 C3", 8, "0"),
    ("BID .5 9", 8, ".5"), ("BID 7 1", 0, "7"), ("  BID   2   a3 ", 2, "2"),
])
def test_bid_lines(line, square, written):
    bid = parse_line(line)
    assert isinstance(bid, E.Bid) and (bid.square, bid.written) == (square, written)


@pytest.mark.parametrize("line,column,expected", [
    ("BID 3.25 D2", 10, "a square (A1..C3, or 1..9)"),
    ("BID 3.25", 9, "a square (A1..C3, or 1..9)"),
    ("BID 3 0", 7, "a square"),
    ("BID 3 10", 7, "a square"),
    ("BID B2", 7, "an amount (like 3.25)"),
    ("BID 5 B2 now", 10, "the end of the line"),
    ("BID 3,25 B2", 6, "a square"),
    ("SET SEASON soon", 12, "a whole number"),
    ("SET ADVICE maybe", 12, "ON or OFF"),
    ("SET BALANCE Z 5", 13, "X or O"),
    ("ADVICE please", 8, "the end of the line"),
])
def test_a_line_the_grammar_refuses_names_line_column_and_what_was_expected(line, column, expected):
    with pytest.raises(Pt3SyntaxError) as err:
        parse_line(line, 4)
    e = err.value
    assert (e.line, e.column) == (4, column) and expected in e.expected
    text = e.render()
    assert text.splitlines()[1].index("^") == len("line 4: ") + column - 1
    if line.startswith("BID"):
        assert "BID 3.25 B2" in text  # what to send


def test_the_method_claims_its_own_words_only():
    assert claims("BID 3 B2") and claims("advice") and claims("SET BALANCE X 5") and claims("set x ann")
    assert not claims("SET DEADLINE 2026-03-01") and not claims("SIGNON ?g pw") and not claims("SET PASSWORD x")


# --------------------------------------------------------------------------
# The replay of a log
# --------------------------------------------------------------------------

LOG = {
    "method": "pt3", "players": {"X": "xa", "O": "ob"}, "balances": {"X": "10", "O": "10"},
    "season_hours": 24, "start": T0.isoformat(),
    "events": [
        {"at": at(1).isoformat(), "by": "X", "text": "BID 3.25 B2"},
        {"at": at(2).isoformat(), "by": "X", "text": "BID 11 B2"},
        {"at": at(3).isoformat(), "by": "O", "text": "BID 3.24 A1"},
        {"at": at(4).isoformat(), "by": "X", "text": "BID 0 C3"},
    ],
    "until": at(40).isoformat(),
}


def test_the_replay_gives_the_engines_state_with_deadlines_in_between():
    out = replay(LOG)
    s = season(game(season_hours=24), "BID 3.25 B2", "BID 3.24 A1", hours=3)
    s, _ = send(s, "X", "BID 0 C3", hours=4)
    s, _ = E.tick(s, at(40))
    assert out["board"] == s.board == "....X...O"  # season 2 closed at 3 + 24 h: X's 0 on C3 beat no bid
    assert out["balances"] == {"X": "6.75", "O": "10"} and out["season"] == 3
    assert [x["outcome"] for x in out["log"]] == ["done", "not done (over_balance)", "done", "done"]
    assert out["seasons"][1]["at"] == at(27).isoformat() and out["seasons"][1]["by_deadline"]


@pytest.mark.parametrize("change,says", [
    ({"colour": "red"}, "unknown key colour"),
    ({"players": {"X": "a"}}, "players must be"),
    ({"start": "yesterday"}, "start"),
    ({"start": "2026-03-01T12:00:00"}, "no time zone"),
    ({"events": [{"at": at(1).isoformat(), "by": "Z", "text": "BID 1 A1"}]}, "by must be"),
    ({"events": [{"at": at(1).isoformat(), "by": "X", "text": "BID one A1"}]}, "events[0]"),
    ({"events": [{"at": at(2).isoformat(), "by": "X", "text": "BID 1 A1"},
                 {"at": at(1).isoformat(), "by": "O", "text": "BID 1 A1"}]}, "time order"),
])
def test_a_bad_log_is_refused_naming_the_field(change, says):
    with pytest.raises(ReplayError, match=says.replace("[", r"\[").replace("]", r"\]")):
        replay({**LOG, **change})
