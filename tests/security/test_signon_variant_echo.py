"""A password of two words echoed half in clear (issue 11).

When SIGNON learnt nJudge's `SIGNON ?game password VARIANT`, the line
`SIGNON ?g my secret` parsed as password "my" and variant "secret": the
reply quoted it as `SIGNON ?g **** secret` and refused "the variant
secret", so the second word of the password went out in clear (to a forum
topic, on a forum). Now a word after the password is a variant only if the
judge knows such a variant; otherwise the line is a password of two words,
refused and masked whole, in the reply and in the game's log.
"""

from __future__ import annotations

from sqlalchemy import select

from judge.store.models import Event

GM = "gm@example.test"
ANN = "ann@example.test"


def test_the_second_word_of_a_password_is_never_echoed(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw blind-auction")
    h.mail(ANN, "SIGNON ?g my hunter2secret\nLIST ?g")
    reply = h.body(h.last_to(ANN))
    assert "hunter2secret" not in reply
    assert "A password is one word" in reply
    with h.judge.sessions() as s:
        # Every event kept (the game's log and the mail's), and the stored subject lines.
        assert "hunter2secret" not in str([e.data for e in s.scalars(select(Event))])
    # A real variant after the password is read as one, and shown: it is no secret.
    h.mail(ANN, "SIGNON ?g annpw standard")
    reply = h.body(h.last_to(ANN))
    assert "> SIGNON ?g **** standard" in reply and "annpw" not in reply


def test_a_blind_game_is_no_oracle_of_who_plays_which_letter(harness):
    """SIGNON Xgame in a blind game gets one answer whatever the letter:
    neither "nobody plays X" nor a request mailed to the master tells a
    stranger anything about the powers' holders."""
    h = harness
    h.mail(GM, "CREATE ?bg gmpw blind-random\nSET THIRDPARTY tp@example.test")
    for p in range(7):
        h.mail(f"p{p}@example.test", "SIGNON ?bg pw")
    h.mail(GM, "SIGNON Mbg gmpw\nSTART")
    before = len(h.sent_to(GM))
    answers = set()
    for letter in "AEFGIRTZ":
        h.mail("eve@example.test", f"SIGNON {letter}bg evepw")
        answers.add(h.body(h.last_to("eve@example.test")).split("\n", 3)[3])
    assert len(answers) == 1
    assert len(h.sent_to(GM)) == before  # no request reached the master either
