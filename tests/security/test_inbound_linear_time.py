"""Superlinear parsing (issue 9 review): a mail of a few hundred kilobytes
could keep parse_message() busy for minutes. Found and fixed:
  - the fast path's "Name <address>" regex: a lazy name before [ \\t]*<
    took cubic time on a long run of blanks (From, Reply-To);
  - email.message._parseparam, behind get_boundary() and get_param(): it
    recounts the quotes from the start for every ";" (Content-Type);
  - the header registry of policy.default and email.header.decode_header(),
    quadratic in a header's length (odd Subject, Message-ID, Reply-To, MIME
    headers): now only for values up to a bound, by hand beyond it;
  - the last-resort address regex search, quadratic on a run without "@";
  - html.parser, quadratic on tags that never close ("<a<a<a...").
Issue 25 added the reading of mail as clients write it, each linear and
guarded here: RFC 3676 format=flowed (judge/mail/flowed.py), <blockquote>
as quoted lines (judge/mail/html2text.py: one mark whatever the depth, not
one per level, which cost n x n), and which lines are quotes, introductions,
Outlook's header of the mail replied to or PGP armour (judge/mail/quoting.py:
a bounded look-ahead per line). The libraries weighed for these were not
taken (measured in that issue, n then 4n): quotequail's quote() (its Gmail
pattern ".* <.*@.*>" took 24.6x on one line; and it takes everything after
"On ... wrote:" for quoted, losing bottom-posted commands), its unwrap()
(11.9x on header-like lines), mail-parser-reply (16.8x on a line of blanks),
html2text (html.parser: 15.1x on unclosed tags) and authres for
Authentication-Results (7.7x on many properties; RecursionError on nested
comments; the linear tokenizer of
judge/mail/inbound/authentication_results.py stays). inscriptis was linear
(about 4x) but lays text out for reading (indents, "* " bullets), so
commands would not start their lines.

Each test compares the time for a hostile header (or body) of length n with
one of length 4n: linear code takes about 4 times as long, quadratic 16.
The bound of 8 is generous, so a noisy machine does not fail it while
quadratic code fails clearly. On the code before the fix (and n = 20,000
already) the From and Reply-To blank runs, the Content-Type quoted ";"s, the
8-bit and bad-charset Subjects, the Reply-To without "@", the From comments
and encoded words and the unclosed HTML tags failed; the other shapes guard
the same paths (their old cost grew faster only for larger n)."""

from __future__ import annotations

import gc
import time
from typing import Callable

import pytest

from judge.mail.inbound import parse_message
from judge.mail.quoting import text_lines

N = 50_000


def mail(headers: bytes, body: bytes = b"LIST\r\n") -> bytes:
    """A mail with these headers (and a From of its own unless they have one)."""
    sender = b"" if headers.startswith(b"From:") else b"From: Anna <anna@players.test>\r\n"
    return sender + b"Message-ID: <lin@players.test>\r\n" + headers + b"\r\n\r\n" + body


def html(body: bytes) -> bytes:
    return mail(b"Content-Type: text/html; charset=utf-8", body)


def read(raw: bytes) -> None:
    """What the judge does to a mail before its commands run: parse it, then
    sort its lines (judge/mail/quoting.py)."""
    for _ in text_lines(parse_message(raw).text):
        pass


def times(raw_small: bytes, raw_large: bytes) -> tuple[float, float]:
    """Best of 3 for each, taken in turns, without the garbage collector; in
    this thread's CPU time (the other tests running beside it do not count)."""
    small, large = [], []
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            for raw, into in ((raw_small, small), (raw_large, large)):
                start = time.thread_time()
                read(raw)
                into.append(time.thread_time() - start)
    finally:
        gc.enable()
    return min(small), min(large)


