"""Quoted mail ran as commands, and lines not read were echoed with their
passwords (issue 25). Each test failed on the code before the fix.

1. A reply that quotes the judge's mail without ">" (Outlook's header of
   the original, an HTML <blockquote>) ran the mail's example, `SIGNON
   ?spring yourpassword`, as a wrong password: three such replies locked
   the player out, and their next real mail was refused.
2. The lines after SIGNOFF, after a signature "-- " and after a refused
   SIGNON were quoted in the reply (and so kept in the outbox row) as they
   stood, passwords and all."""

from __future__ import annotations

from sqlalchemy import select

from judge.store.models import OutboxMessage, Player
from tests.harness import make_mail

ANNA = "anna@players.test"
PASSWORD = "anna-Secret-7"
EXAMPLE = ("Send your list, best first, for example:\n\nSIGNON ?spring yourpassword\n"
           "SET PREFERENCE AEFGIRT\nSIGNOFF\n")


def _game(h) -> None:
    h.mail("gm@example.test", "CREATE ?spring gm-pw preference standard\nSET MANUAL START")
    h.mail(ANNA, f"SIGNON ?spring {PASSWORD}")


def _html_mail(html: str) -> bytes:
    raw = make_mail(ANNA, "x")
    head = raw.split(b"\n\n", 1)[0].replace(b"Content-Type: text/plain; charset=\"utf-8\"",
                                            b"Content-Type: text/html; charset=\"utf-8\"")
    return head + b"\n\n" + html.encode()


def test_three_replies_quoting_the_example_do_not_lock_the_player(harness):
    h = harness
    _game(h)
    outlook = ("LIST ?spring\n\nFrom: Judge <judge@example.test>\nSent: Monday, March 2, 2026 1:00 PM\n"
               "To: Anna <anna@players.test>\nSubject: ?spring: reminder\n\n" + EXAMPLE)
    owa = "LIST ?spring\n________________________________\nFrom: Judge <judge@example.test>\nSent: x\n\n" + EXAMPLE
    h.mail(ANNA, outlook)
    h.mail(ANNA, owa)
    h.inbox.add(_html_mail("<div>LIST ?spring</div><div class=gmail_quote><div>On Mon, Mar 2, 2026 Judge wrote:</div>"
                           "<blockquote class=gmail_quote>" + EXAMPLE.replace("\n", "<br>") + "</blockquote></div>"))
    h.run()
    with h.judge.sessions() as s:
        anna = s.scalars(select(Player).where(Player.address == ANNA)).one()
        assert (anna.failures, anna.locked) == (0, False)
    h.mail(ANNA, f"SIGNON ?spring {PASSWORD}\nSET PREFERENCE EFG")
    assert "preference list for ?spring: England, then France, then Germany" in h.body(h.last_to(ANNA))
    assert not any("wrong password" in str(m["Subject"]).lower() for m in h.sent_to("gm@example.test"))


def test_no_password_is_echoed_from_lines_that_were_not_read(harness):
    h = harness
    _game(h)
    mails = [f"LIST ?spring\nSIGNOFF\nSIGNON ?spring {PASSWORD}",
             f"LIST ?spring\n-- \nAnna\nSIGNON ?spring {PASSWORD}",
             f"SIGNON ?sprng {PASSWORD}\nSIGNON ?spring {PASSWORD}\nLIST"]
    for body in mails:
        h.mail(ANNA, body)
        reply = h.body(h.last_to(ANNA))
        assert PASSWORD not in reply, reply
        assert "not read" in reply and "not quoted here" in reply, reply
    with h.judge.sessions() as s:
        assert not any(PASSWORD.encode() in row.raw for row in s.scalars(select(OutboxMessage)))
