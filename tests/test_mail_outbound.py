"""compose() and make_message_id(): the judge's own mails."""

from __future__ import annotations

import email
import email.policy
import quopri
from datetime import UTC, datetime, timedelta, timezone
from email import quoprimime
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.mail.inbound import parse_message
from judge.mail.outbound import (
    _addr_spec,
    _compose_email_message,
    _qp_encode,
    compose,
    make_message_id,
)

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


# --- The fast path against the EmailMessage reference -------------------------
#
# compose() writes the usual reply (no attachments) directly; the reference,
# _compose_email_message(), builds an EmailMessage as compose() used to. The
# contract: the same headers and the same text after parsing. Today the bytes
# are even identical (anything the fast path cannot write exactly is folded by
# the same header registry, and both paths use _qp_encode(), which is checked
# against email.quoprimime below).

_NON_ASCII = "äöüßéñ—€Ελλάδα日本😀\u00a0\u2028"
_CONTROLS = "\r\n\t\x00\x0b\x1b\x7f\x85"
_ASCII = "abcXYZ019 .,;:!?'\"()<>[]@=_-\\/+*#$%&~`^{|}"
_ATEXT = "abcxyz019!#$%&'*+/=?^_`{|}~-"


def _text(alphabet: str, max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, max_size=max_size)


subjects = st.one_of(
    _text(_ASCII, 40),
    _text(_ASCII + _NON_ASCII, 60),
    _text(_ASCII + _NON_ASCII + _CONTROLS, 300),
    st.sampled_from(["", "Re: bench 1", "Re: bids für alpha", "=?utf-8?q?abc?=", "Re: =?x?= y", "x" * 69, "x" * 70]),
    st.integers(60, 1200).map(lambda n: "Re: " + "long" * (n // 4)),
    st.integers(60, 400).map(lambda n: "Befehle für Frühjahr " * (n // 20)),
)
display_names = st.one_of(
    st.just(""),
    _text("Judge Diplomacy", 20),
    _text(_ASCII + _NON_ASCII + _CONTROLS, 40),
    st.sampled_from(['Judge "Chief"', "Judge, The", "J. Smith", "Jürgen", "=?utf-8?q?x?=", "x" * 90]),
)
_simple_addresses = st.builds(
    lambda local, domain: f"{local}@{domain}.example",
    st.text(alphabet=_ATEXT, min_size=1, max_size=30),
    st.text(alphabet="abcxyz019-", min_size=1, max_size=30),
)
_odd_addresses = st.sampled_from([
    "anna@example.com", " bob@example.net ", "a.b+c@mail.example.co.uk", '"a b"@example.com', '"ab"@example.com',
    "a=?b@x.org", "x@bücher.example", "a(comment)@x.org",
    "very.long.local.part.for.testing.folding." * 2 + "x@a-rather-long-domain.example.com",
])
addresses = st.one_of(
    _simple_addresses,
    _odd_addresses,
    st.sampled_from([  # refused
        "jörg@example.de", "not an address", "a@b@c", "a..b@x.org", ".a@x.org", "a@", "@x.org", "",
        "=?utf-8?q?a?=@x.org",
    ]),
    _text(_ATEXT + "@.\" ()<>,;:\\[]é ", 40),
)
_usable_ids = st.builds(
    lambda left, right: f"<{left}@{right}>",
    st.text("abc.019-_+$", min_size=1, max_size=30), st.text("abc.example", min_size=1, max_size=20),
)
_ids = st.one_of(
    _usable_ids,
    st.sampled_from(["<root@mail.example.com>", "<bad id>", "no-brackets@x", "", "<" + "x" * 150 + "@x.org>",
                     "<" + "y" * 898 + ">", "<" + "z" * 899 + ">"]),
)
_lines = st.one_of(
    _text(_ASCII, 80),
    _text(_ASCII + _NON_ASCII + "\t\x0c", 100),
    st.sampled_from(["From the judge", ".", ". ", "..", "trailing spaces   ", "tab\t", " ", "=", "a=b=c"]),
    st.builds(lambda n, c, tail: c * n + tail, st.integers(70, 1100), st.sampled_from(["x", "ü", "=", " x"]),
              st.sampled_from(["", " ", "\t", "=", "ü"])),
)
bodies = st.builds(
    lambda lines, separator, end: separator.join(lines) + end,
    st.lists(_lines, max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from(["", "\n", "\r\n", "\r", "\n\n"]),
)
_aware_dates = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30)),
                               timezone(timedelta(hours=14)), timezone(timedelta(hours=1, seconds=30))]),
)
_usable_dates = st.one_of(st.just(WHEN), st.just(datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)), _aware_dates)
dates = st.one_of(_usable_dates, st.just(datetime(2026, 1, 1)))  # naive: refused
_reply_to = st.one_of(
    _simple_addresses, _odd_addresses, st.builds(lambda n, a: f"{n} <{a}>", display_names, _simple_addresses),
)
_usable_extra_headers = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={
        "X-Judge-Game": subjects, "X-Judge-Kind": subjects, "Keywords": subjects, "Reply-To": _reply_to,
        "Resent-To": _reply_to, "x-long-header-name-" + "n" * 50: subjects,
    }),
)
extra_headers = st.one_of(
    st.none(),
    st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["X-Judge-Game", "X-Judge-Kind", "x-long-header-name-" + "n" * 60, "Keywords",
                                 "Auto-Submitted", "subject", "Bad Name", "Bad:Name", ""]),
                subjects,
            ),
            # Structured headers, folded by the header registry on both paths.
            # (Given text that is no address at all, such as a 1000-character
            # word, the registry writes lines over 998 octets: not checked.)
            st.tuples(
                st.sampled_from(["Reply-To", "reply-to", "Resent-To", "Sender"]),
                st.one_of(addresses, st.builds(lambda n, a: f"{n} <{a}>", display_names, addresses)),
            ),
        ),
        max_size=3,
    ).map(dict),
)