SHAPES: dict[str, Callable[[int], bytes]] = {
    # The fast path's name-address regex (cubic).
    "from_blanks_before_angle": lambda n: b"From: a" + b" " * n + b"<",
    "from_tabs_in_the_name": lambda n: b"From: a" + b"\t" * n + b"b <c@d",
    "reply_to_blanks_before_angle": lambda n: b"Reply-To: a" + b" " * n + b"<",
    # email.message._parseparam (quadratic).
    "content_type_quoted_semicolons": lambda n: b'Content-Type: multipart/mixed; a="' + b";" * n + b'"; boundary=x',
    "content_type_many_parameters": lambda n: b"Content-Type: multipart/mixed; " + b"a=b;" * (n // 4) + b" boundary=x",
    "content_type_odd_and_long": lambda n: b'Content-Type: multipart/mixed; a="' + b";" * n + b'" (c); boundary=x',
    "content_type_blanks": lambda n: b"Content-Type: text/plain;" + b" " * n + b"x",
    # The header registry and decode_header (quadratic).
    "subject_glued_encoded_words": lambda n: b"Subject: " + b"x=?utf-8?q?a?= " * (n // 15),
    "subject_8bit_open_encoded_words": lambda n: b"Subject: \xe4" + b"=?a?q?x " * (n // 8),
    "subject_bad_charset_words": lambda n: b"Subject: \xe4" + b"=?x-bad?q?a?= " * (n // 14),
    "message_id_words": lambda n: b"Message-ID: " + b"a " * (n // 2),
    "reply_to_words": lambda n: b"Reply-To: " + b"a " * (n // 2) + b"<x@y",
    "reply_to_no_at": lambda n: b"Reply-To: " + b"a" * n,
    "auto_submitted_glued_words": lambda n: b"Auto-Submitted: " + b"x=?a?q?b?= " * (n // 11),
    "from_open_encoded_words": lambda n: b"From: " + b"=?a?q?x " * (n // 8) + b"<a@b>",
    "from_many_addresses": lambda n: b"From: " + b"a@b," * (n // 4),
    "from_nested_comments": lambda n: b"From: " + b"(" * (n // 2) + b")" * (n // 2) + b" a@b",
}
BODIES: dict[str, Callable[[int], bytes]] = {
    # html.parser (quadratic).
    "html_unclosed_start_tags": lambda n: html(b"<a" * (n // 2)),
    "html_unclosed_end_tags": lambda n: html(b"</" * (n // 2)),
    "html_unclosed_attribute": lambda n: html(b"<a x='" + b"<b " * (n // 3)),
    "html_many_blocks": lambda n: html(b"<p> " * (n // 4)),
    # Issue 25: format=flowed, quotes, introductions, Outlook headers, PGP.
    "flowed_one_long_paragraph": lambda n: mail(b"Content-Type: text/plain; format=flowed; delsp=yes",
                                                b"a \r\n" * (n // 4)),
    "flowed_deep_quote_marks": lambda n: mail(b"Content-Type: text/plain; format=flowed",
                                              (b">" * 100 + b" a \r\n") * (n // 105)),
    "html_nested_blockquotes": lambda n: html(b"<blockquote>" * (n // 24) + b"x<br>" * (n // 10)),
    "introductions_without_quotes": lambda n: mail(b"", (b"On Monday, Bob wrote:\r\n" + b"> q\r\n") * (n // 27)),
    "introduction_then_blank_lines": lambda n: mail(b"", b"On Monday, Bob wrote:\r\n" + b"\r\n" * (n // 2) + b"LIST"),
    "header_like_lines": lambda n: mail(b"", b"From: a\r\nTo: b\r\n" * (n // 16)),
    "long_lines_ending_in_colons": lambda n: mail(b"", (b"On " + b"x wrote " * 60 + b":\r\n") * (n // 490)),
    "pgp_armour_without_end": lambda n: mail(b"", b"-----BEGIN PGP SIGNED MESSAGE-----\r\n" + b"Hash: x\r\n" * (n // 9)),
    "content_disposition_parameters": lambda n: mail(
        b'Content-Type: multipart/mixed; boundary="b"',
        b"--b\r\nContent-Type: text/plain; a=\"" + b";" * n + b"\"\r\nContent-Disposition: inline; "
        + b"a=b;" * (n // 4) + b"\r\n\r\nLIST\r\n--b--\r\n"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_hostile_header_costs_linear_time(name: str) -> None:
    make = SHAPES[name]
    small, large = times(mail(make(N)), mail(make(4 * N)))
    assert large / small < 8, f"{name}: {small * 1000:.1f} ms for n, {large * 1000:.1f} ms for 4n"


@pytest.mark.parametrize("name", sorted(BODIES))
def test_hostile_body_costs_linear_time(name: str) -> None:
    make = BODIES[name]
    small, large = times(make(N), make(4 * N))
    assert large / small < 8, f"{name}: {small * 1000:.1f} ms for n, {large * 1000:.1f} ms for 4n"


def test_the_hostile_mails_still_parse() -> None:
    """The shapes above are read, not refused: the right sender, no failure."""
    for name, make in {**SHAPES, **BODIES}.items():
        raw = make(1000)
        result = parse_message(raw if name in BODIES else mail(raw))
        assert not any(p.startswith("parser failure") for p in result.problems), (name, result)
    result = parse_message(mail(SHAPES["reply_to_blanks_before_angle"](N)))
    assert result.sender == "anna@players.test" and result.reply_to == "anna@players.test"
    result = parse_message(BODIES["content_disposition_parameters"](N))
    assert result.text == "LIST"
