"""Read one raw inbound mail into the few facts the judge acts on.

parse_message() is the border between the hostile outside world and the judge:
whatever bytes arrive (spam, broken MUAs, fuzzers), it returns an InboundMail and
never raises. Every step is guarded on its own so one broken header costs only
that field, and each oddity is written into `problems` for the logs.

All text fields are clean Python strings: no lone surrogates (8-bit header bytes
are decoded as UTF-8, else Latin-1) and no NUL characters, because both would
break storing them later.

Speed: the mail is parsed with the cheap compat32 policy (headers stay plain
strings) and the few headers the judge reads are decoded here. The results are
those of the rich `policy.default` header registry, which is what this module
used to parse with, but that registry costs about a millisecond per mail. So
every header value of an ordinary shape (plain text, well-formed RFC 2047
words, "Name <address>", a plain Message-ID or Date) is decoded by a small
exact fast path, and anything else is handed to `policy.default` for just that
header, as before. Likewise the MIME tree: when any part's Content-Type,
Content-Transfer-Encoding or Content-Disposition is not of a plain shape (RFC
2231 parameters, comments, quoted-pairs, encoded words, 8-bit bytes...), the
mail is parsed again with `policy.default`, because that policy reads those
headers slightly differently and might cut the parts elsewhere.
The one intended difference: see _fast_phrase (white space between two
encoded words in a display name).

Identity: the sender is not the registry's reading but the addr-spec of the
one mailbox of the one From header, read strictly as RFC 5322 writes it
(from_address()): no address out of a display name, a comment or a decoded
encoded word, no lenient guess; several From headers or mailboxes give none.

Cost: linear in the size of the mail, whatever its shape. The email
package's slow spots are kept away: its parser stops at the first MIME part
nested deeper than _MAX_MIME_DEPTH (the mail is then answered with
InboundMail.refusal), its MIME parameter split is replaced by a one-pass
one, and its header registry and decode_header(), quadratic in a header's
length, only see values of up to _MAX_REGISTRY_CHARS (longer ones are
decoded by hand) and MIME headers of up to _MAX_RICH_MIME_CHARS in all.
tests/security/test_inbound_linear_time.py holds the shapes that were not.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import email.header
import email.utils
import functools
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email import headerregistry, policy
from email import utils as email_utils
from email.message import EmailMessage, Message
from email.feedparser import BytesFeedParser
from email.parser import BytesHeaderParser
from typing import Callable, Iterable, Iterator, TypeVar

from judge.mail.flowed import decode_flowed, is_flowed
from judge.mail.html2text import html_to_text

T = TypeVar("T")

# Deeper MIME nesting than this is not a real mail; stop walking instead of
# spending time (or recursion) on it.
_MAX_MIME_DEPTH = 50
_MAX_PARTS = 500
_MAX_ID_BYTES = 998
# The email package's header registry (policy.default) slices its input once
# per token, so its cost grows with the square of a header's length; header
# values longer than this are decoded by hand instead (linear; the same
# result for all but odd shapes). No real header comes near it.
_MAX_REGISTRY_CHARS = 2000
# Likewise its MIME parse re-reads every MIME header at each access: a mail
# whose odd (non-plain) MIME headers are longer than this, all together, is
# read with compat32 alone.
_MAX_RICH_MIME_CHARS = 8000

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_SURROGATES = re.compile("[\udc80-\udcff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_ANGLE_ID = re.compile(r"<([^<>]*)>")
_ADDRESS_RUN = re.compile(r"[^\s@<>()\[\],;:\"\\]+")  # the characters an address is made of here

_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_BOUNCE_LOCALPARTS = frozenset({"mailer-daemon", "postmaster"})
_SUPPRESS_TOKENS = frozenset({"all", "oof"})

_RICH = policy.default  # the policy this module used to parse whole mails with


def _split_params(value: object) -> list[str]:
    """email.message._parseparam(), which the email package splits MIME
    parameters with, in one pass: that one recounts the quotes from the start
    of the value for every ";" and copies the rest of the value for every
    parameter, so a Content-Type of many ";" took quadratic time. Same
    result for every value: a parameter ends at a ";" that comes after an
    even number of quotes (a quote after a backslash not counted) since its
    start, or right at its start."""
    text = str(value)
    plist: list[str] = []
    pos, end = -1, len(text)  # text[pos] is the ";" before the next parameter (virtual at -1)
    while pos < end:
        start = pos + 1
        stop, index, odd = end, start, False
        while index < end:
            char = text[index]
            if char == ";" and (index == start or not odd):
                stop = index
                break
            if char == '"' and not (index > start and text[index - 1] == "\\"):
                odd = not odd
            index += 1
        part = text[start:stop]
        if "=" in part:
            i = part.index("=")
            part = part[:i].strip().lower() + "=" + part[i + 1:].strip()
        plist.append(part.strip())
        pos = stop
    return plist


class _LinearParams:
    """Message._get_params_preserve() (behind get_param(), get_boundary(),
    get_content_charset(), get_filename()...) with _split_params()."""

    def _get_params_preserve(self, failobj, header):  # type: ignore[no-untyped-def]
        missing = object()
        value = self.get(header, missing)  # type: ignore[attr-defined]
        if value is missing:
            return failobj
        params = []
        for param in _split_params(value):
            try:
                name, val = param.split("=", 1)
                name = name.strip()
                val = val.strip()
            except ValueError:
                name = param.strip()
                val = ""
            params.append((name, val))
        return email_utils.decode_params(params)


class _CompatMessage(_LinearParams, Message):
    pass


class _RichMessage(_LinearParams, EmailMessage):
    pass


class _TooDeep(Exception):
    """A MIME part nested deeper than _MAX_MIME_DEPTH."""


class _BoundedFeedParser(BytesFeedParser):
    """The email package's parser, which stops at the first part nested
    deeper than _MAX_MIME_DEPTH: its parse recurses once per level (a mail
    nested ~1,000 deep raised RecursionError) and checks every line against
    every open boundary, so an unbounded depth costs depth x lines."""

    def _new_message(self) -> None:
        if len(self._msgstack) > _MAX_MIME_DEPTH:  # the new part's depth; the mail itself is 0
            raise _TooDeep()
        super()._new_message()  # type: ignore[misc]


class _BoundedParser:
    """BytesParser(policy=...).parsebytes(), with the depth bound. The whole
    mail is fed at once (BytesParser feeds 8 KB pieces; the parser's result
    does not depend on the pieces)."""

    def __init__(self, parse_policy: policy.Policy, factory: type[Message]) -> None:
        self.policy = parse_policy
        self.factory = factory

    def parsebytes(self, raw: bytes) -> Message:
        parser = _BoundedFeedParser(self.factory, policy=self.policy)
        parser.feed(raw)
        return parser.close()


_COMPAT_PARSER = _BoundedParser(policy.compat32, _CompatMessage)
_RICH_PARSER = _BoundedParser(_RICH, _RichMessage)
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


def dedup_key_of(raw: bytes) -> tuple[str, str]:
    """(Message-ID, From key): the key the judge stores a mail under, fast.
    Message-IDs are unique per sender, so a stranger who sends a known
    Message-ID first cannot make the judge drop the real mail. The From key
    is the From header(s) as written, blanks squeezed and lower-cased, cut to
    320 characters: no decoding, so it is cheap and the same for the same
    header. Reads only the header block (no MIME parsing); never raises."""
    found, from_key = None, ""
    try:
        head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
        msg = BytesHeaderParser(policy=policy.compat32).parsebytes(head)
        value = msg.get("Message-ID")
        found = _message_id(str(value)) if value is not None else None
        froms = [" ".join(str(v).split()).lower() for v in (msg.get_all("From") or [])]
        from_key = clean_text("\n".join(froms))[:320]
    except Exception:
        pass
    return found or synthetic_message_id(raw), from_key


def synthetic_message_id(raw: bytes) -> str:
    """The stand-in Message-ID of a mail that has none: stable for the same bytes."""
    return "<" + hashlib.sha256(raw).hexdigest() + "@judge.invalid>"


# --------------------------------------------------------------------------- core


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


def _header_block(raw: bytes) -> Message:
    """The mail's header block alone (its body kept as an unparsed string)."""
    return BytesHeaderParser(policy=policy.compat32).parsebytes(raw)