def _outcome(function, **kwargs):  # type: ignore[no-untyped-def]
    try:
        return function(**kwargs)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error)


def _parse(raw: bytes) -> EmailMessage:
    msg = BytesParser(policy=email.policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    return msg


def _assert_equivalent(fast: bytes, reference: bytes) -> None:
    parsed_fast, parsed_reference = _parse(fast), _parse(reference)
    assert parsed_fast.keys() == parsed_reference.keys()
    for (name, value), (_, expected) in zip(parsed_fast.items(), parsed_reference.items()):
        assert str(value) == str(expected), name
    assert parsed_fast.get_content() == parsed_reference.get_content()


def _check_against_reference(**args: object) -> None:
    fast = _outcome(compose, **args)
    reference = _outcome(_compose_email_message, **args)
    if not isinstance(reference, bytes):
        assert fast is reference  # the same exception type
        return
    assert isinstance(fast, bytes)
    _assert_equivalent(fast, reference)

    # Wire format: 7-bit, CRLF only, no line over RFC 5322's 998 octets.
    assert fast.isascii()
    assert fast.endswith(b"\r\n")
    lines = fast.split(b"\r\n")[:-1]
    assert all(b"\r" not in line and b"\n" not in line and len(line) <= 998 for line in lines)

    head, _, payload = fast.partition(b"\r\n\r\n")
    if b"Content-Transfer-Encoding: 7bit" in head:
        assert all(len(line) <= 78 for line in payload.split(b"\r\n"))
    else:
        assert all(len(line) <= 76 for line in payload.split(b"\r\n"))  # RFC 2045
    # The text itself, not just the same as the reference's.
    text = str(args["body"]).replace("\r\n", "\n").replace("\r", "\n")
    assert _parse(fast).get_content().replace("\r\n", "\n") == (text if text.endswith("\n") else text + "\n")
    assert fast == reference


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sender_name=display_names,
    to=st.lists(st.one_of(_simple_addresses, _odd_addresses), min_size=1, max_size=3),
    subject=subjects,
    body=bodies,
    message_id=st.one_of(st.just(make_message_id("judge.example.org", "outbox-42")), _usable_ids),
    date=_usable_dates,
    in_reply_to=st.one_of(st.none(), _ids),  # unusable parent ids are dropped, not refused
    references=st.lists(_ids, max_size=4),
    extra=_usable_extra_headers,
)
def test_fast_path_matches_the_email_message_reference(
    sender_name: str, to: list[str], subject: str, body: str, message_id: str, date: datetime,
    in_reply_to: str | None, references: list[str], extra: dict[str, str] | None,
) -> None:
    _check_against_reference(
        sender="judge@judge.example.org", sender_name=sender_name, to=to, subject=subject, body=body,
        message_id=message_id, date=date, in_reply_to=in_reply_to, references=references, extra_headers=extra,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sender=st.one_of(st.just("judge@judge.example.org"), addresses),
    sender_name=display_names,
    to=st.lists(addresses, min_size=1, max_size=3),
    subject=subjects,
    body=bodies,
    message_id=_ids,
    date=dates,
    in_reply_to=st.one_of(st.none(), _ids),
    references=st.lists(_ids, max_size=4),
    extra=extra_headers,
)
def test_refused_input_is_refused_as_by_the_reference(
    sender: str, sender_name: str, to: list[str], subject: str, body: str, message_id: str, date: datetime,
    in_reply_to: str | None, references: list[str], extra: dict[str, str] | None,
) -> None:
    _check_against_reference(
        sender=sender, sender_name=sender_name, to=to, subject=subject, body=body, message_id=message_id,
        date=date, in_reply_to=in_reply_to, references=references, extra_headers=extra,
    )


