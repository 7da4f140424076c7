"""parse_message: what the judge reads out of a player's (or a robot's) mail."""

from __future__ import annotations

import base64
import hashlib
import quopri
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.mail.html2text import html_to_text
from judge.mail.inbound import InboundMail, parse_message


def mail(headers: str, body: bytes | str = "Austria 40\nEngland 30\n", *, crlf: bool = True) -> bytes:
    """A raw message from header lines (\\n separated) and a body."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    raw = headers.strip("\n").encode("utf-8") + b"\n\n" + body
    return raw.replace(b"\n", b"\r\n") if crlf else raw


ORDINARY = mail(
    """From: Anna Player <Anna.Player@Example.COM>
To: judge@judge.example.org
Subject: bids for game alpha
Date: Tue, 03 Mar 2026 14:05:00 +0100
Message-ID: <CAB12345.abc@mail.example.com>
In-Reply-To: <judge.outbox-7@judge.example.org>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 7bit"""
)


def assert_clean(result: InboundMail, raw: bytes) -> None:
    """Invariants every parse result keeps, whatever came in."""
    assert isinstance(result, InboundMail)
    assert result.size == len(raw)
    assert result.message_id.startswith("<") and result.message_id.endswith(">")
    for value in (result.message_id, result.sender_name, result.subject, result.text, *result.problems):
        value.encode("utf-8")  # no lone surrogates
        assert "\x00" not in value
    assert "\r" not in result.text
    assert "\n" not in result.subject and "\r" not in result.subject
    if result.sender is not None:
        assert result.sender == result.sender.lower() and "@" in result.sender
    assert result.date is None or result.date.tzinfo is not None


# ------------------------------------------------------------------ basic mail


def test_plain_mail_fields() -> None:
    result = parse_message(ORDINARY)
    assert result.message_id == "<CAB12345.abc@mail.example.com>"
    assert result.sender == "anna.player@example.com"
    assert result.sender_name == "Anna Player"
    assert result.reply_to == "anna.player@example.com"
    assert result.subject == "bids for game alpha"
    assert result.text == "Austria 40\nEngland 30\n"  # CRLF normalised
    assert result.auto is None
    assert result.in_reply_to == "<judge.outbox-7@judge.example.org>"
    assert result.date == datetime(2026, 3, 3, 13, 5, tzinfo=timezone.utc)
    assert result.date.utcoffset() == timedelta(hours=1)
    assert result.size == len(ORDINARY)
    assert result.problems == ()


def test_bare_lf_and_cr_line_endings_are_normalised() -> None:
    raw = b"From: a@example.com\nMessage-ID: <x@y>\n\nline one\rline two\r\nline three\n"
    assert parse_message(raw).text == "line one\nline two\nline three\n"


def test_sender_name_falls_back_to_local_part() -> None:
    raw = mail("From: <Bob@Example.org>\nMessage-ID: <1@x>")
    result = parse_message(raw)
    assert result.sender == "bob@example.org"
    assert result.sender_name == "bob"


def test_reply_to_used_when_valid_else_sender() -> None:
    good = parse_message(mail("From: a@example.com\nReply-To: Team <Team@Example.com>\nMessage-ID: <1@x>"))
    assert good.reply_to == "team@example.com"
    assert good.sender == "a@example.com"
    bad = parse_message(mail("From: a@example.com\nReply-To: not an address\nMessage-ID: <1@x>"))
    assert bad.reply_to == "a@example.com"


def test_missing_from_gives_no_sender() -> None:
    result = parse_message(mail("To: judge@example.org\nSubject: hi\nMessage-ID: <1@x>"))
    assert result.sender is None
    assert result.sender_name == ""
    assert result.reply_to is None
    assert "no From" in result.problems


def test_unusable_from_gives_no_sender() -> None:
    result = parse_message(mail("From: just some words\nMessage-ID: <1@x>"))
    assert result.sender is None
    assert result.reply_to is None


def test_missing_message_id_gets_stable_sha256_id() -> None:
    raw = mail("From: a@example.com\nSubject: no id")
    expected = "<" + hashlib.sha256(raw).hexdigest() + "@judge.invalid>"
    first, second = parse_message(raw), parse_message(raw)
    assert first.message_id == expected
    assert second.message_id == expected
    assert parse_message(raw + b"x").message_id != expected


def test_empty_message_id_gets_sha256_id() -> None:
    raw = mail("From: a@example.com\nMessage-ID:   ")
    assert parse_message(raw).message_id == "<" + hashlib.sha256(raw).hexdigest() + "@judge.invalid>"


def test_message_id_without_brackets_is_bracketed() -> None:
    assert parse_message(mail("From: a@example.com\nMessage-ID: abc@host")).message_id == "<abc@host>"


def test_oversized_message_id_is_treated_as_missing() -> None:
    raw = mail("From: a@example.com\nMessage-ID: <" + "x" * 2000 + "@y>")
    assert parse_message(raw).message_id == "<" + hashlib.sha256(raw).hexdigest() + "@judge.invalid>"


def test_dates() -> None:
    unknown_zone = parse_message(mail("From: a@b.org\nDate: Tue, 03 Mar 2026 14:05:00 -0000"))
    assert unknown_zone.date == datetime(2026, 3, 3, 14, 5, tzinfo=timezone.utc)
    assert parse_message(mail("From: a@b.org\nDate: the day after tomorrow")).date is None
    assert parse_message(mail("From: a@b.org")).date is None


# ----------------------------------------------------------------- MIME bodies


ALTERNATIVE = mail(
    """From: a@example.com
