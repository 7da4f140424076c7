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


@pytest.mark.xfail(strict=True, reason="LUI's judge/methods/lui/live.py _setting reads its SET lines with "
                                       "isdigit()/int() itself; it is to read them with commands.parse_setting, "
                                       "which refuses them: the next step, in live.py")
def test_a_lui_gms_set_players_is_refused_and_the_mail_runs(harness):
    h = harness
    h.mail(GM, "CREATE ?spl gmpw lui\nSET PLAYERS ²\nSET CHIPS ²\nSET PRIZE Z ² 1\nLIST ?spl")
    reply = h.body(h.last_to(GM))
    assert "internal error" not in reply and reply.count("expected a whole number") == 3
