"""A replacement's seat claimed by a forged SIGNON (issue 9).

The attack: after `REPLACE old new@x.org`, the first `SIGNON ?game anything`
from new@x.org set the seat's password, so whoever forged that From first
took the seat. Now REPLACE mails the replacement a one-time token (only its
hash is stored); only `SIGNON ?game TOKEN` signs on, the reply asks for a
password of their own, and any other password is a wrong one, counted by
the lockout.
"""

from __future__ import annotations

import re

from sqlalchemy import select

from judge import passwords
from judge.games import find_game
from judge.store.models import InboundMessage, Event, OutboxMessage, Submission

GM = "gm@example.test"
NEW = "new@example.test"


def _replaced(h) -> None:
    """A started 7-player auction whose p6 the master replaced."""
    h.mail(GM, "CREATE ?g gmpw\nSET DEADLINE +24h")
    for i in range(7):
        h.send(f"p{i}@example.test", "SIGNON ?g pw")
    h.run()
    h.mail(GM, f"SIGNON Mg gmpw\nSTART\nREPLACE p6@example.test with Nina New <{NEW}>")


def _token(h) -> str:
    """The token of the replacement's invitation."""
    reply = h.body(h.last_to(GM))
    assert f"replaced by {NEW} (Nina New), who was mailed a one-time token" in reply
    invitation = h.body(h.sent_to_kind(NEW, "token")[0])
    token = re.search(r"^SIGNON \?g (\S+)$", invitation, re.M).group(1)
    from judge.commands.eml_eject import TOKEN_ALPHABET, TOKEN_LENGTH

    assert len(token) == TOKEN_LENGTH and set(token) <= set(TOKEN_ALPHABET)
    assert "SET PASSWORD" in invitation and token not in reply
    return token


def _seat(h):
    with h.judge.sessions() as s:
        p = next(p for p in find_game(s, "g").players if p.address == NEW)
        s.expunge(p)
        return p


def test_replacement_seat_claimed_by_a_forged_signon(harness):
    h = harness
    _replaced(h)
    # The forger, first, from the new address: a wrong password, nothing done.
    h.mail(NEW, "SIGNON ?g forgerpw\nSET PASSWORD forgerpw\nNo Preference")
    reply = h.body(h.last_to(NEW))
    assert "wrong password for ?g" in reply and "Ignored: 2 lines" in reply
    with h.judge.sessions() as s:
        assert s.scalars(select(Submission)).all() == []
    token = _token(h)
    seat = _seat(h)
    assert seat.failures == 1 and seat.password_is_token and seat.password != token
    assert passwords.check_password(token, seat.password)  # its hash, not the token itself

    # The replacement, with the token (typed in any case): signed on, asked
    # to choose a password; once chosen, the token no longer works.
    h.mail(f"Nina <{NEW}>", f"SIGNON ?g {token.lower()}\nNo Preference")
    reply = h.body(h.last_to(NEW))
    assert "signed on to ?g as Nina, with the one-time token" in reply
    assert "Choose your own password now: send SET PASSWORD" in reply and "No Preference accepted" in reply
    assert "signed on to ?g as a replacement" in h.body(h.last_to(GM))
    assert _seat(h).failures == 0
    h.mail(NEW, f"SIGNON ?g {token}\nSET PASSWORD ninapw")
    assert "your password for ?g is set; the one-time token no longer works" in h.body(h.last_to(NEW))
    assert not _seat(h).password_is_token
    h.mail(NEW, f"SIGNON ?g {token}")
    assert "wrong password for ?g" in h.body(h.last_to(NEW))
    h.mail(NEW, "SIGNON ?g ninapw")
    assert "signed on to ?g as Nina" in h.body(h.last_to(NEW))

    # The token is in no stored text but the invitation itself.
    with h.judge.sessions() as s:
        assert token not in str([e.data for e in s.scalars(select(Event))])
        mails = [r.raw for r in s.scalars(select(OutboxMessage)) if token.encode() in r.raw]
    assert len(mails) == 1 and b"you are asked to join as a replacement" in mails[0]
    # Past the raw-mail retention, not even there (nor in the raw mails that
    # signed on with it).
    h.clock.advance(days=h.config.raw_mail_retention_days + 1)
    h.run()
    with h.judge.sessions() as s:
        stored = [r.raw for r in s.scalars(select(OutboxMessage))] + [r.raw for r in s.scalars(select(InboundMessage))]
    assert not [r for r in stored if token.encode() in r.upper()]


def test_replacement_token_guesses_are_counted_by_the_lockout(harness):
    h = harness
    _replaced(h)
    token = _token(h)
    for i in range(3):
        h.mail(NEW, f"SIGNON ?g guess{i}")
    h.mail(NEW, f"SIGNON ?g {token}")
    assert "this one was not checked" in h.body(h.last_to(NEW))
    told = [h.body(m) for m in h.sent_to_kind(GM, "notice") if "wrong passwords" in str(m["Subject"])]
    assert len(told) == 1 and f"the password of Nina New <{NEW}>" in told[0]