Message-ID: <alt@x>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="BB" """,
    """--BB
Content-Type: text/html; charset=utf-8

<html><body><p>HTML version</p></body></html>
--BB
Content-Type: text/plain; charset=utf-8

Plain version
--BB--
""",
)


def test_multipart_alternative_prefers_text_plain_even_after_html() -> None:
    assert parse_message(ALTERNATIVE).text == "Plain version"  # the CRLF before "--BB" belongs to the boundary


def test_html_only_mail_becomes_text_lines() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <h@x>\nMIME-Version: 1.0\nContent-Type: text/html; charset=utf-8",
        "<html><head><style>p {color: red}</style><title>Bids</title></head>"
        "<body><p>Austria 40<br>England 30</p><div>France&nbsp;&amp; Italy 10</div>"
        "<script>alert('x')</script></body></html>",
    )
    lines = parse_message(raw).text.splitlines()
    assert lines == ["Austria 40", "England 30", "France & Italy 10"]


def test_html_inside_multipart_used_when_no_plain_part() -> None:
    raw = mail(
        'From: a@example.com\nMessage-ID: <h2@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="Z"',
        "--Z\nContent-Type: text/html\n\n<div>Turkey 5</div><div>Russia 6</div>\n--Z--\n",
    )
    assert parse_message(raw).text.splitlines() == ["Turkey 5", "Russia 6"]


def test_text_attachment_is_not_the_body() -> None:
    raw = mail(
        'From: a@example.com\nMessage-ID: <att@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="M"',
        """--M
Content-Type: text/plain; charset=utf-8; name="old-orders.txt"
Content-Disposition: attachment; filename="old-orders.txt"

Germany 99
--M
Content-Type: text/plain; charset=utf-8
Content-Disposition: inline

Germany 12
--M--
""",
    )
    assert parse_message(raw).text == "Germany 12"


def test_attached_message_text_is_not_the_body() -> None:
    raw = mail(
        'From: a@example.com\nMessage-ID: <fw@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="M"',
        """--M
Content-Type: message/rfc822

From: other@example.com
Subject: forwarded

Forwarded text
--M
Content-Type: text/html

