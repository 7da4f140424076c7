"""Build the judge's outgoing mails as bytes.

Line endings: compose() returns wire format, CRLF ("\\r\\n") throughout
(email.policy.SMTP). The same bytes are handed to every transport, so a copy
kept in a Maildir is byte-identical to what went out over SMTP.

Every mail carries "Auto-Submitted: auto-generated" (RFC 3834): vacation
responders and other judges then know not to answer it, which is what stops
two robots from mailing each other forever. "Precedence: bulk" is deliberately
not set: some providers file such mail as junk, and players must see replies.
"""

from __future__ import annotations

import re
from datetime import datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Mapping, Sequence

# Characters kept verbatim in the left part of a Message-ID; everything else is
# escaped as "=XX" (and "=" itself too), so distinct tokens give distinct ids.
_ID_SAFE = re.compile(r"[A-Za-z0-9_\-+]")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DOMAIN = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")
_HEADER_NAME = re.compile(r"[!-9;-~]+")  # printable ASCII except ":" (RFC 5322 ftext)
_MSG_ID = re.compile(r"<[!-;=?-~]+>")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")

# Headers compose() sets itself; extra_headers may not replace them (above all
# not Auto-Submitted, the loop guard).
_OWN_HEADERS = frozenset(
    {
        "from", "to", "cc", "bcc", "subject", "date", "message-id", "in-reply-to",
        "references", "auto-submitted", "mime-version", "content-type",
        "content-transfer-encoding",
    }
)


def make_message_id(domain: str, token: str) -> str:
    """The Message-ID for an outgoing mail, "<judge.TOKEN@DOMAIN>".

    Deterministic so that a mail re-sent after a crash carries the same id (and
    the receiving side or a Maildir transport can recognise the duplicate).
    Characters of the token outside [A-Za-z0-9_-+] are written as "=XX" per
    UTF-8 byte, which keeps the mapping one-to-one; dots are kept where they
    are legal in a dot-atom.
    """
    clean_domain = domain.strip().lower().rstrip(".")
    if not _DOMAIN.fullmatch(clean_domain):
        raise ValueError(f"not a usable Message-ID domain: {domain!r}")
    if not token:
        raise ValueError("empty Message-ID token")
    escaped: list[str] = []
    for index, char in enumerate(token):
        if _ID_SAFE.fullmatch(char):
            escaped.append(char)
        elif char == "." and 0 < index < len(token) - 1 and token[index + 1] != ".":
            # A dot is legal only between other characters; the token follows
            # "judge." so it must not start with one either.
            escaped.append(char)
        else:
            escaped.extend(f"={byte:02X}" for byte in char.encode("utf-8"))
    return f"<judge.{''.join(escaped)}@{clean_domain}>"


def compose(
    *,
    sender: str,
    sender_name: str = "",
    to: Sequence[str],
    subject: str,
    body: str,
    message_id: str,
    date: datetime,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    extra_headers: Mapping[str, str] | None = None,
    attachments: Sequence[tuple[str, bytes, str]] = (),
) -> bytes:
    """An RFC 5322 text/plain UTF-8 message, CRLF line endings.

    References: when in_reply_to is given and not among `references`, it is
    appended, so threading works even if the caller passes no chain.
    Raises ValueError for unusable input (bad addresses, naive date, header
    injection attempts, overriding our own headers).
    """
    if isinstance(to, str):
        raise TypeError("to must be a sequence of addresses, not one string")
    if not to:
        raise ValueError("a mail needs at least one recipient")
    if date.tzinfo is None or date.utcoffset() is None:
        raise ValueError("date must be timezone-aware")

    # refold_source="none": the id headers below are stored pre-folded and must
    # go out verbatim; the stock folder would turn a long id into RFC 2047
    # encoded-words, which breaks threading.
    msg = EmailMessage(policy=policy.SMTP.clone(refold_source="none"))
    msg["From"] = Address(display_name=_one_line(sender_name), addr_spec=_addr_spec(sender))
    msg["To"] = [Address(addr_spec=_addr_spec(address)) for address in to]
    msg["Subject"] = _one_line(subject)
    msg["Date"] = format_datetime(date)
    own_id = _msg_id(message_id)
    if own_id is None:
        raise ValueError(f"not a Message-ID: {message_id!r}")
    msg.set_raw("Message-ID", own_id)
    # The parent ids come from other people's mail: an unusable one is dropped
    # (threading is a nicety) rather than making the reply impossible.
    chain = [ref for ref in map(_msg_id, references) if ref is not None]
    parent = _msg_id(in_reply_to) if in_reply_to else None
    if parent is not None:
        msg.set_raw("In-Reply-To", parent)
        if parent not in chain:
            chain.append(parent)
    if chain:
        msg.set_raw("References", _fold_ids(chain))
    msg["Auto-Submitted"] = "auto-generated"
    for name, value in (extra_headers or {}).items():
        if not _HEADER_NAME.fullmatch(name):
            raise ValueError(f"bad header name {name!r}")
        if name.lower() in _OWN_HEADERS:
            raise ValueError(f"header {name} is set by compose() and cannot be overridden")
        msg[name] = _one_line(value)

    text = body.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    # 7bit when possible (readable in any tool); otherwise quoted-printable, so
    # the mail is 7-bit clean and needs no 8BITMIME support on the way.
    plain = text.isascii() and max(len(line) for line in text.split("\n")) <= 78
    msg.set_content(text, subtype="plain", charset="utf-8", cte="7bit" if plain else "quoted-printable")
    # Attachments (filename, data, "type/subtype"): e.g. the machine-readable
    # record of a resolution that `judge verify` checks.
    for filename, data, mimetype in attachments:
        maintype, _, subtype = mimetype.partition("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return msg.as_bytes()


def _addr_spec(address: str) -> str:
    candidate = address.strip()
    if not candidate or _CONTROL.search(candidate) or "@" not in candidate:
        raise ValueError(f"not a mail address: {address!r}")
    try:
        parsed = Address(addr_spec=candidate)
    except Exception as error:
        raise ValueError(f"not a mail address: {address!r}") from error
    return parsed.addr_spec


def _msg_id(value: str) -> str | None:
    candidate = value.strip()
    # Printable ASCII without angle brackets, and short enough that a header
    # line holding it stays within RFC 5322's 998 characters.
    if len(candidate) > 900 or not _MSG_ID.fullmatch(candidate):
        return None
    return candidate


def _fold_ids(ids: Sequence[str]) -> str:
    """Space-separated ids, folded between ids (never inside one) near 78 columns."""
    lines: list[str] = []
    current = ""
    width = len("References: ")
    for item in ids:
        if current and width + len(current) + 1 + len(item) > 78:
            lines.append(current)
            current, width = item, 1
        else:
            current = f"{current} {item}" if current else item
    lines.append(current)
    return "\n ".join(lines)


def _one_line(value: str) -> str:
    # Header values come partly from players (subjects); a line break in one
    # must not be able to start a new header.
    return " ".join(_CONTROL.sub(" ", value).split())
