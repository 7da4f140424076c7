"""compose() and make_message_id(): the judge's own mails."""

from __future__ import annotations

import email
import email.policy
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage

import pytest

from judge.mail.inbound import parse_message
from judge.mail.outbound import compose, make_message_id

WHEN = datetime(2026, 3, 3, 14, 5, tzinfo=timezone(timedelta(hours=1)))
BODY = "Grüße aus Wien!\nÖsterreich bietet 40 — Ελλάδα 3, 日本 1\n\n.a line starting with a dot\n"


def build(**overrides: object) -> bytes:
    args: dict[str, object] = dict(
        sender="judge@judge.example.org",
        sender_name="Diplomacy Judge",
        to=["anna@example.com", "bob@example.net"],
        subject="Re: bids für alpha",
        body=BODY,
        message_id=make_message_id("judge.example.org", "outbox-42"),
        date=WHEN,
        in_reply_to="<CAB12345.abc@mail.example.com>",
        references=["<root@mail.example.com>"],
        extra_headers={"X-Judge-Game": "alpha"},
    )
    args.update(overrides)
    return compose(**args)  # type: ignore[arg-type]


def parse(raw: bytes) -> EmailMessage:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def content(msg: EmailMessage) -> str:
    # The email package hands back the wire's CRLF line ends untouched.
    return msg.get_content().replace("\r\n", "\n")


def test_composed_mail_parses_back_with_all_headers() -> None:
    msg = parse(build())
    assert msg["From"].addresses[0].addr_spec == "judge@judge.example.org"
    assert msg["From"].addresses[0].display_name == "Diplomacy Judge"
    assert [a.addr_spec for a in msg["To"].addresses] == ["anna@example.com", "bob@example.net"]
    assert msg["Subject"] == "Re: bids für alpha"
    assert msg["Date"].datetime == WHEN
    assert msg["Message-ID"] == "<judge.outbox-42@judge.example.org>"
    assert msg["In-Reply-To"] == "<CAB12345.abc@mail.example.com>"
    assert msg["References"].split() == ["<root@mail.example.com>", "<CAB12345.abc@mail.example.com>"]
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["X-Judge-Game"] == "alpha"
    assert msg.get("Precedence") is None
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "utf-8"


def test_utf8_body_round_trips() -> None:
    raw = build()
    assert raw.isascii()  # 7-bit clean on the wire: no 8BITMIME needed
    assert content(parse(raw)) == BODY


def test_long_ascii_lines_round_trip() -> None:
    body = "Austria " + "9" * 200 + "\nEngland 30\n"
    assert content(parse(build(body=body))) == body


def test_body_gets_a_final_newline() -> None:
    assert content(parse(build(body="Austria 1"))) == "Austria 1\n"


def test_line_endings_are_crlf_only() -> None:
    raw = build(body="one\ntwo\r\nthree\rfour")
    assert raw.count(b"\n") == raw.count(b"\r\n")
    assert b"\r\r" not in raw


def test_no_in_reply_to_or_references_when_not_given() -> None:
    msg = parse(build(in_reply_to=None, references=()))
    assert msg.get("In-Reply-To") is None
    assert msg.get("References") is None


def test_in_reply_to_alone_starts_references() -> None:
    msg = parse(build(references=()))
    assert msg["References"] == "<CAB12345.abc@mail.example.com>"


def test_long_and_unusable_parent_ids() -> None:
    long_id = "<" + "x" * 150 + "@mail.example.com>"
    raw = build(in_reply_to=long_id, references=["<bad id>", "<ok@x>"])
    msg = parse(raw)
    # Kept verbatim (never RFC 2047-encoded, which would break threading) ...
    assert msg["In-Reply-To"] == long_id
    assert b"In-Reply-To: " + long_id.encode() + b"\r\n" in raw
    # ... and an id that is not one is dropped instead of failing the reply.
    assert msg["References"].split() == ["<ok@x>", long_id]


def test_parse_message_sees_our_mail_as_auto() -> None:
    raw = build()
    result = parse_message(raw)
    assert result.auto is not None and "auto-generated" in result.auto
    assert result.message_id == "<judge.outbox-42@judge.example.org>"
    assert result.sender == "judge@judge.example.org"
    assert result.subject == "Re: bids für alpha"
    assert result.text == BODY
    assert result.problems == ()


def test_header_injection_through_subject_is_neutralised() -> None:
    msg = parse(build(subject="hello\r\nBcc: victim@example.org"))
    assert msg.get("Bcc") is None
    assert msg["Subject"] == "hello Bcc: victim@example.org"


def test_extra_headers_cannot_remove_the_loop_guard() -> None:
    with pytest.raises(ValueError):
        build(extra_headers={"Auto-Submitted": "no"})
    with pytest.raises(ValueError):
        build(extra_headers={"Bad Name": "x"})


@pytest.mark.parametrize(
    "overrides",
    [
        {"to": []},
        {"to": ["not an address"]},
        {"sender": "judge"},
        {"date": datetime(2026, 1, 1)},  # naive
        {"message_id": "no-brackets@x"},
    ],
)
def test_bad_input_is_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        build(**overrides)


def test_make_message_id_is_deterministic_and_safe() -> None:
    assert make_message_id("judge.example.org", "outbox-42") == "<judge.outbox-42@judge.example.org>"
    assert make_message_id("Judge.Example.ORG.", "outbox-42") == "<judge.outbox-42@judge.example.org>"
    assert make_message_id("x.org", "a.b") == "<judge.a.b@x.org>"
    odd = make_message_id("x.org", "a/b c<d>@é..")
    assert odd == make_message_id("x.org", "a/b c<d>@é..")
    inner = odd[1:-1]
    assert inner.count("@") == 1 and " " not in inner and "<" not in inner and ".." not in inner
    assert not inner.split("@")[0].endswith(".")


def test_make_message_id_keeps_distinct_tokens_distinct() -> None:
    tokens = ["a/b", "a=2Fb", "ab", "a b", "a.b", "a..b", "a.", "é", "=C3=A9"]
    ids = {make_message_id("x.org", token) for token in tokens}
    assert len(ids) == len(tokens)


@pytest.mark.parametrize(("domain", "token"), [("", "t"), ("bad domain", "t"), ("x@y", "t"), ("x.org", "")])
def test_make_message_id_refuses_bad_input(domain: str, token: str) -> None:
    with pytest.raises(ValueError):
        make_message_id(domain, token)


def test_composed_message_id_usable_in_compose() -> None:
    message_id = make_message_id("x.org", "row 7/ä")
    assert parse(build(message_id=message_id))["Message-ID"] == message_id
