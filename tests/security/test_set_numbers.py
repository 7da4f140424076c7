"""SET lines whose number is no number (issue 26, point 7): "²".isdigit()
is true and int("²") raises. `SET PLAYERS ²` (and LUI's `SET CHIPS ²`,
`SET PRIZE Z ² 1`) crashed a LUI GM's mail, which was quarantined whole,
CREATE included. Each is a clear refusal naming the column, and the rest
of the mail runs."""

from __future__ import annotations

import pytest

from judge.games import find_game
from judge.methods.lui.commands import LuiSyntaxError, parse_line, parse_setting

GM = "gm@example.test"


@pytest.mark.parametrize("method", ["blind-auction", "preference", "payola", "pt3"])
def test_the_shells_set_players_refuses_it_and_the_mail_runs(harness, method):
    """The shell's grammar reads SET PLAYERS (eml_set.py and the methods'
    handlers): its COUNT takes no "²", so the line is refused with its
    column, and CREATE and LIST around it run."""
    h = harness
    h.mail(GM, f"CREATE ?sp gmpw {method} standard\nSET PLAYERS ²\nLIST ?sp")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply
    assert "column 13: expected a number of players" in reply and "Done: ?sp:" in reply
    with h.judge.sessions() as s:
        assert find_game(s, "sp") is not None


@pytest.mark.parametrize("line", ["SET PLAYERS ²", "SET CHIPS ²", "SET PRIZE Z ² 1", "SET GARNETS ann ²"])
def test_luis_grammar_refuses_them(line):
    with pytest.raises(LuiSyntaxError, match="expected a whole number"):
        parse_setting(line)
    if line.startswith("SET PRIZE"):  # also in a running game
        with pytest.raises(LuiSyntaxError, match="expected a whole number"):
            parse_line(line)


def test_a_lui_gms_set_players_is_refused_and_the_mail_runs(harness):
    """live.py reads the GM's SET lines with commands.parse_setting: each
    "²" is refused with its column, CREATE before and LIST after run."""
    h = harness
    h.mail(GM, "CREATE ?spl gmpw lui\nSET PLAYERS ²\nSET CHIPS ²\nSET PRIZE Z ² 1\nSET TIMER 1e9\nLIST ?spl")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply and reply.count("expected a whole number") == 3
    assert "line 2: SET PLAYERS ²" in reply and "line 4: SET PRIZE Z ² 1" in reply
    assert "column 13" in reply and "column 13" in reply.split("line 3:")[1]
    assert "?spl" in reply.split("LIST ?spl")[-1]
    with h.judge.sessions() as s:
        game = find_game(s, "spl")
        assert game is not None and "players" not in (game.params or {})


@pytest.mark.parametrize("line", ["SET GARNETS nobody 2", "SET PRIORITY nobody 3", "SET PRIORITY ghost@x.test -1"])
def test_a_lui_setting_for_a_player_not_signed_on_is_refused_and_the_mail_runs(harness, line):
    h = harness
    h.mail(GM, f"CREATE ?spn gmpw lui\n{line}\nSET CHIPS 30\nLIST ?spn")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply and "Traceback" not in reply
    who = line.split()[2]
    assert f"{who} is not a player of ?spn" in reply
    assert "starting chips 30" in reply
    with h.judge.sessions() as s:
        game = find_game(s, "spn")
        assert game.params.get("starting_chips") == 30 and not game.params.get("garnets")
        assert not game.params.get("priority")
