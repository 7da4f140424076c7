"""Mail the judge must not answer: its own mail coming back, auto-replies,
bounces, bulk and mailing-list mail. InboundMail.auto says why."""

from __future__ import annotations

import email.utils
import functools
import re
from email.message import Message
from typing import Iterable

from judge.mail.inbound.charsets import _SURROGATES
from judge.mail.inbound.encoded_words import _EW, decode_raw_header
from judge.mail.inbound.fast_headers import _fetch_unfold
from judge.mail.inbound.headers import _Headers
from judge.mail.inbound.mime import _content_type

_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_BOUNCE_LOCALPARTS = frozenset({"mailer-daemon", "postmaster"})
_SUPPRESS_TOKENS = frozenset({"all", "oof"})


def _normalise_own(own_addresses: Iterable[str]) -> frozenset[str]:
    return _normalise_own_cached(tuple(str(entry) for entry in own_addresses))


@functools.lru_cache(maxsize=64)
def _normalise_own_cached(entries: tuple[str, ...]) -> frozenset[str]:
    # The judge passes the same few addresses with every mail.
    result: set[str] = set()
    for entry in entries:
        _, address = email.utils.parseaddr(entry)
        if address:
            result.add(address.strip().lower())
    return frozenset(result)


def _auto_reason(msg: Message, headers: _Headers, sender: str | None, own: frozenset[str]) -> str | None:
    """Why this mail must not be answered, or None. Checked most specific first."""
    if sender is not None and sender in own:
        return f"mail loop: from own address {sender}"

    for value in headers.all("Auto-Submitted"):
        token = value.split(";")[0].strip().lower()
        if token and token != "no":
            return f"auto-submitted: {token}"

    for value in headers.raw_all("Return-Path"):
        if re.fullmatch(r"\s*<\s*>\s*", value):
            return "bounce (empty Return-Path)"
    from_local = _from_localpart(headers)
    if from_local in _BOUNCE_LOCALPARTS:
        return f"bounce (from {from_local.upper() if from_local == 'mailer-daemon' else from_local})"
    try:
        if _content_type(msg) == "multipart/report":
            return "bounce (multipart/report)"
    except Exception:
        pass

    for value in headers.all("Precedence"):
        token = value.strip().lower()
        if token in _BULK_PRECEDENCE:
            return f"precedence: {token}"

    for name in ("X-Autoreply", "X-Autorespond"):
        if headers.has(name):
            return f"{name.lower()} header"
    for value in headers.all("X-Auto-Response-Suppress"):
        tokens = {t.strip().lower() for t in value.split(",")}
        hit = sorted(tokens & _SUPPRESS_TOKENS)
        if hit:
            return f"x-auto-response-suppress: {hit[0]}"

    for name in ("List-Id", "List-Unsubscribe"):
        if headers.has(name):
            return f"mailing list ({name})"
    return None


def _from_localpart(headers: _Headers) -> str:
    # Bounces often carry a bare "From: MAILER-DAEMON" with no domain, which is
    # not a usable sender; look at the raw header text as well.
    for raw in headers.raw_all("From"):
        plain = _plain_from_localpart(raw, headers.plain_address(raw))
        if plain is not None:
            return plain
        decoded = decode_raw_header(raw)
        _, address = email.utils.parseaddr(decoded)
        candidate = (address or decoded).strip().lower()
        local = candidate.rpartition("@")[0] if "@" in candidate else candidate
        if local:
            return local
    return ""


# Charsets whose text of two encoded words decoded one by one is the text of
# their bytes decoded together (no shift states), as decode_header() does it.
_STATELESS_CHARSET = re.compile(r"(?i)us-ascii|utf-8|iso-8859-[0-9]{1,2}|windows-125[0-9]|koi8-[ru]")
_PARSEADDR_SPECIALS = re.compile(r'[()<>@,;:\\"\[\]\r\n]')


def _plain_from_localpart(raw: str, found: tuple[str, str] | None) -> str | None:
    """The local part _from_localpart() finds in a plain From (see _fast_address),
    without decoding the header twice; None for any other From.

    Decoding 8-bit bytes (as UTF-8 or Latin-1) yields no ASCII character, so
    parseaddr() finds the same address in a raw 8-bit name as in an ASCII one.
    """
    if found is None:  # found: _fast_address() of the value
        return None
    value = _fetch_unfold(raw)
    if "=?" in value:
        if _SURROGATES.search(value):
            return None
        # There the encoded words are decoded before parseaddr() reads the
        # value; it still finds the same address if the decoded name holds no
        # character that means something in an address.
        if any(not _STATELESS_CHARSET.fullmatch(m.group(1)) for m in _EW.finditer(value)):
            return None
        if _PARSEADDR_SPECIALS.search(found[0]):
            return None
    return found[1].rpartition("@")[0]
