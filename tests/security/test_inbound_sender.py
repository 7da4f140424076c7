"""Forged senders (issue 9 review): the judge acts as whoever parse_message()
names the sender, so the sender must be the one addr-spec of the one From
header, read as RFC 5322 writes it. Before the fix an encoded word was
decoded before the address was parsed (RFC 2047 section 5 forbids it), a
lenient fallback took an address out of a display name, and a mail with two
From headers (RFC 7489 section 6.6.1) or a list in From was read as the
first address. Each test failed on that code."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from judge.mail.inbound import from_address, parse_message
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import JUDGE, Harness

VICTIM = "victim@v.org"


def mail(*from_values: str, extra: str = "") -> bytes:
    head = "".join(f"From: {value}\r\n" for value in from_values)
    return (head + f"To: {JUDGE}\r\nSubject: orders\r\nMessage-ID: <m1@x.org>\r\n{extra}"
            "Content-Type: text/plain; charset=utf-8\r\n\r\nLIST\r\n").encode("utf-8")


def test_encoded_word_in_from_does_not_forge_the_sender() -> None:
    result = parse_message(mail("=?utf-8?q?victim@v.org=0A?= <p3@x.org>"))
    assert result.sender == "p3@x.org"
    assert result.reply_to == "p3@x.org"


@pytest.mark.parametrize("value", [
    "=?utf-8?q?victim=40v.org?=",                     # an encoded addr-spec on its own
    "=?utf-8?b?dmljdGltQHYub3Jn?=",                   # the same in base64
    "=?utf-8?q?victim=40v.org?= =?utf-8?q?x?=",
])
def test_encoded_word_is_never_an_address(value: str) -> None:
    result = parse_message(mail(value))
    assert result.sender is None
    assert result.problems and any("From" in problem for problem in result.problems)


def test_encoded_word_in_the_local_part_stays_literal() -> None:
    # RFC 2047 section 5: no encoded word in an addr-spec; so it is not one.
    assert parse_message(mail("<=?utf-8?q?victim?=@v.org>")).sender == "=?utf-8?q?victim?=@v.org"
    assert parse_message(mail("=?utf-8?q?victim?=@v.org")).sender == "=?utf-8?q?victim?=@v.org"


@pytest.mark.parametrize("value", [
    "victim@v.org <p3@x.org>",
    '"victim@v.org" <p3@x.org>',
    "victim@v.org\r\n <p3@x.org>",
    "Victim <victim@v.org>\r\n <p3@x.org>",   # the second angle-addr: not a mailbox at all
])
def test_display_name_address_is_not_the_sender(value: str) -> None:
    result = parse_message(mail(value))
    assert result.sender != VICTIM
    assert result.sender in ("p3@x.org", None)  # a display name is shown, never read as the address


@pytest.mark.parametrize("value", ["(victim@v.org) p3@x.org", "p3@x.org (victim@v.org)",
                                   "Name (victim@v.org) <p3@x.org>", "<p3@x.org> (victim@v.org)"])
def test_comment_address_is_not_the_sender(value: str) -> None:
    assert parse_message(mail(value)).sender == "p3@x.org"


@pytest.mark.parametrize("value", ["Name <victim@v.org", "victim@v.org>", "<<victim@v.org", "junk victim@v.org",
                                   "victim@v.org junk", "Name <victim@v.org> junk", "Name <p3@x.org> victim@v.org",
                                   "victim@v.org@x.org", "\"victim@v.org", "(victim@v.org"])
def test_no_lenient_last_resort_for_from(value: str) -> None:
    # The old code fell back to "anything shaped like an address".
    result = parse_message(mail(value))
    assert result.sender is None
    assert any(problem.startswith("From is not an address") for problem in result.problems), result.problems


def test_two_from_headers_refused() -> None:
    result = parse_message(mail("p3@x.org", VICTIM))
    assert result.sender is None and result.sender_name == ""
    assert "several From headers" in result.problems
    # Both orders, and the same address twice too.
    assert parse_message(mail(VICTIM, "p3@x.org")).sender is None
    assert parse_message(mail("p3@x.org", "p3@x.org")).sender is None


@pytest.mark.parametrize(("value", "problem"), [
    ("p3@x.org, victim@v.org", "From holds 2 addresses"),
    ("Player <p3@x.org>, Victim <victim@v.org>", "From holds 2 addresses"),
    ("a@x.org, b@x.org, c@x.org", "From holds 3 addresses"),
    ("Team: p3@x.org, victim@v.org;", "From holds 2 addresses"),
    ("Team: p3@x.org;, victim@v.org", "From holds 2 addresses"),
    ("Player, Anna <p3@x.org>", "From is not an address: a name without an address"),
])
def test_from_with_two_addresses_refused(value: str, problem: str) -> None:
    result = parse_message(mail(value))
    assert result.sender is None
    assert problem in result.problems


@pytest.mark.parametrize("value", ["undisclosed-recipients:;", "Team: ;", " ", ""])
def test_from_with_no_address_refused(value: str) -> None:
    result = parse_message(mail(value))
    assert result.sender is None
    assert "From holds no address" in result.problems


def test_no_from_header() -> None:
    result = parse_message(b"To: judge@example.test\r\nMessage-ID: <m@x>\r\n\r\nLIST\r\n")
    assert result.sender is None and "no From" in result.problems


@pytest.mark.parametrize(("value", "sender", "name"), [
    ("Anna Player <Anna.Player@Example.COM>", "anna.player@example.com", "Anna Player"),
    ("=?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>", "jm@example.de", "Jürgen Müller"),
    ('"Player, Anna" <anna@example.com>', "anna@example.com", "Player, Anna"),
    ("anna@example.com (Anna Player)", "anna@example.com", "anna"),
    ("Team: anna@example.com;", "anna@example.com", "anna"),       # RFC 6854: a group of one
    ("Team: ;, anna@example.com", "anna@example.com", "anna"),
    ("<@relay.example:anna@example.com>", "anna@example.com", "anna"),  # obsolete route
    ('"anna"@example.com', "anna@example.com", "anna"),
    ("a..b@docomo.example", "a..b@docomo.example", "a..b"),
    ("anna@[192.0.2.1]", "anna@[192.0.2.1]", "anna"),
])
def test_ordinary_from_shapes_still_name_their_sender(value: str, sender: str, name: str) -> None:
    result = parse_message(mail(value))
    assert (result.sender, result.sender_name) == (sender, name)


def test_an_address_the_judge_cannot_answer_is_no_sender() -> None:
    """RFC 6532 addresses (8-bit characters) need SMTPUTF8, which the judge
    does not speak: a fuzzed `From: \xcdx@b.test` once became a sender no
    reply could be written to, and held up all mail (bench/attack_corpus.py).
    Such a mail names no sender: it is kept and not run."""
    result = parse_message(mail("Zoë <zoë@exämple.se>"))
    assert result.sender is None and "no usable From" in result.problems


def test_from_address_never_raises_and_is_linear_on_junk() -> None:
    for value in ["(" * 5000, "\\" * 5000, '"' * 5001, "<" * 5000, "a@" * 5000, ",;:" * 3000, "\x00", "\udce4@x"]:
        address, problem = from_address(value)
        assert address is None or problem is None


def test_forged_from_is_quarantined_without_a_reply(tmp_path) -> None:
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.inbox.add(mail("p3@x.org", VICTIM))
    h.inbox.add(mail("p3@x.org, victim@v.org").replace(b"<m1@", b"<m2@"))
    h.run()
    with h.judge.sessions() as s:
        rows = list(s.scalars(select(InboundMessage)))
        assert len(rows) == 2
        assert {(r.status, r.sender) for r in rows} == {("quarantined", None)}
        assert list(s.scalars(select(OutboxMessage))) == []
    assert h.sent() == []
    h.close()


@pytest.mark.parametrize("value", [
    "=?utf-8?q?victim=40example.test?= <attacker@evil.test>",   # the issue's: an encoded address as the name
    '"victim@example.test" <attacker@evil.test>',
    "victim@example.test <attacker@evil.test>",
    '"Victim <victim@example.test>" <attacker@evil.test>',
])
def test_a_display_name_that_is_an_address_is_no_name(value: str) -> None:
    """Issue 25: such a name was shown in LIST as "victim@example.test", as
    if the victim had joined; a name that is an address is not a name."""
    result = parse_message(mail(value))
    assert (result.sender, result.sender_name) == ("attacker@evil.test", "attacker")


def test_list_never_shows_another_address_as_a_players_name(tmp_path) -> None:
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        h.mail("gm@example.test", "CREATE ?g gmpw preference standard")
        h.inbox.add(mail("=?utf-8?q?victim=40example.test?= <attacker@evil.test>").replace(
            b"LIST", b"SIGNON ?g attackpw\r\nLIST ?g"))
        h.run()
        reply = h.body(h.last_to("attacker@evil.test"))
        assert "joined ?g as attacker" in reply, reply
        assert "victim@example.test" not in reply, reply
    finally:
        h.close()
