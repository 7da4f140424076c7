"""The MIME structure of a mail, read in bounded time.

The email package's parser, stopped at the first part nested deeper than
_MAX_MIME_DEPTH, with a one-pass MIME parameter split; the cheap compat32
parse serves unless a part's MIME headers are not of a plain shape (then
policy.default parses the mail, as it reads those headers slightly
differently and might cut the parts elsewhere); and a bounded walk over
the parts."""

from __future__ import annotations

import re
from email import policy
from email import utils as email_utils
from email.feedparser import BytesFeedParser
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser
from typing import Iterator

from judge.mail.inbound.charsets import _SURROGATES
from judge.mail.inbound.limits import _MAX_MIME_DEPTH, _MAX_PARTS, _MAX_RICH_MIME_CHARS


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
_RICH_PARSER = _BoundedParser(policy.default, _RichMessage)


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


def _note_defects(msg: Message, problems: list[str]) -> None:
    try:
        for part in _tree(msg):
            for defect in getattr(part, "defects", ()):
                problems.append(f"broken MIME: {type(defect).__name__}")
    except Exception:
        problems.append("broken MIME")
