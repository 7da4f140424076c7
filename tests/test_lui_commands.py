"""grammars/lui.lark through judge/methods/lui/commands.py: lines that must
parse, into what, and lines refused with their column and expectation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.methods.lui.commands import (
    Bid,
    Buy,
    ChooseEc,
    GiveTol,
    LuiSyntaxError,
    SetBoardMail,
    SetPrize,
    SetSetting,
    ShowBoard,
    parse_line,
    parse_setting,
    parse_lines,
)
from judge.syntax.errors import CommandSyntaxError

PARSED = [
    ("BID Z 5", Bid(seat="Z", amount=5, written="5")),  # F8's order
    ("BID 5 Z", Bid(seat="Z", amount=5, written="5")),  # F11's order
    ("bid z 5", Bid(seat="Z", amount=5, written="5")),
    ("/bid 12 o", Bid(seat="O", amount=12, written="12")),  # the bot's slash command
    ("/ BID Z5", Bid(seat="Z", amount=5, written="5")),
    ("BID 5Z", Bid(seat="Z", amount=5, written="5")),
    ("  BID\tY  007", Bid(seat="Y", amount=7, written="007")),
    ("BID Z +3", Bid(seat="Z", amount=3, written="+3")),
    ("BID Z -3", Bid(seat="Z", amount=-3, written="-3")),  # rule 2 refuses it, with its numbers
    ("BID Z 2.5", Bid(seat="Z", amount=None, written="2.5")),  # likewise
    ("BUY", Buy(count=1)),
    ("/buy", Buy(count=1)),
    ("buy 3", Buy(count=3)),
    ("BOARD", ShowBoard()),
    ("/board", ShowBoard()),
    ("EC ann", ChooseEc(name="ann")),
    ("EC bid", ChooseEc(name="bid")),  # a name may be a keyword
    ("GIVE TOL reds", GiveTol(name="reds")),
    ("give tol Crawron", GiveTol(name="Crawron")),  # names are kept as written
    ("SET BOARD MAIL OFF", SetBoardMail(on=False)),
    ("set board mail on", SetBoardMail(on=True)),
    ("SET PRIZE Z 3 1", SetPrize(seat="Z", garnets=3, priority=1)),
    ("set prize o 0 2", SetPrize(seat="O", garnets=0, priority=2)),
]


@pytest.mark.parametrize("line,command", PARSED, ids=[p[0] for p in PARSED])
def test_a_command_parses(line, command):
    assert parse_line(line) == command


REFUSED = [
    # (line, column, what was expected)
    ("BID ZZ 5", 6, "a number of chips"),
    ("BID Z", 6, "a number of chips"),
    ("BID 5 5", 7, "a seat's letter"),
    ("BID", 4, "a number of chips or a seat's letter"),
    ("BID Z 5 6", 9, "the end of the line"),
    ("hello", 1, "a command (BID, BUY, BOARD"),
    ("BUY -1", 5, "a whole number"),
    ("BUY 2.5", 6, "the end of the line"),
    ("EC", 3, "a player's name"),
    ("GIVE reds", 6, "TOL"),
    ("SET BOARD MAIL maybe", 16, "ON or OFF"),
    ("SET PRIZE Z 3", 14, "a whole number"),
    ("SET PRIZE 3 Z 1", 11, "a seat's letter"),
    ("BID Z \x1b5", 7, "visible text"),
]


@pytest.mark.parametrize("line,column,expected", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_bad_line_names_its_column_and_what_was_expected(line, column, expected):
    with pytest.raises(LuiSyntaxError) as info:
        parse_line(line, 4)
    err = info.value
    assert isinstance(err, CommandSyntaxError)
    assert (err.line, err.column) == (4, column)
    assert expected in err.expected
    shown = err.render().splitlines()
    assert shown[1].index("^") == len("line 4: ") + column - 1


def test_a_flood_is_refused_before_the_grammar_reads_it():
    with pytest.raises(LuiSyntaxError, match="at most 1000"):
        parse_line("BID Z " + "9" * 2000)


def test_lines_of_a_mail_in_order_with_their_numbers():
    out = parse_lines("BID Z 5\n\nBUY 2\nnonsense\n/bid 3 y\n")
    assert [k for k, _ in out] == [1, 3, 4, 5]
    assert out[0][1] == Bid(seat="Z", amount=5, written="5") and out[0][1].line == 1
    assert isinstance(out[2][1], LuiSyntaxError) and out[2][1].line == 4
    assert out[3][1].line == 5


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_any_line_parses_or_is_refused_never_anything_else(text):
    try:
        parse_line(text)
    except LuiSyntaxError:
        pass


@settings(max_examples=200)
@given(st.sampled_from("OPQRSTUVWXYZ"), st.integers(0, 10**6), st.booleans(), st.booleans())
def test_both_orders_mean_the_same_bid(seat, amount, seat_first, slash):
    words = [seat.lower(), str(amount)] if seat_first else [str(amount), seat]
    line = ("/" if slash else "") + "bid " + " ".join(words)
    assert parse_line(line) == Bid(seat=seat, amount=amount, written=str(amount))


# The GM's settings (issue 26, point 7): read by the grammar, so a number is a number.


@pytest.mark.parametrize("line, command", [
    ("SET PRESET f8", SetSetting("preset", "F8")),
    ("SET PLAYERS 9", SetSetting("players", 9)),
    ("SET CHIPS 20", SetSetting("starting_chips", 20)),
    ("SET CHIP PRICE 2", SetSetting("chip_price", 2)),
    ("SET TIMER 24.5", SetSetting("timer_hours", 24.5)),
    ("SET EC DEADLINE 6", SetSetting("ec_hours", 6.0)),
    ("SET GIFT DEADLINE 12", SetSetting("gift_hours", 12.0)),
    ("SET GARNETS ann 2", SetSetting("garnets", 2, "ann")),
    ("SET PRIORITY ann@example.test -3", SetSetting("priority", -3, "ann@example.test")),
    ("SET PRIZE z 3 1", SetPrize("Z", 3, 1)),
])
def test_the_gms_settings_parse(line, command):
    assert parse_setting(line) == command


@pytest.mark.parametrize("line, column", [
    ("SET PLAYERS ²", 13), ("SET CHIPS ²", 11), ("SET PRIZE Z ² 1", 13), ("SET GARNETS ann ²", 17),
    ("SET CHIP PRICE ٣", 16), ("SET TIMER ²", 11),
])
def test_a_number_that_int_would_choke_on_is_a_syntax_error(line, column):
    """"²".isdigit() is true and int("²") raises: SET PLAYERS ², SET CHIPS ²
    and SET PRIZE Z ² 1 crashed the mail (issue 26, point 7). The grammar
    takes ASCII digits only and names the column."""
    with pytest.raises(LuiSyntaxError) as err:
        parse_setting(line)
    assert err.value.column == column and "expected a" in err.value.render()


def test_a_setting_is_no_command_of_a_running_game():
    """The settings have a grammar of their own: in a running game the GM's
    SET TIMER 12 is no command the engine takes (live.py answers that the
    settings are fixed), nor a line of a replay log."""
    with pytest.raises(LuiSyntaxError):
        parse_line("SET TIMER 12")
    assert parse_setting("SET PRIZE Z 3 1") == parse_line("SET PRIZE Z 3 1") == SetPrize("Z", 3, 1)