def test_typical_reply_is_byte_identical_to_the_reference() -> None:
    args: dict[str, object] = {
        "sender": "judge@example.test", "sender_name": "Judge", "to": ["player1@example.test"],
        "subject": "Re: bench 1", "body": "Austria: A Vie-Bud accepted.\n" * 50,
        "message_id": make_message_id("example.test", "abc"), "date": WHEN,
        "in_reply_to": "<CAB12345.abc@mail.example.com>", "references": ["<CAB12345.abc@mail.example.com>"],
        "extra_headers": {"X-Judge-Game": "alpha"},
    }
    assert compose(**args) == _compose_email_message(**args)  # type: ignore[arg-type]
    args.update({
        "sender_name": 'Jürgen "the Judge"', "subject": "Re: Befehle für Frühjahr 1901 " * 4, "body": BODY,
        "extra_headers": {"X-Judge-Game": "älpha", "Reply-To": "Spielleitung <gm@example.test>"},
    })
    assert compose(**args) == _compose_email_message(**args)  # type: ignore[arg-type]


_attachment_lists = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(["record.json", "spring-board.png", "a", "x" * 34, "x" * 35, "résumé.pdf",
                                   "a b.txt", "", "-x", 'q"uote.json']),
                  _text("abcXYZ019._-", 20)),
        st.one_of(st.binary(max_size=300), st.sampled_from([b"", b"x" * 57, b"y" * 58, b"--" + b"=" * 15])),
        st.sampled_from(["application/json", "image/png", "text/plain", "application/octet-stream",
                         "application/" + "x" * 70, "Image/PNG", "message/rfc822"]),
    ),
    min_size=1, max_size=3,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sender_name=display_names,
    subject=subjects,
    body=st.one_of(bodies, st.sampled_from(["--===============", "x\n--===============123==\n"])),
    message_id=st.one_of(st.just(make_message_id("judge.example.org", "outbox-42")), _usable_ids),
    attachments=_attachment_lists,
    extra=_usable_extra_headers,
)
def test_mails_with_attachments_are_the_email_message_references_bytes(
    sender_name: str, subject: str, body: str, message_id: str, attachments: list, extra: dict[str, str] | None,
) -> None:
    """A result mail with its record, a board mail with its picture: written
    directly (each attachment encoded once, kept for the next mail that
    carries it), the same bytes as the EmailMessage build, the multipart
    boundary included (both take it from the Message-ID)."""
    args = {"sender": "judge@judge.example.org", "sender_name": sender_name, "to": ["anna@example.com"],
            "subject": subject, "body": body, "message_id": message_id, "date": WHEN, "extra_headers": extra,
            "attachments": attachments}
    fast, reference = _outcome(compose, **args), _outcome(_compose_email_message, **args)
    assert fast == reference
    if isinstance(fast, bytes) and all(kind.startswith(("application/", "image/")) for _, _, kind in attachments):
        msg = _parse(fast)
        assert [(p.get_filename(), p.get_payload(decode=True)) for p in msg.iter_attachments()] == \
            [(name, data) for name, data, _ in attachments]


def test_an_attachment_is_encoded_once_for_every_mail_that_carries_it() -> None:
    from judge.mail import outbound

    picture = bytes(range(256)) * 400  # a board picture of 100 KB
    outbound._attachment_part.cache_clear()
    mails = [build(to=[f"p{i}@example.com"], message_id=make_message_id("example.test", f"m{i}"),
                   attachments=[("spring-board.png", picture, "image/png")]) for i in range(9)]
    info = outbound._attachment_part.cache_info()
    assert (info.misses, info.hits) == (1, 8)
    assert all(parse(raw).get_payload()[1].get_content() == picture for raw in mails)