<p>My bid: Italy 3</p>
--M--
""",
    )
    assert parse_message(raw).text == "My bid: Italy 3"


def test_quoted_printable_body() -> None:
    body = "Österreich 40 — Ärger\nEngland 30 " + "x" * 90 + "\n"
    encoded = quopri.encodestring(body.encode("utf-8"))
    raw = mail(
        "From: a@example.com\nMessage-ID: <qp@x>\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable",
        encoded,
    )
    assert b"=C3=96" in encoded and b"=\n" in encoded  # really encoded, with a soft line break
    assert parse_message(raw).text == body


def test_base64_body() -> None:
    body = "Россия 25\nTürkiye 15\n"
    raw = mail(
        "From: a@example.com\nMessage-ID: <b64@x>\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64",
        base64.encodebytes(body.encode("utf-8")),
    )
    assert parse_message(raw).text == body


def test_latin1_body() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <l1@x>\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit",
        "Französisch 12 für Österreich\n".encode("latin-1"),
    )
    result = parse_message(raw)
    assert result.text == "Französisch 12 für Österreich\n"
    assert result.problems == ()


def test_unknown_charset_with_utf8_bytes() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <u1@x>\nContent-Type: text/plain; charset=x-unknown\n"
        "Content-Transfer-Encoding: 8bit",
        "Größe 7\n".encode("utf-8"),
    )
    result = parse_message(raw)
    assert result.text == "Größe 7\n"
    assert "undecodable charset x-unknown" in result.problems


def test_unknown_charset_with_latin1_bytes_falls_back_to_latin1() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <u2@x>\nContent-Type: text/plain; charset=x-unknown\n"
        "Content-Transfer-Encoding: 8bit",
        "Größe 7\n".encode("latin-1"),
    )
    assert parse_message(raw).text == "Größe 7\n"


def test_declared_utf8_with_broken_bytes_keeps_the_good_text() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <u3@x>\nContent-Type: text/plain; charset=utf-8\n"
        "Content-Transfer-Encoding: 8bit",
        "Größe 7\n".encode("utf-8") + b"bad \xff byte\n",
    )
    result = parse_message(raw)
    assert result.text == "Größe 7\nbad \ufffd byte\n"
    assert "broken charset utf-8" in result.problems


def test_non_text_codec_as_charset_is_not_used() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <u4@x>\nContent-Type: text/plain; charset=base64",
        "Austria 1\n",
    )
    assert parse_message(raw).text == "Austria 1\n"


def test_no_text_part_is_a_problem_not_an_error() -> None:
    raw = mail(
        "From: a@example.com\nMessage-ID: <img@x>\nContent-Type: image/png\nContent-Transfer-Encoding: base64",
        "iVBORw0KGgo=\n",
    )
    result = parse_message(raw)
    assert result.text == ""
    assert "no text part" in result.problems


# --------------------------------------------------------------------- headers


def test_rfc2047_subject_and_name() -> None:
    raw = mail(
        "From: =?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>\n"
        "Message-ID: <enc@x>\n"
        "Subject: =?iso-8859-1?q?Gebote_f=FCr?= =?utf-8?b?U3DDpHRzb21tZXI=?= 1901"
    )
    result = parse_message(raw)
    assert result.subject == "Gebote fürSpätsommer 1901"  # adjacent encoded words join without space
    assert result.sender_name == "Jürgen Müller"


def test_encoded_line_break_in_subject_is_flattened() -> None:
    raw = mail("From: a@example.com\nSubject: =?utf-8?q?line1=0D=0ABcc:_x@evil?=")
    assert parse_message(raw).subject == "line1 Bcc: x@evil"


def test_raw_8bit_utf8_headers() -> None:
    raw = (
        "From: Zoë Ådahl <zoe@example.se>\r\nSubject: Bud på Sverige\r\nMessage-ID: <8u@x>\r\n\r\nSweden 3\r\n"
    ).encode("utf-8")
    result = parse_message(raw)
    assert result.subject == "Bud på Sverige"
    assert result.sender_name == "Zoë Ådahl"
    assert result.sender == "zoe@example.se"


def test_raw_8bit_latin1_headers() -> None:
    raw = "From: Zoë <zoe@example.se>\r\nSubject: Bud på Sverige\r\nMessage-ID: <8l@x>\r\n\r\nx\r\n".encode(
        "latin-1"
    )
    result = parse_message(raw)
    assert result.subject == "Bud på Sverige"
    assert result.sender == "zoe@example.se"
    assert result.sender_name == "Zoë"


# -------------------------------------------------------- auto-reply detection


BASE_HEADERS = "From: Anna <anna@example.com>\nTo: judge@judge.example.org\nSubject: x\nMessage-ID: <a@x>"


@pytest.mark.parametrize(
    ("extra", "reason_part"),
    [
        ("Auto-Submitted: auto-replied", "auto-submitted: auto-replied"),
        ("Auto-Submitted: auto-generated; owner-email=x@y", "auto-submitted: auto-generated"),
        ("Precedence: bulk", "precedence: bulk"),
        ("Precedence: list", "precedence: list"),
        ("Precedence: Junk", "precedence: junk"),
        ("Return-Path: <>", "bounce (empty Return-Path)"),
        ("X-Autoreply: yes", "x-autoreply"),
        ("X-Autorespond: Out of office", "x-autorespond"),
        ("X-Auto-Response-Suppress: All", "x-auto-response-suppress: all"),
        ("X-Auto-Response-Suppress: DR, OOF, AutoReply", "x-auto-response-suppress: oof"),
        ("List-Id: Diplomacy players <dip.lists.example.org>", "mailing list (List-Id)"),
        ("List-Unsubscribe: <mailto:leave@lists.example.org>", "mailing list (List-Unsubscribe)"),
    ],
)
def test_auto_headers_mark_mail_as_auto(extra: str, reason_part: str) -> None:
    result = parse_message(mail(BASE_HEADERS + "\n" + extra))
    assert result.auto is not None
    assert reason_part in result.auto


@pytest.mark.parametrize(
    "from_header",
    ["MAILER-DAEMON@mx.example.com", "Mail Delivery System <MAILER-DAEMON@mx.example.com>", "MAILER-DAEMON",
     "postmaster@example.com"],
)
def test_bounce_senders(from_header: str) -> None:
    result = parse_message(mail(f"From: {from_header}\nSubject: Undelivered Mail\nMessage-ID: <b@x>"))
    assert result.auto is not None and result.auto.startswith("bounce (from ")


def test_multipart_report_is_a_bounce() -> None:
    raw = mail(
        "From: Mail System <system@mx.example.com>\nMessage-ID: <dsn@x>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="R"',
        "--R\nContent-Type: text/plain\n\nYour mail could not be delivered.\n"
        "--R\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.com\n\n"
        "Final-Recipient: rfc822; judge@example.org\nAction: failed\nStatus: 5.1.1\n--R--\n",
    )
    assert parse_message(raw).auto == "bounce (multipart/report)"


def test_mail_from_own_address_is_a_loop() -> None:
    raw = mail("From: The Judge <Judge@Judge.Example.org>\nMessage-ID: <own@x>")
    result = parse_message(raw, own_addresses=["judge@judge.example.org", "other@x.org"])
    assert result.auto is not None and "mail loop" in result.auto
    assert parse_message(raw, own_addresses=["Judge <JUDGE@judge.example.org>"]).auto is not None
    assert parse_message(raw, own_addresses=(a for a in ["someone@else.org"])).auto is None


@pytest.mark.parametrize(
    "extra", ["", "Auto-Submitted: no", "Precedence: first-class", "Return-Path: <anna@example.com>"]
)
def test_ordinary_mail_is_not_auto(extra: str) -> None:
    raw = mail(BASE_HEADERS + ("\n" + extra if extra else ""))
    result = parse_message(raw, own_addresses=["judge@judge.example.org"])
    assert result.auto is None


# ---------------------------------------------------------------- html_to_text


def test_html_to_text_spec_example() -> None:
    assert html_to_text("<p>Austria 40<br>England 30</p>").splitlines() == ["Austria 40", "England 30"]


def test_html_to_text_blocks_lists_tables_and_blank_runs() -> None:
    html = """
    <div>Bids:</div><div><br></div><div><br></div><div><br></div>
    <ul><li>France 20</li><li>Italy&#160;10</li></ul>
    <table><tr><td>Russia</td><td>5</td></tr><tr><th>Turkey</th><td>&lt;6&gt;</td></tr></table>
    <style>.x{}</style><script>var a = "<p>no</p>";</script>
    """
    assert html_to_text(html) == "Bids:\n\nFrance 20\nItaly 10\nRussia 5\nTurkey <6>"


def test_html_to_text_survives_broken_markup() -> None:
    assert html_to_text("<p>Germany 3<![if x]><div") .startswith("Germany 3")
    assert html_to_text("") == ""


# ------------------------------------------------------------------------ fuzz


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    assert_clean(parse_message(raw, own_addresses=["judge@example.org"]), raw)


SEEDS = [ORDINARY, ALTERNATIVE]


@st.composite
def mutated_mail(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["flip", "insert", "delete", "splice"]))
        pos = draw(st.integers(0, len(data)))
        if action == "flip" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        elif action == "insert":
            data[pos:pos] = draw(
                st.sampled_from(
                    [b"\x00", b"\xff\xfe", b"=?", b"?=", b"=?utf-8?b?", b"\r\n", b"\n\n", b"<", b">", b"--BB",
                     b"Content-Type: multipart/mixed; boundary=", b"charset=", b"\r\n\t", b"\xc3", b"=\r\n"]
                )
            )
        elif action == "delete":
            end = min(len(data), pos + draw(st.integers(1, 40)))
            del data[pos:end]
        else:
            data[pos:pos] = draw(st.binary(max_size=60))
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_mail())
def test_never_raises_on_mutated_real_mail(raw: bytes) -> None:
    assert_clean(parse_message(raw), raw)


HEADER_NAMES = ["From", "Reply-To", "Subject", "Message-ID", "Date", "Content-Type", "Content-Transfer-Encoding",
                "Auto-Submitted", "Return-Path", "In-Reply-To", "Content-Disposition", "X-Auto-Response-Suppress"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(HEADER_NAMES), st.binary(max_size=80)),
        max_size=8,
    ),
    st.binary(max_size=300),
)
def test_never_raises_on_hostile_header_values(headers: list[tuple[str, bytes]], body: bytes) -> None:
    raw = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers) + b"\r\n" + body
    assert_clean(parse_message(raw), raw)
