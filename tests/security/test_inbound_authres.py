"""Authentication-Results (RFC 8601; issue 9 review): parse_message() had no
way to tell a mail whose From domain the judge's own mail server verified
from one that anybody could have written. Now InboundMail.from_authenticated
says so, from the topmost Authentication-Results header of a trusted
authserv-id only (anybody can write such a header, naming any host).
Each test failed on the code before (no trusted_authserv_ids parameter)."""

from __future__ import annotations

import gc
import time

import pytest

from judge.mail.inbound import parse_message

MX = "mx.judge.test"


def mail(*results: str, sender: str = "Anna <anna@example.com>", extra: str = "") -> bytes:
    head = "".join(f"Authentication-Results: {value}\r\n" for value in results)
    return (head + f"From: {sender}\r\nTo: judge@judge.test\r\nSubject: orders\r\nMessage-ID: <a@example.com>\r\n"
            f"{extra}\r\nLIST\r\n").encode("utf-8")


def authenticated(raw: bytes, trusted: tuple[str, ...] = (MX,)) -> bool | None:
    return parse_message(raw, trusted_authserv_ids=trusted).from_authenticated


def test_authentication_results_from_trusted_host_only() -> None:
    forged = mail("evil.test; dmarc=pass header.from=example.com", "mx.evil.test; dkim=pass header.d=example.com")
    assert authenticated(forged) is None  # no header from the trusted host: nothing known
    # The trusted host's own header (topmost, written last) counts, a forged
    # one below it claiming the same host does not.
    assert authenticated(mail(f"{MX}; dmarc=fail header.from=example.com",
                              f"{MX}; dmarc=pass header.from=example.com")) is False
    assert authenticated(mail(f"{MX}; dmarc=pass header.from=example.com",
                              f"{MX}; dmarc=fail header.from=example.com")) is True
    # Untrusted headers above the trusted one are skipped, not read.
    assert authenticated(mail("evil.test; dmarc=pass header.from=example.com", f"{MX}; spf=fail")) is False


def test_no_trusted_authserv_ids_means_unknown() -> None:
    raw = mail(f"{MX}; dmarc=pass header.from=example.com")
    assert parse_message(raw).from_authenticated is None
    assert authenticated(raw, ()) is None
    assert authenticated(raw, ("MX.Judge.TEST ",)) is True  # ids compare without case


@pytest.mark.parametrize(("result", "expected"), [
    ("dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com", True),
    ("dmarc=pass", True),
    ("dmarc=pass header.from=other.example", False),
    ("dmarc=fail header.from=example.com", False),
    ("dmarc=bestguesspass header.from=example.com", False),
    ("dkim=pass header.d=example.com header.s=sel", True),
    ("dkim=pass header.i=@mail.example.com", True),       # a subdomain of the From domain
    ("dkim=pass header.d=EXAMPLE.COM.", True),
    ("dkim=pass header.d=evil.test", False),
    ("dkim=pass header.d=com", False),                    # no single-label parent
    ("dkim=pass header.d=notexample.com", False),
    ("dkim=neutral header.d=example.com", False),
    ("spf=pass smtp.mailfrom=bounces@example.com", True),
    ("spf=pass smtp.mailfrom=example.com", True),
    ("spf=pass smtp.mailfrom=bounces@evil.test smtp.helo=example.com", False),
    ("spf=softfail smtp.mailfrom=example.com", False),
    ("dkim/1 = pass (good) reason=\"key ok\" header.d = example.com", True),
    ("spf=fail smtp.mailfrom=evil.test; dkim=pass header.d=example.com", True),
    ("none", False),
    ("", False),
    ("dkim=pass header.d", False),
    ("arc=pass", False),
])
def test_alignment(result: str, expected: bool) -> None:
    assert authenticated(mail(f"{MX}; {result}")) is expected


def test_from_subdomain_and_parent_align() -> None:
    raw = mail(f"{MX}; dkim=pass header.d=example.com", sender="anna@eu.example.com")
    assert authenticated(raw) is True
    raw = mail(f"{MX} 1; spf=pass smtp.mailfrom=x@eu.example.com", sender="anna@example.com")
    assert authenticated(raw) is True
    raw = mail(f"{MX}; dkim=pass header.d=us.example.com", sender="anna@eu.example.com")
    assert authenticated(raw) is False  # siblings: only equal or parent and child


def test_a_mail_without_a_sender_is_not_authenticated() -> None:
    raw = mail(f"{MX}; dmarc=pass header.from=example.com", extra="From: other@example.com\r\n")
    result = parse_message(raw, trusted_authserv_ids=[MX])
    assert result.sender is None and result.from_authenticated is False


def test_quoted_authserv_id_and_comments() -> None:
    assert authenticated(mail(f'"{MX}" (our border MTA) ; (x) dmarc (y) = (z) pass')) is True
    assert authenticated(mail(f"(comment first) {MX}; dmarc=pass")) is True
    # An unterminated comment swallows the rest: the trusted header vouches for nothing.
    assert authenticated(mail(f"{MX} (unterminated; dmarc=pass")) is False


def times(raw_small: bytes, raw_large: bytes) -> tuple[float, float]:
    """Best of 3 for each, taken in turns, without the garbage collector; in
    this thread's CPU time, which other processes (and the other tests beside
    it) do not inflate as they do the wall clock (as tests/security/test_inbound_linear_time.py)."""
    small, large = [], []
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            for raw, into in ((raw_small, small), (raw_large, large)):
                start = time.thread_time()
                parse_message(raw, trusted_authserv_ids=[MX])
                into.append(time.thread_time() - start)
    finally:
        gc.enable()
    return min(small), min(large)


@pytest.mark.parametrize("shape", [
    lambda n: f"{MX}; " + "dkim=pass " * (n // 10),
    lambda n: f"{MX}; " + "(" * n,
    lambda n: f"{MX}; " + ";" * n,
    lambda n: f"{MX}; dkim=pass header.d=\"" + "\\x" * (n // 2),
    lambda n: f"{MX};" + " " * n + "dmarc=pass",
])
def test_authentication_results_cost_linear_time(shape) -> None:
    n = 50_000
    small, large = times(mail(shape(n)), mail(shape(4 * n)))
    assert large / small < 8, f"{small * 1000:.1f} ms for n, {large * 1000:.1f} ms for 4n"