def test_attachments_take_the_email_message_path() -> None:
    attachment = ("resolution.json", b'{"winner": "anna"}', "application/json")
    raw = build(attachments=[attachment])
    msg = parse(raw)
    assert msg.is_multipart()
    parts = list(msg.iter_attachments())
    assert [p.get_filename() for p in parts] == ["resolution.json"]
    assert parts[0].get_content() == b'{"winner": "anna"}'
    assert content(msg.get_body(("plain",))) == BODY  # type: ignore[arg-type]
    assert msg["Auto-Submitted"] == "auto-generated"
    # Quoted-printable within RFC 2045's 76 characters here too.
    body = "Grüße " * 40 + "\n" + "x" * 100 + " \n"
    raw = build(attachments=[attachment], body=body)
    encoded = raw.split(b"Content-Transfer-Encoding: quoted-printable\r\n\r\n", 1)[1]
    encoded = encoded.split(b"\r\n--", 1)[0]  # up to the next part's boundary
    assert len(encoded) > 300 and max(len(line) for line in encoded.split(b"\r\n")) <= 76
    assert content(parse(raw).get_body(("plain",))) == body  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "overrides",
    [
        # Input the header registry itself fails on: compose() then leaves the
        # mail to the reference, so it fails (or not) exactly as before.
        {"extra_headers": {"Reply-To": "0@", "reply-to": ""}},
        {"extra_headers": {"x-long-header-name-" + "n" * 60: "", "Auto-Submitted": ""}},
        {"extra_headers": {"x-long-header-name-" + "n" * 60: ""}},
        {"extra_headers": {"Reply-To": "a@b", "reply-to": "c@d"}},
        {"extra_headers": {"Resent-To": "a@b", "resent-to": "c@d"}},
        {"sender_name": "=?utf-8?q?J=C3=BCrgen?="},
        {"subject": "=?utf-8?q?abc?= def"},
        {"to": ['"a b"@example.com', "c@d.example"]},
        {"to": ["jörg@example.de"]},
        {"date": datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=1, seconds=30)))},
        {"date": datetime(50, 1, 1, tzinfo=UTC)},
        {"body": "\udcff"},
        {"body": None},
        {"subject": None},
    ],
)
def test_odd_input_gives_what_the_reference_gives(overrides: dict[str, object]) -> None:
    args: dict[str, object] = {
        "sender": "judge@judge.example.org", "sender_name": "Judge", "to": ["anna@example.com"],
        "subject": "Re: x", "body": BODY, "message_id": "<judge.1@judge.example.org>", "date": WHEN,
    }
    args.update(overrides)
    assert _outcome(compose, **args) == _outcome(_compose_email_message, **args)


@pytest.mark.parametrize("tail", [" ", "\t", "ü", "=", "x", " x", "  "])
@pytest.mark.parametrize("fill", ["x", "ü", "=", "x="])
def test_quoted_printable_soft_breaks_at_every_length(tail: str, fill: str) -> None:
    for length in range(260):
        text = (fill * length)[:length] + tail + "\n"
        encoded = _qp_encode(text)
        expected = quoprimime.body_encode(text.encode("utf-8").decode("latin-1"), 76, "\r\n")
        assert encoded == expected.encode("ascii"), length
        assert max(len(line) for line in encoded.split(b"\r\n")) <= 76
        assert quopri.decodestring(encoded).replace(b"\r\n", b"\n").decode("utf-8") == text


def _reference_addr_spec(address: str) -> str:
    candidate = address.strip()
    if not candidate or any(ord(c) < 32 or c == "\x7f" for c in candidate) or "@" not in candidate:
        raise ValueError(address)
    try:
        return Address(addr_spec=candidate).addr_spec
    except Exception as error:
        raise ValueError(address) from error


@settings(max_examples=500, deadline=None)
@given(address=st.one_of(addresses, _text(_ATEXT + "@.", 20), _text(_ATEXT + "@.\"\\ =?", 20)))
def test_addr_spec_shortcut_agrees_with_the_parser(address: str) -> None:
    assert _outcome(_addr_spec, address=address) == _outcome(_reference_addr_spec, address=address)


@settings(max_examples=500, deadline=None)
@given(body=bodies)
def test_quoted_printable_is_quoprimime_at_76_columns(body: str) -> None:
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    encoded = _qp_encode(text)
    expected = quoprimime.body_encode(text.encode("utf-8").decode("latin-1"), 76, "\r\n")
    assert encoded == expected.encode("ascii")
    assert all(len(line) <= 76 for line in encoded.split(b"\r\n"))
    assert not any(line.endswith((b" ", b"\t")) for line in encoded.split(b"\r\n"))
    assert quopri.decodestring(encoded).replace(b"\r\n", b"\n").decode("utf-8") == text


def test_a_header_the_email_package_would_fold_badly_is_refused() -> None:
    # Found by the differential test: the email package folds this Reply-To
    # (a non-ASCII address group) onto a line without a leading blank, which
    # would end the header block early. Neither path may send that.
    args = dict(sender="judge@judge.example.org", to=["anna@example.com"], subject="", body="",
                message_id="<judge.outbox-42@judge.example.org>",
                date=datetime(2026, 3, 3, 14, 5, tzinfo=timezone.utc),
                extra_headers={"Reply-To": "00000'\u00df:\u00df,\u00df <0@0.example>"})
    for build in (compose, _compose_email_message):
        with pytest.raises(ValueError, match="cannot be written safely"):
            build(**args)
