"""parse_message(): one raw mail into an InboundMail, step by step, each
step guarded on its own (the package's docstring says how and why)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from judge.mail.inbound.authentication_results import _from_authenticated
from judge.mail.inbound.auto_replies import _auto_reason, _normalise_own
from judge.mail.inbound.body import _body_text
from judge.mail.inbound.charsets import clean_text
from judge.mail.inbound.guard import _guard
from judge.mail.inbound.headers import _Headers
from judge.mail.inbound.limits import _MAX_MIME_DEPTH
from judge.mail.inbound.message_ids import _message_id, synthetic_message_id
from judge.mail.inbound.mime import _TooDeep, _header_block, _note_defects, _parse_mime
from judge.mail.inbound.sender import _sender, _valid_address

_DEPTH_REFUSAL = (f"your mail's MIME parts are nested more than {_MAX_MIME_DEPTH} deep; "
                  "the judge reads plain text mails")


@dataclass(frozen=True)
class InboundMail:
    message_id: str
    sender: str | None
    sender_name: str
    reply_to: str | None
    subject: str
    text: str
    auto: str | None
    in_reply_to: str | None
    date: datetime | None
    size: int
    problems: tuple[str, ...]
    # Why the judge could not read the mail, in a sentence the reply can
    # quote to its sender (a MIME structure nested too deep); None normally.
    refusal: str | None = None
    # Did a trusted MTA vouch for the From domain? See parse_message().
    from_authenticated: bool | None = None


def parse_message(
    raw: bytes, *, own_addresses: Iterable[str] = (), trusted_authserv_ids: Iterable[str] = ()
) -> InboundMail:
    """The judge's view of one raw mail. Never raises for any input bytes;
    takes time linear in its length.

    sender is the addr-spec of the one mailbox of the one From header
    (from_address()); None when there is no From, several From headers, or a
    From naming no mailbox or several.

    from_authenticated reads the Authentication-Results headers (RFC 8601)
    that the judge's own mail server wrote:
      None   no Authentication-Results header whose authserv-id is in
             trusted_authserv_ids (compared without case), or no ids given;
      True   in the first (topmost) such header, the From domain passed DMARC
             (dmarc=pass, with header.from equal to the From domain when
             given), or DKIM with header.d (else the domain of header.i)
             aligned with it, or SPF with the domain of smtp.mailfrom aligned
             with it; aligned means equal, or one is a subdomain of the other
             (relaxed alignment, simplified: parent and child domains, the
             parent holding at least one dot);
      False  otherwise (a trusted header is there but vouches for nothing,
             or the mail has no sender).
    Only the first trusted header counts and headers from other hosts are
    never read: anyone can write an Authentication-Results header. This holds
    only if the trusted server removes headers that claim its authserv-id
    from the mail it receives, as RFC 8601 section 5 requires of it.
    The headers are read by a linear tokenizer (no backtracking regex). The
    `authres` package (dkimpy's authors) was weighed against it (issue 25):
    its parser took quadratic time on a header of many properties and
    recursed once per nested comment (RecursionError), so it is not used.

    refusal is a sentence for the reply when the judge could not read the
    mail's text (MIME nested deeper than _MAX_MIME_DEPTH); text is then "",
    and sender, Subject and Message-ID are still read from the header block.
    """
    problems: list[str] = []
    raw = bytes(raw) if not isinstance(raw, bytes) else raw
    try:
        own = _normalise_own(own_addresses)
        trusted = frozenset(str(entry).strip().lower() for entry in trusted_authserv_ids)
        return _parse(raw, own, problems, trusted)
    except Exception as error:  # last line of defence; each step is guarded too
        problems.append(f"parser failure: {type(error).__name__}")
        return InboundMail(
            message_id=synthetic_message_id(raw),
            sender=None,
            sender_name="",
            reply_to=None,
            subject="",
            text="",
            auto=None,
            in_reply_to=None,
            date=None,
            size=len(raw),
            problems=tuple(problems),
        )


def _parse(raw: bytes, own: frozenset[str], problems: list[str], trusted: frozenset[str] = frozenset()) -> InboundMail:
    refusal: str | None = None
    try:
        msg, rich_headers = _parse_mime(raw, problems)
    except (_TooDeep, RecursionError):
        # Answer it all the same: the sender, Subject and Message-ID are in
        # the header block, which parses without reading the MIME structure.
        refusal = _DEPTH_REFUSAL
        problems.append(f"MIME nested more than {_MAX_MIME_DEPTH} deep")
        msg, rich_headers = _header_block(raw), True
    headers = _Headers(msg, problems, rich=rich_headers)

    message_id = _guard(lambda: _message_id(headers.first("Message-ID")), None, problems, "Message-ID")
    if message_id is None:
        message_id = synthetic_message_id(raw)
        problems.append("no Message-ID")

    sender, sender_name = _guard(lambda: _sender(headers, problems), (None, ""), problems, "From")
    reply_pair = _guard(lambda: headers.address("Reply-To"), None, problems, "Reply-To")
    reply_to = reply_pair[1] if reply_pair and _valid_address(reply_pair[1]) else sender

    subject = _guard(lambda: _single_line(headers.first("Subject") or ""), "", problems, "Subject")
    in_reply_to = _guard(lambda: _message_id(headers.first("In-Reply-To")), None, problems, "In-Reply-To")
    date = _guard(lambda: headers.date(problems), None, problems, "Date")
    text = ""
    if refusal is None:
        try:
            text = _body_text(msg, problems)
        except RecursionError:
            refusal = _DEPTH_REFUSAL
            problems.append("unreadable body: RecursionError")
        except Exception as error:
            problems.append(f"unreadable body: {type(error).__name__}")
    auto = _guard(lambda: _auto_reason(msg, headers, sender, own), None, problems, "auto detection")
    from_authenticated = (
        _guard(lambda: _from_authenticated(headers, sender, trusted), False, problems, "Authentication-Results")
        if trusted else None
    )
    _note_defects(msg, problems)

    return InboundMail(
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        reply_to=reply_to,
        subject=subject,
        text=text,
        auto=auto,
        in_reply_to=in_reply_to,
        date=date,
        size=len(raw),
        # Problem texts quote bits of the mail (charset names): clean them too.
        problems=tuple(dict.fromkeys(clean_text(problem)[:200] for problem in problems)),
        refusal=refusal,
        from_authenticated=from_authenticated,
    )


def _single_line(text: str) -> str:
    # A Subject may decode to text with line breaks (encoded "=0A"); a reply
    # subject built from it must not break the header.
    return re.sub(r"\s+", " ", text).strip()