def _parse_mime(raw: bytes, problems: list[str]) -> tuple[Message, bool]:
    """The parsed mail, and whether its headers may be read the rich way.

    compat32 and policy.default run the same parser and keep the same raw
    header strings; they differ only in how the parser reads Content-Type
    while it splits the parts, and in how the body helpers read the MIME
    headers. For plain MIME headers both readings agree (see _plain_mime), so
    the cheap parse serves; otherwise the mail is parsed the rich way, as it
    always was. If that fails, the old code read everything (headers too)
    through compat32, which rich=False reproduces.
    """
    try:
        msg = _COMPAT_PARSER.parsebytes(raw)
    except _TooDeep:
        raise
    except Exception:
        # Never seen; the old code would have tried policy.default first.
        return _RICH_PARSER.parsebytes(raw), True
    odd = _odd_mime_chars(msg)
    if not odd:
        return msg, True
    if odd > _MAX_RICH_MIME_CHARS:
        problems.append("MIME headers too long to read the policy.default way")
        return msg, True
    try:
        return _RICH_PARSER.parsebytes(raw), True
    except (_TooDeep, RecursionError):
        raise
    except Exception as error:
        problems.append(f"broken MIME: {type(error).__name__}")
        return msg, False


def _guard(step: Callable[[], T], default: T, problems: list[str], what: str) -> T:
    try:
        return step()
    except Exception as error:
        problems.append(f"unreadable {what}: {type(error).__name__}")
        return default


# ------------------------------------------------------------ plain MIME headers

# Folding white space as it stands in a raw compat32 value: continuation lines
# keep their line ending, and each starts with a space or tab. (Written as
# (?:(?:\r\n|\r|\n)?[ \t])* before; the same strings.)
_FWS = r"[ \t]*(?:(?:\r\n|\r|\n)[ \t]+)*"
# An RFC 2045 token minus "*", "'" and "%", which RFC 2231 gives a meaning (the
# registry reads a value like "a'b'c" as charset'language'text).
_MIME_TOKEN = r"[A-Za-z0-9!#$&+.^_`{|}~-]+"
_PLAIN_QUOTED = r'"[ \t!#-\[\]-~]*"'  # no quoted-pairs, no line breaks, ASCII only
# The same three with possessive quantifiers (Python 3.11+), for the whole
# header patterns below. Nothing that ends one piece (a token, a blank run, a
# parameter) can start the next, so giving characters back can never make a
# match, and a possessive match keeps no backtracking state: for a header of
# 100,000 parameters that state was megabytes, and the cost per character
# grew with the length.
_FWS_P = r"[ \t]*+(?:(?:\r\n|\r|\n)[ \t]++)*+"
_MIME_TOKEN_P = r"[A-Za-z0-9!#$&+.^_`{|}~-]++"
_PLAIN_QUOTED_P = r'"[ \t!#-\[\]-~]*+"'
_PLAIN_PARAMS_P = (rf"(?:;{_FWS_P}{_MIME_TOKEN_P}{_FWS_P}={_FWS_P}(?:{_MIME_TOKEN_P}|{_PLAIN_QUOTED_P}){_FWS_P})*+"
                   rf"(?:;{_FWS_P})?+")
_PLAIN_CONTENT_TYPE = re.compile(rf"{_FWS_P}{_MIME_TOKEN_P}/{_MIME_TOKEN_P}{_FWS_P}{_PLAIN_PARAMS_P}")
_PLAIN_DISPOSITION = re.compile(rf"{_FWS_P}{_MIME_TOKEN_P}{_FWS_P}{_PLAIN_PARAMS_P}")
_PLAIN_TRANSFER_ENCODING = re.compile(r"(?i:7bit|8bit|binary|quoted-printable|base64)")
_PLAIN_MIME_HEADERS = {
    "content-type": _PLAIN_CONTENT_TYPE,
    "content-transfer-encoding": _PLAIN_TRANSFER_ENCODING,
    "content-disposition": _PLAIN_DISPOSITION,
}


def _plain_mime(msg: Message) -> bool:
    """True if every part's MIME headers are plain, so compat32 and
    policy.default read them alike: same type, boundary, charset, transfer
    encoding and disposition, and so the same parts and the same text.
    Walks every part the parser made, attached messages included."""
    return _odd_mime_chars(msg) == 0


