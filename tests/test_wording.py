"""Texts read well (issue 11): plurals made right, "Re:" once."""

from __future__ import annotations

from judge.wording import plural, reply_subject, were


def test_plurals_and_verbs():
    assert plural(1, "line") == "1 line" and plural(0, "line") == "0 lines" and plural(2, "line") == "2 lines"
    assert plural(1, "more player") == "1 more player" and plural(3, "more player") == "3 more players"
    assert plural(2, "child", "children") == "2 children"
    assert were(1) == "was" and were(2) == "were"


def test_a_reply_says_re_once(harness):
    h = harness
    h.mail("someone@example.test", "LIST", subject="Re: my game")
    assert h.last_to("someone@example.test")["Subject"] == "Re: my game"
    h.mail("someone@example.test", "LIST", subject="RE: again")
    assert h.last_to("someone@example.test")["Subject"] == "RE: again"
    h.mail("someone@example.test", "LIST", subject="commands")
    assert h.last_to("someone@example.test")["Subject"] == "Re: commands"
    assert reply_subject("") == "Re: your commands"


def test_one_reason_one_line(harness):
    h = harness
    h.mail("gm@example.test", "CREATE ?g gmpw")
    h.mail("p@example.test", "SIGNON ?g pw\nSIGNOFF\nLIST")
    body = " ".join(h.body(h.last_to("p@example.test")).split())
    assert "1 line after this point was not read" in body and "(s)" not in body
    h.mail("gm@example.test", "SIGNON Mg gmpw\nSET D 1")
    for i in range(1, 7):
        h.mail(f"p{i}@example.test", "SIGNON ?g pw")
    h.mail("gm@example.test", "SIGNON Mg gmpw\nSTART")
    assert "D = 1 point on every power" in " ".join(h.body(h.last_to("p@example.test")).split())