def _odd_mime_chars(msg: Message) -> int:
    """The length of all MIME headers that are not plain (see _plain_mime),
    every part counted; 0 if all are plain."""
    odd = 0
    stack = [msg]
    while stack:
        part = stack.pop()
        seen: set[str] = set()
        for key, value in part.raw_items():
            name = key.lower()
            pattern = _PLAIN_MIME_HEADERS.get(name)
            if pattern is None or name in seen:
                continue  # only the first one counts, for either policy
            seen.add(name)
            if (not isinstance(value, str) or "=?" in value or _SURROGATES.search(value)
                    or not pattern.fullmatch(value)):
                odd += max(1, len(str(value)))
        if part.is_multipart():  # get_payload() of a leaf may decode (and fail)
            stack.extend(child for child in part.get_payload() if isinstance(child, Message))
    return odd


# ------------------------------------------------------------------------ headers


class _Headers:
    """Header access that survives malformed headers.

    The results are those of the default policy's header registry (which
    parses headers into rich objects and raises on some malformed values; then
    the raw value is decoded by hand: RFC 2047 words, 8-bit bytes as UTF-8 or
    Latin-1). Values of an ordinary shape take an exact fast path instead of
    the registry; see the module docstring.
    """

    def __init__(self, msg: Message, problems: list[str], *, rich: bool = True) -> None:
        self._problems = problems
        self._rich = rich
        self._raw: dict[str, list[str]] = {}
        self._plain_addresses: dict[str, tuple[str, str] | None] = {}
        try:
            items = list(msg.raw_items())
        except Exception:
            items = []
        for key, value in items:
            self._raw.setdefault(str(key).lower(), []).append(str(value))

    def raw_all(self, name: str) -> list[str]:
        return self._raw.get(name.lower(), [])

    def all(self, name: str) -> list[str]:
        raw_values = self.raw_all(name)
        if not raw_values:
            return []
        if any(_SURROGATES.search(value) for value in raw_values):
            # 8-bit bytes in the header: the default policy turns every non-UTF-8
            # byte into U+FFFD; decoding by hand keeps Latin-1 headers readable.
            return [decode_raw_header(value) for value in raw_values]
        if not self._rich:
            return [clean_text(value) for value in raw_values]
        fast = _fast_text_reader(name)
        if fast is not None:
            values: list[str] = []
            for value in raw_values:
                try:
                    text = fast(_fetch_unfold(value))
                except Exception:
                    text = None
                if text is None:
                    break
                values.append(clean_text(text))
            else:
                return values
        if any(len(value) > _MAX_REGISTRY_CHARS for value in raw_values):
            self._problems.append(f"{name} header too long to decode exactly")
            return [decode_raw_header(value) for value in raw_values]
        try:
            return [clean_text(str(_RICH.header_fetch_parse(name, value))) for value in raw_values]
        except Exception as error:
            self._problems.append(f"malformed {name} header: {type(error).__name__}")
            return [decode_raw_header(value) for value in raw_values]

    def first(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def date(self, problems: list[str]) -> datetime | None:
        """_date(self.first("Date")), parsing a plain Date only once."""
        raw_values = self.raw_all("Date")
        if not (self._rich and raw_values) or any(_SURROGATES.search(value) for value in raw_values):
            return _date(self.first("Date"), problems)
        try:
            for value in raw_values[1:]:
                _fast_date(_fetch_unfold(value))  # raises where the registry would
            first = _fetch_unfold(raw_values[0])
            if not first:
                return None
            try:
                parsed: datetime | None = email.utils.parsedate_to_datetime(first)
            except ValueError:
                parsed = None
        except Exception:
            return _date(self.first("Date"), problems)  # the registry's way, problems and all
        if parsed is None:
            # The registry keeps an invalid date as it is, and all() cleans it
            # (with a NUL removed it may parse after all).
            return _date(clean_text(first), problems)
        # The registry's value is format_datetime(parsed) (which cannot fail
        # for a year of 1 to 9999), and that parses back to the same date and
        # offset.
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed

    def plain_address(self, raw: str) -> tuple[str, str] | None:
        """_fast_address() of a raw value, computed once per value."""
        try:
            return self._plain_addresses[raw]
        except KeyError:
            pass
        try:
            found = _fast_address(_fetch_unfold(raw))
        except Exception:
            found = None
        self._plain_addresses[raw] = found
        return found

    def has(self, name: str) -> bool:
        return bool(self.raw_all(name))

    def address(self, name: str) -> tuple[str, str] | None:
        """(display name, lower-cased address) of the first address in the header."""
        raw_values = self.raw_all(name)
        if not raw_values:
            return None
        if self._rich:
            found = self.plain_address(raw_values[0])
            if found is not None:
                return found
        if self._rich and len(raw_values[0]) > _MAX_REGISTRY_CHARS:
            self._problems.append(f"{name} header too long to decode exactly")
        elif self._rich:
            try:
                header = _RICH.header_fetch_parse(name, raw_values[0])
                for addr in getattr(header, "addresses", ()):
                    spec = clean_text(addr.addr_spec or "")
                    if "@" in spec:
                        return clean_text(addr.display_name or ""), spec.strip().lower()
            except Exception as error:
                self._problems.append(f"malformed {name} header: {type(error).__name__}")
        # Fallback: the lenient old parser on the decoded raw value.
        decoded = decode_raw_header(raw_values[0])
        for display, spec in email.utils.getaddresses([decoded]):
            if "@" in spec:
                return clean_text(display), clean_text(spec).strip().lower()
        # Last resort: anything shaped like an address.
        found_text = _shaped_like_address(decoded)
        if found_text:
            return "", found_text.lower()
        return None


# ------------------------------------------------------- header fast paths
#
# Each fast reader takes a header value unfolded the way policy.default
# unfolds it (CR and LF dropped, the white space after them kept) and returns
# exactly the string the registry's header object would be, or None when the
# value is not of a shape it knows for sure; then the registry reads it.


def _fetch_unfold(value: str) -> str:
    # policy.default.header_fetch_parse: ''.join(re.split(r'\n|\r', value))
    if "\r" in value or "\n" in value:
        return value.replace("\r", "").replace("\n", "")
    return value


# One RFC 2047 encoded word of a shape the registry decodes without a defect:
# no language tag, strict Q or B text (B with correct padding). The Q text may
# not hold "?" (the registry ends the word at the first "?=").
_EW = re.compile(
    r"=\?([^?*\s]+)\?(?:[qQ]\?((?:[!-<>@-~]|=[0-9A-Fa-f]{2})*)"
    r"|[bB]\?((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?))\?="
)
_WSP_RUN = re.compile(r"([ \t]+)")  # keeps the gaps
_WSP_SPLIT = re.compile(r"[ \t]+")
_OTHER_SPACE = re.compile(r"[^\S \t]")  # white space other than space and tab


def _decode_ew(match: re.Match[str]) -> str | None:
    """The text of a well-formed encoded word, as the registry decodes it, or
    None if the registry would meet a defect (unknown charset, bad bytes)."""
    charset, q_text, b_text = match.groups()
    if q_text is not None:
        # The registry: "_" to space, then each =XX to its byte. The strict Q
        # text of _EW has no other "=", so binascii does just that.
        data = binascii.a2b_qp(q_text.encode("ascii"), header=True)
    else:
        data = base64.b64decode(b_text, validate=True)
    try:
        text = data.decode(charset)
    except Exception:
        return None
    if _ANY_SURROGATE.search(text):
        return None
    return text


def _fast_unstructured(value: str) -> str | None:
    """get_unstructured(): text kept as is, encoded words decoded, and the white
    space between two encoded words dropped (RFC 2047 section 6.2)."""
    if "=?" not in value:
        return value
    if _OTHER_SPACE.search(value):
        return None  # the registry's idea of white space is wider there
    pieces = _WSP_RUN.split(value)  # word, gap, word, gap, ..., word
    out: list[str] = []
    after_ew = False
    for index in range(0, len(pieces), 2):
        word, gap = pieces[index], pieces[index - 1] if index else ""
        match = _EW.fullmatch(word) if word else None
        if match is None:
            if "=?" in word:
                return None  # a glued or broken encoded word: the registry's call
            out.append(gap + word)
            after_ew = False
            continue
        text = _decode_ew(match)
        if text is None:
            return None
        out.append(text if after_ew else gap + text)
        after_ew = True
    return "".join(out)


def _fast_date(value: str) -> str | None:
    """DateHeader: the date in canonical form, or the value as is if invalid."""
    if not value:
        return ""
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except ValueError:
        return value
    return email.utils.format_datetime(parsed)


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_ADDR_SPEC = rf"{_DOT_ATOM}@{_DOT_ATOM}"
_PLAIN_MESSAGE_ID = re.compile(rf"[ \t]*<{_ADDR_SPEC}>[ \t]*")


def _fast_message_id(value: str) -> str | None:
    """MessageIDHeader: a plain <left@right> id reads as itself."""
    if "=?" in value or not _PLAIN_MESSAGE_ID.fullmatch(value):
        return None
    return value


def _fast_text_reader(name: str) -> Callable[[str], str | None] | None:
    cls = _RICH.header_factory.registry.get(name.lower(), headerregistry.UnstructuredHeader)
    if issubclass(cls, headerregistry.UnstructuredHeader):
        return _fast_unstructured
    if issubclass(cls, headerregistry.DateHeader):
        return _fast_date
    if issubclass(cls, headerregistry.MessageIDHeader):
        return _fast_message_id
    return None


# Display names may hold raw 8-bit bytes (surrogate escapes, RFC 6532); the
# registry keeps them in the name, and clean_text() decodes them, as before.
_BARE_ADDRESS = re.compile(rf"[ \t]*({_ADDR_SPEC})[ \t]*")
_ADDR_SPEC_RE = re.compile(_ADDR_SPEC)
_PLAIN_QUOTED_NAME = re.compile(r'"[ \t!#-\[\]-~\udc80-\udcff]*"')
_EW_SPACE_RUN = re.compile(r"[ \t]\s*")
_PHRASE_ATOM = re.compile("[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\udc80-\udcff-]+")


def _fast_address(value: str) -> tuple[str, str] | None:
    """(display name, lower-cased address) of `address`, `<address>`,
    `Name Words <address>` or `"Quoted Name" <address>`, as the registry reads
    them; None for any other shape (groups, comments, lists, quoted-pairs,
    odd characters), which the registry reads instead."""
    match = _BARE_ADDRESS.fullmatch(value)
    if match:
        display, spec = "", match.group(1)
    else:
        found = _name_address(value)
        if found is None:
            return None
        quoted, phrase, spec = found
        if quoted is not None:
            if "=?" in quoted:
                return None  # the registry decodes encoded words in quotes too
            display = quoted[1:-1]
        else:
            display = _fast_phrase(phrase)
            if display is None:
                return None
    if "=?" in spec or "\r" in display or "\n" in display:
        return None  # the registry rejects a name with a line break
    return clean_text(display), spec.lower()


def _name_address(value: str) -> tuple[str | None, str, str] | None:
    """(quoted name or None, phrase, addr-spec) of `Name Words <addr-spec>`
    or `"Quoted Name" <addr-spec>` with blanks around, else None. This was
    the regex [ \\t]*(?:("...")|([^"<>]*?))[ \\t]*<(addr-spec)>[ \\t]*, whose
    lazy name before [ \\t]*< took cubic time on a long run of blanks; here
    the same groups in one pass: the addr-spec holds no "<", so its "<" is
    the last one."""
    body = value.rstrip(" \t")
    if not body.endswith(">"):
        return None
    lt = body.rfind("<")
    if lt < 0 or not _ADDR_SPEC_RE.fullmatch(body, lt + 1, len(body) - 1):
        return None
    name = body[:lt].strip(" \t")
    if _PLAIN_QUOTED_NAME.fullmatch(name):
        return name, "", body[lt + 1:-1]
    if '"' in name or "<" in name or ">" in name:
        return None
    return None, name, body[lt + 1:-1]


def _shaped_like_address(text: str) -> str | None:
    """The first match of [^specials]+@[^specials]+ in text, or None. As a
    regex search that took quadratic time on a long run without "@" (it was
    scanned again from each of its characters); here each run once: the
    first run that ends at an "@" followed by another run."""
    for run in _ADDRESS_RUN.finditer(text):
        end = run.end()
        if text[end:end + 1] == "@":
            after = _ADDRESS_RUN.match(text, end + 1)
            if after is not None:
                return text[run.start():after.end()]
    return None


def _fast_phrase(phrase: str) -> str | None:
    """The display name of a phrase of atoms and encoded words: the words
    decoded and joined with single spaces.

    The one intended difference from policy.default: between two encoded words
    its phrase parser keeps the white space (as one space), so
    "=?utf-8?q?J=C3=BCrgen_?= =?utf-8?q?M=C3=BCller?=", the way mailers split a
    long name, came out as "Jürgen  Müller". RFC 2047 (section 6.2) says that
    space is not part of the text, and every mail program shows "Jürgen
    Müller": so here it is dropped, as in an unstructured header like Subject.
    (Only on this fast path; odder display names still go to the registry.)
    """
    phrase = phrase.strip(" \t")
    if not phrase:
        return ""
    if phrase[0] == "." or phrase[-1] == ".":
        return None  # the registry stumbles on these (AttributeError) and falls back
    words = _WSP_SPLIT.split(phrase)
    out: list[str] = []
    last_ew = False
    for word in words:
        match = _EW.fullmatch(word)
        if match is not None:
            text = _decode_ew(match)
            if text is None:
                return None
            # In a phrase the registry reads each run of white space in the
            # decoded text (from a space or tab on) as one space.
            text = _EW_SPACE_RUN.sub(" ", text)
            if out and not last_ew:
                out.append(" ")
            out.append(text)
            last_ew = True
        elif "=?" not in word and _PHRASE_ATOM.fullmatch(word):
            if out:
                out.append(" ")
            out.append(word)
            last_ew = False
        else:
            return None
    return "".join(out)


def decode_raw_header(value: str) -> str:
    """Decode a raw header value (RFC 2047 words, surrogate-escaped 8-bit bytes)."""
    text = _unfold(_desurrogate(value))
    if "=?" not in text:
        return clean_text(text)
    if len(text) > _MAX_REGISTRY_CHARS:
        # email.header.decode_header() scans for the end of an encoded word
        # from every "=?" and joins its pieces one by one: quadratic.
        return clean_text(_decode_words(text))
    try:
        return clean_text(str(email.header.make_header(email.header.decode_header(text))))
    except Exception:
        pass  # unknown charset or broken bytes in a word: decode word by word
    try:
        parts = email.header.decode_header(text)
    except Exception:
        return clean_text(text)
    out: list[str] = []
    for chunk, charset in parts:
        if isinstance(chunk, str):
            out.append(chunk)
        elif charset is None:
            # decode_header hands back unencoded runs as raw-unicode-escape bytes
            out.append(chunk.decode("raw-unicode-escape", errors="replace"))
        else:
            out.append(decode_bytes(chunk, charset, [])[0])
    return clean_text("".join(out))


def _decode_words(text: str) -> str:
    """Encoded words decoded in one pass (white space between two of them
    dropped, RFC 2047 section 6.2); anything else kept as it is."""
    pieces = _WSP_RUN.split(text)  # word, gap, word, gap, ..., word
    out: list[str] = []
    after_ew = False
    for index in range(0, len(pieces), 2):
        word, gap = pieces[index], pieces[index - 1] if index else ""
        match = _EW.fullmatch(word) if "=?" in word else None
        if match is None:
            out.append(gap + word)
            after_ew = False
            continue
        charset, q_text, b_text = match.groups()
        if q_text is not None:
            data = binascii.a2b_qp(q_text.encode("ascii"), header=True)
        else:
            data = base64.b64decode(b_text, validate=True)
        decoded = decode_bytes(data, charset, [])[0]
        out.append(decoded if after_ew else gap + decoded)
        after_ew = True
    return "".join(out)


def _unfold(text: str) -> str:
    return _LINE_BREAKS.sub(" ", text).strip()


def _single_line(text: str) -> str:
    # A Subject may decode to text with line breaks (encoded "=0A"); a reply
    # subject built from it must not break the header.
    return re.sub(r"\s+", " ", text).strip()


def _message_id(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    match = _ANGLE_ID.search(text)
    if match:
        inner = re.sub(r"\s+", "", match.group(1))
    else:
        # Some clients write ids without the angle brackets; keep them comparable.
        inner = text.split()[0] if text.split() else ""
    # Ids serve as keys (deduplication, threading); an absurdly long one is
    # treated as missing rather than let it strain an index.
    if not inner or len(inner.encode("utf-8")) > _MAX_ID_BYTES:
        return None
    return f"<{inner}>"


def _valid_address(address: str | None) -> bool:
    # ASCII only: the judge answers through plain SMTP (no SMTPUTF8), and an
    # address it cannot write a reply to must not become the sender (a
    # fuzzed 8-bit From once made every reply, and the quarantine's, fail).
    if not address or len(address) > 254 or not address.isascii():
        return False
    local, at, domain = address.rpartition("@")
    return bool(at and local and domain and "@" not in domain and not re.search(r"[\s<>,;]", address))


def _sender(headers: _Headers, problems: list[str]) -> tuple[str | None, str]:
    """(sender, display name) of the mail; sender None when the mail names no
    one sender. The sender is the addr-spec of the one mailbox of the one From
    header, read by from_address() as RFC 5322 writes it: never an address
    from a display name, a comment or a decoded encoded word (RFC 2047 section
    5), and no lenient guessing. Several From headers (RFC 7489 section 6.6.1),
    a list, an empty group or a malformed From give None and a problem."""
    raw_values = headers.raw_all("From")
    if not raw_values:
        problems.append("no From")
        return None, ""
    if len(raw_values) > 1:
        problems.append("several From headers")
        return None, ""
    raw = raw_values[0]
    found = headers.plain_address(raw)
    if found is not None and raw.count("@") == 1 and not _FROM_SPECIALS.search(raw):
        # The fast path's `address` or `Words <address>` (atoms and encoded
        # words, no quotes): with no special character but the one "@" the
        # strict reader sees the same tokens and finds the same address.
        address, problem = found[1], None
    else:
        address, problem = from_address(raw)
    if address is None or not _valid_address(address):
        problems.append(problem or "no usable From")
        return None, ""
    # The display name, decoded as before (fast path, else the header
    # registry), but only where that reading found the same address: a name
    # is shown, never trusted.
    pair = _guard(lambda: headers.address("From"), None, problems, "From")
    display = pair[0] if pair is not None and pair[1] == address else ""
    if display and _shaped_like_address(display) is not None:
        # A name that is an address is not a name: "=?utf-8?q?victim=40example.test?=
        # <attacker@evil.test>" would be listed as "victim@example.test".
        display = ""
    return address, display or address.rpartition("@")[0]


# ------------------------------------------------------------ the From address
#
# A small RFC 5322 reader (section 3.4, with the obsolete forms of section 4.4
# that do no harm: CFWS around dots, a route in the angle-addr, empty list
# elements) for the one question the judge bases identity on: which mailbox
# does From name? A linear tokenizer (each token regex is anchored where the
# last one ended and cannot backtrack beyond its own token) and a single pass
# over the tokens. Encoded words are never decoded here: "=?utf-8?q?a=40b?="
# is an atom like any other (RFC 2047 section 5: an encoded word may stand in a
# phrase, never in an addr-spec), so it can only ever be part of a display
# name, or of a literal local part that names nobody else.

_FROM_SPECIALS = re.compile(r'[(),;:\\"\[\]]')  # the specials but ".", "@" and an angle-addr's "<>"
_FROM_TOKEN = re.compile(
    r"(?P<wsp>[ \t]+)"
    # atext, and any non-ASCII character (RFC 6532; 8-bit bytes are surrogate escapes here)
    r"|(?P<atom>[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x80-\U0010ffff-]+)"
    r'|(?P<quoted>"(?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\[\x09\x20-\x7e\x80-\U0010ffff])*")'
    r"|(?P<literal>\[[^\[\]\\\x00-\x08\x0a-\x1f\x7f]*\])"
    r"|(?P<special>[<>@,;:.])"
)
_QUOTED_PAIR = re.compile(r"\\(.)", re.S)
_DOT_ATOM_ENDS = frozenset('()<>@,;:\\"[] \t')  # as the registry decides to quote a local part


class _FromSyntax(Exception):
    """The From value is not an RFC 5322 address list; the text says why."""


def from_address(value: str) -> tuple[str | None, str | None]:
    """(lower-cased addr-spec, None) of the one mailbox a raw From value
    names, or (None, why not): not an address list, no mailbox at all (an
    empty group, a bare name), or several ("From holds 2 addresses"). The
    address is the angle-addr's when there is one, else the bare addr-spec;
    a display name may hold anything but is never read. Linear in the length
    of the value; never raises."""
    try:
        boxes = _mailboxes(_from_tokens(_fetch_unfold(value)))
    except _FromSyntax as error:
        return None, f"From is not an address: {error}"
    except Exception as error:  # a guard; the reader has no other failure
        return None, f"unreadable From: {type(error).__name__}"
    if not boxes:
        return None, "From holds no address"
    if len(boxes) > 1:
        return None, f"From holds {len(boxes)} addresses"
    return clean_text(boxes[0]).lower(), None


def _from_tokens(value: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: "atom", "quoted", "literal", or the special
    character itself as kind; white space and comments dropped."""
    tokens: list[tuple[str, str]] = []
    pos, end = 0, len(value)
    while pos < end:
        if value[pos] == "(":
            pos = _skip_comment(value, pos)
            continue
        match = _FROM_TOKEN.match(value, pos)
        if match is None:
            raise _FromSyntax(f"unexpected {value[pos]!r}" if value[pos].isprintable() else "a control character")
        kind = match.lastgroup
        if kind != "wsp":
            text = match.group()
            tokens.append((text if kind == "special" else kind, text))  # type: ignore[arg-type]
        pos = match.end()
    return tokens


def _skip_comment(value: str, pos: int) -> int:
    """The index after the (nested) comment that starts at value[pos]."""
    depth, end = 0, len(value)
    while pos < end:
        char = value[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    raise _FromSyntax("unterminated comment")


_PHRASE_KINDS = frozenset({"atom", "quoted", "."})
# A display name before an angle-addr may hold what RFC 5322 does not allow in
# a phrase ("anna@example.com <anna@example.com>", which many mailers write):
# it is never read for the address, so this leniency names nobody.
_DISPLAY_KINDS = frozenset({"atom", "quoted", ".", "@", "literal"})


def _mailboxes(tokens: list[tuple[str, str]]) -> list[str]:
    """The addr-specs of an address list (RFC 5322 address-list, groups
    included; RFC 6854 allows a group in From)."""
    boxes: list[str] = []
    pos, end = 0, len(tokens)
    in_group = False
    while pos < end:
        kind = tokens[pos][0]
        if kind == ",":
            pos += 1  # an empty list element (obs-addr-list)
            continue
        if kind == ";":
            if not in_group:
                raise _FromSyntax("';' outside a group")
            in_group = False
            pos += 1
            if pos < end and tokens[pos][0] != ",":
                raise _FromSyntax("text after a group")
            continue
        stop = pos
        while stop < end and tokens[stop][0] not in ("<", ":", ",", ";"):
            stop += 1
        stop_kind = tokens[stop][0] if stop < end else ""
        if stop_kind == ":":
            if in_group:
                raise _FromSyntax("a group inside a group")
            if stop == pos or any(k not in _PHRASE_KINDS for k, _ in tokens[pos:stop]):
                raise _FromSyntax("a group without a name")
            in_group = True
            pos = stop + 1
            continue
        if stop_kind == "<":
            if any(k not in _DISPLAY_KINDS for k, _ in tokens[pos:stop]):
                raise _FromSyntax("a display name with " + next(k for k, _ in tokens[pos:stop] if k not in _DISPLAY_KINDS))
            close = stop + 1
            while close < end and tokens[close][0] != ">":
                close += 1
            if close == end:
                raise _FromSyntax("'<' without '>'")
            boxes.append(_angle_addr(tokens[stop + 1:close]))
            pos = close + 1
        else:
            boxes.append(_addr_spec(tokens[pos:stop]))
            pos = stop
        if pos < end and tokens[pos][0] not in ((",", ";") if in_group else (",",)):
            raise _FromSyntax("text after an address")
    if in_group:
        raise _FromSyntax("a group without ';'")
    return boxes


def _angle_addr(tokens: list[tuple[str, str]]) -> str:
    """The addr-spec between '<' and '>', after an obsolete route if any
    ("<@relay.example,@other.example:anna@example.com>")."""
    if not tokens:
        raise _FromSyntax("an empty address <>")
    if tokens[0][0] in ("@", ","):
        colon = next((i for i, (k, _) in enumerate(tokens) if k == ":"), -1)
        if colon < 0:
            raise _FromSyntax("a broken route")
        route, tokens = tokens[:colon], tokens[colon + 1:]
        pos, seen_domain = 0, False
        while pos < len(route):
            if route[pos][0] == ",":
                pos += 1
                continue
            if route[pos][0] != "@":
                raise _FromSyntax("a broken route")
            stop = pos + 1
            while stop < len(route) and route[stop][0] not in (",", "@"):
                stop += 1
            _domain(route[pos + 1:stop])
            seen_domain, pos = True, stop
        if not seen_domain:
            raise _FromSyntax("a broken route")
    return _addr_spec(tokens)


def _addr_spec(tokens: list[tuple[str, str]]) -> str:
    """local-part "@" domain, the local part as the header registry writes it
    (its words unquoted, quoted again where needed). Dots may stand anywhere
    in the local part ("a..b", "a."; some mobile carriers hand such addresses
    out): that is unambiguous, so it is read, but two words need a dot."""
    at = next((i for i, (k, _) in enumerate(tokens) if k == "@"), -1)
    if at < 0:
        raise _FromSyntax("a name without an address" if tokens else "an empty address")
    local, domain = tokens[:at], tokens[at + 1:]
    parts: list[str] = []
    last_word = False
    for kind, text in local:
        if kind == ".":
            parts.append(".")
            last_word = False
        elif kind in ("atom", "quoted") and not last_word:
            parts.append(text if kind == "atom" else _QUOTED_PAIR.sub(r"\1", text[1:-1]))
            last_word = True
        else:
            raise _FromSyntax("a broken local part")
    local_part = "".join(parts)
    if local_part.strip(".") == "" and not any(kind == "quoted" for kind, _ in local):
        raise _FromSyntax("a broken local part")
    if not _DOT_ATOM_ENDS.isdisjoint(local_part):
        local_part = '"' + local_part.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return local_part + "@" + _domain(domain)


def _domain(tokens: list[tuple[str, str]]) -> str:
    """dot-atom or domain-literal, as written."""
    if len(tokens) == 1 and tokens[0][0] == "literal":
        return tokens[0][1]
    if not tokens or len(tokens) % 2 == 0:
        raise _FromSyntax("a broken domain")
    for i, (kind, _) in enumerate(tokens):
        if kind != ("." if i % 2 else "atom"):
            raise _FromSyntax("a broken domain")
    return "".join(text for _, text in tokens)


def _date(value: str | None, problems: list[str]) -> datetime | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except Exception:
        problems.append("broken Date")
        return None
    if parsed.tzinfo is None:
        # "-0000" means "time zone unknown"; UTC is the honest reading.
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


# ------------------------------------------------- Authentication-Results


def _from_authenticated(headers: _Headers, sender: str | None, trusted: frozenset[str]) -> bool | None:
    """InboundMail.from_authenticated; see parse_message()."""
    for raw in headers.raw_all("Authentication-Results"):
        tokens = _authres_tokens(_fetch_unfold(raw))
        if not tokens or tokens[0][0] not in ("word", "quoted") or tokens[0][1].lower() not in trusted:
            continue
        if sender is None:
            return False
        from_domain = _bare_domain(sender.rpartition("@")[2])
        return any(_vouches(resinfo, from_domain) for resinfo in _resinfos(tokens))
    return None


def _authres_tokens(value: str) -> list[tuple[str, str]]:
    """("word", text), ("quoted", unquoted text), ("=", "=") and (";", ";")
    tokens of a header value; white space and (nested) comments dropped. A
    word is a run of anything else ("dkim/1", "header.d", "user@example.com").
    One pass over the value."""
    tokens: list[tuple[str, str]] = []
    pos, end = 0, len(value)
    word_start = -1
    while pos < end:
        char = value[pos]
        if char in _AUTHRES_BREAKS:
            if word_start >= 0:
                tokens.append(("word", value[word_start:pos]))
                word_start = -1
            if char in "=;":
                tokens.append((char, char))
                pos += 1
            elif char == "(":
                depth = 0
                while pos < end:
                    if value[pos] == "\\":
                        pos += 2
                        continue
                    if value[pos] == "(":
                        depth += 1
                    elif value[pos] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    pos += 1
                pos += 1
            elif char == '"':
                text: list[str] = []
                pos += 1
                while pos < end and value[pos] != '"':
                    if value[pos] == "\\":
                        pos += 1
                    text.append(value[pos:pos + 1])
                    pos += 1
                tokens.append(("quoted", "".join(text)))
                pos += 1
            else:  # white space, a stray ")"
                pos += 1
        else:
            if word_start < 0:
                word_start = pos
            pos += 1
    if word_start >= 0:
        tokens.append(("word", value[word_start:]))
    return tokens


_AUTHRES_BREAKS = frozenset(' \t=;()"') | frozenset(chr(code) for code in range(32)) | {"\x7f"}


def _resinfos(tokens: list[tuple[str, str]]) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(method, result, {property: value}) of each resinfo after the
    authserv-id: "; dkim=pass header.d=example.com header.s=sel". A resinfo
    that breaks the name=value pattern is read up to the break."""
    pos, end = 0, len(tokens)
    while pos < end:
        while pos < end and tokens[pos][0] != ";":
            pos += 1
        pos += 1
        pairs: list[tuple[str, str]] = []
        while pos + 2 < end:
            name, equals, value = tokens[pos], tokens[pos + 1], tokens[pos + 2]
            if name[0] != "word" or equals[0] != "=" or value[0] not in ("word", "quoted"):
                break
            pairs.append((name[1].lower(), value[1]))
            pos += 3
        if pairs:
            method, result = pairs[0]
            properties: dict[str, str] = {}
            for key, value in pairs[1:]:
                properties.setdefault(key, value)
            yield method.partition("/")[0].strip(), result.lower(), properties


def _vouches(resinfo: tuple[str, str, dict[str, str]], from_domain: str) -> bool:
    method, result, properties = resinfo
    if result != "pass" or not from_domain:
        return False
    if method == "dmarc":
        header_from = properties.get("header.from")
        return header_from is None or _bare_domain(header_from.rpartition("@")[2]) == from_domain
    if method == "dkim":
        signer = properties.get("header.d") or properties.get("header.i", "").rpartition("@")[2]
        return _aligned(_bare_domain(signer), from_domain)
    if method == "spf":
        return _aligned(_bare_domain(properties.get("smtp.mailfrom", "").rpartition("@")[2]), from_domain)
    return False


def _bare_domain(domain: str) -> str:
    return domain.strip().rstrip(".").lower()


def _aligned(one: str, other: str) -> bool:
    """Equal, or one a subdomain of the other (the parent with a dot in it)."""
    if not one or not other or one.startswith("[") or other.startswith("["):
        return False
    if one == other:
        return True
    child, parent = (one, other) if len(one) > len(other) else (other, one)
    return "." in parent and child.endswith("." + parent)


# ---------------------------------------------------------------------------- body


def _tree(msg: Message) -> Iterator[Message]:
    """Every MIME part in document order. Descends into multipart/* only, not
    into attached messages (a forwarded mail's text is not the sender's
    commands). Iterative and bounded, so hostile nesting costs little."""
    stack: list[tuple[Message, int]] = [(msg, 0)]
    seen = 0
    while stack and seen < _MAX_PARTS:
        part, depth = stack.pop()
        seen += 1
        yield part
        if depth >= _MAX_MIME_DEPTH or _maintype(part) != "multipart":
            continue
        payload = part.get_payload()
        if isinstance(payload, list):
            children = [child for child in payload if isinstance(child, Message)]
            stack.extend((child, depth + 1) for child in reversed(children))


def _maintype(part: Message) -> str:
    return _content_type(part).partition("/")[0]


def _content_type(part: Message) -> str:
    """part.get_content_type(), "" if it fails; kept on the part, as each
    call looks the header up again among all of the part's headers (a mail's
    reading asked four times)."""
    cached = part.__dict__.get("_judge_content_type")
    if cached is None:
        try:
            cached = part.get_content_type()
        except Exception:
            cached = ""
        part.__dict__["_judge_content_type"] = cached
    return cached


def _content_type_value(part: Message) -> object:
    """part.get("content-type"), kept on the part like _content_type."""
    missing = object()
    cached = part.__dict__.get("_judge_content_type_value", missing)
    if cached is missing:
        cached = part.get("content-type")
        part.__dict__["_judge_content_type_value"] = cached
    return cached


def _is_attachment(part: Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment"
    except Exception:
        return False


def _body_text(msg: Message, problems: list[str]) -> str:
    html_part: Message | None = None
    for part in _tree(msg):
        if part.is_multipart():
            continue
        ctype = _content_type(part)
        if ctype not in ("text/plain", "text/html") or _is_attachment(part):
            continue
        if ctype == "text/plain":
            text = _normalise_text(_part_text(part, problems))
            flowed, delsp = _flowed(part)
            return decode_flowed(text, delsp=delsp) if flowed else text
        if html_part is None:
            html_part = part
    if html_part is not None:
        return _normalise_text(html_to_text(_part_text(html_part, problems)))
    problems.append("no text part")
    return ""


def _part_text(part: Message, problems: list[str]) -> str:
    payload = part.get_payload(decode=True)
    if payload is None:
        return ""
    if not isinstance(payload, bytes):
        payload = str(payload).encode("utf-8", "surrogateescape")
    try:
        charset = _content_charset(part)
    except Exception:
        charset = None
    return decode_bytes(payload, charset, problems)[0]


_PLAIN_PARAM = re.compile(rf";{_FWS}({_MIME_TOKEN}){_FWS}={_FWS}({_MIME_TOKEN}|{_PLAIN_QUOTED})")


def _plain_params(part: Message) -> dict[str, str] | None:
    """The parameters of a plain Content-Type (see _plain_mime), names
    lower-cased, values unquoted, the first of each name; None when the
    Content-Type is not plain. Read once a part (charset, format, delsp)."""
    missing = object()
    cached = part.__dict__.get("_judge_plain_params", missing)
    if cached is not missing:
        return cached  # type: ignore[return-value]
    value = _content_type_value(part)
    params: dict[str, str] | None = None
    # Exactly str: compat32's raw value (8-bit bytes would make it a Header,
    # policy.default a header object).
    if type(value) is str and "=?" not in value and _PLAIN_CONTENT_TYPE.fullmatch(value):
        params = {}
        for name, param in _PLAIN_PARAM.findall(value):
            params.setdefault(name.lower(), param[1:-1] if param[:1] == '"' else param)
    part.__dict__["_judge_plain_params"] = params
    return params


def _flowed(part: Message) -> tuple[bool, bool]:
    """(format=flowed, DelSp=yes) of a text/plain part (RFC 3676)."""
    params = _plain_params(part)
    if params is not None:
        return is_flowed(params)
    try:
        params = {}
        for name in ("format", "delsp"):
            param = part.get_param(name)
            if isinstance(param, tuple):  # an RFC 2231 value
                param = email_utils.collapse_rfc2231_value(param)
            params[name] = str(param or "")
        return is_flowed(params)
    except Exception:
        return False, False


def _content_charset(part: Message) -> str | None:
    """part.get_content_charset(), read straight from a plain Content-Type,
    where that method's general parameter parsing gives the same: the first
    charset parameter, unquoted, lower-cased."""
    params = _plain_params(part)
    if params is not None:
        charset = params.get("charset")
        return charset.lower() if charset is not None else None
    return part.get_content_charset()


def decode_bytes(data: bytes, charset: str | None, problems: list[str]) -> tuple[str, str | None]:
    """Decode body or header bytes with their declared charset.

    Unknown charset: UTF-8 if the bytes are valid UTF-8, else Latin-1 (every
    byte maps, and Western players' 8-bit mail is mostly Latin-1/cp1252).
    Known charset but broken bytes: that charset with replacement characters,
    which keeps all the well-formed text intact.
    """
    name = (charset or "").strip().strip('"').lower()
    codec = _text_codec(name) if name and name not in ("us-ascii", "ascii") else None
    problem: str | None = None
    if codec is not None:
        try:
            return clean_text(data.decode(codec)), None
        except Exception:
            problem = f"broken charset {name}"
    elif name and name not in ("us-ascii", "ascii", "unknown-8bit"):
        problem = f"undecodable charset {name}"
    if problem:
        problems.append(problem)
    try:
        return clean_text(data.decode("utf-8")), problem
    except UnicodeDecodeError:
        pass
    if codec is not None:
        try:
            return clean_text(data.decode(codec, errors="replace")), problem
        except Exception:
            pass
    return clean_text(data.decode("latin-1")), problem


def _text_codec(name: str) -> str | None:
    try:
        info = codecs.lookup(name)
    except Exception:
        return None
    # "base64", "rot13", "zlib" are codecs too, but not text encodings.
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info.name


def _normalise_text(text: str) -> str:
    return _LINE_BREAKS.sub("\n", text)


def clean_text(text: str) -> str:
    """A string safe to store: surrogate escapes decoded, NUL and other control
    characters (except tab and line breaks) removed."""
    return _CONTROL_CHARS.sub("", _desurrogate(text))


def _desurrogate(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


# --------------------------------------------------------------- auto detection


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


def _note_defects(msg: Message, problems: list[str]) -> None:
    try:
        for part in _tree(msg):
            for defect in getattr(part, "defects", ()):
                problems.append(f"broken MIME: {type(defect).__name__}")
    except Exception:
        problems.append("broken MIME")
