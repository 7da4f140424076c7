"""Read one raw inbound mail into the few facts the judge acts on.

parse_message() is the border between the hostile outside world and the judge:
whatever bytes arrive (spam, broken MUAs, fuzzers), it returns an InboundMail and
never raises. Every step is guarded on its own so one broken header costs only
that field, and each oddity is written into `problems` for the logs.

All text fields are clean Python strings: no lone surrogates (8-bit header bytes
are decoded as UTF-8, else Latin-1) and no NUL characters, because both would
break storing them later.
"""

from __future__ import annotations

import codecs
import email.header
import email.utils
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email import policy
from email.message import Message
from email.parser import BytesHeaderParser, BytesParser
from typing import Callable, Iterable, Iterator, TypeVar

from judge.mail.html2text import html_to_text

T = TypeVar("T")

# Deeper MIME nesting than this is not a real mail; stop walking instead of
# spending time (or recursion) on it.
_MAX_MIME_DEPTH = 50
_MAX_PARTS = 500
_MAX_ID_BYTES = 998

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_SURROGATES = re.compile("[\udc80-\udcff]")
_ANGLE_ID = re.compile(r"<([^<>]*)>")
_ADDRESS = re.compile(r"[^\s@<>()\[\],;:\"\\]+@[^\s@<>()\[\],;:\"\\]+")

_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_BOUNCE_LOCALPARTS = frozenset({"mailer-daemon", "postmaster"})
_SUPPRESS_TOKENS = frozenset({"all", "oof"})


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


def parse_message(raw: bytes, *, own_addresses: Iterable[str] = ()) -> InboundMail:
    """The judge's view of one raw mail. Never raises for any input bytes."""
    problems: list[str] = []
    raw = bytes(raw) if not isinstance(raw, bytes) else raw
    fallback_id = synthetic_message_id(raw)
    try:
        own = _normalise_own(own_addresses)
        return _parse(raw, own, fallback_id, problems)
    except Exception as error:  # last line of defence; each step is guarded too
        problems.append(f"parser failure: {type(error).__name__}")
        return InboundMail(
            message_id=fallback_id,
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


def message_id_of(raw: bytes) -> str:
    """The Message-ID alone, fast: the key the judge stores a mail under.
    Reads only the header block (no MIME parsing); never raises."""
    try:
        head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
        msg = BytesHeaderParser(policy=policy.compat32).parsebytes(head)
        value = msg.get("Message-ID")
        found = _message_id(str(value)) if value is not None else None
    except Exception:
        found = None
    return found or synthetic_message_id(raw)


def synthetic_message_id(raw: bytes) -> str:
    """The stand-in Message-ID of a mail that has none: stable for the same bytes."""
    return "<" + hashlib.sha256(raw).hexdigest() + "@judge.invalid>"


# --------------------------------------------------------------------------- core


def _parse(raw: bytes, own: frozenset[str], fallback_id: str, problems: list[str]) -> InboundMail:
    try:
        msg: Message = BytesParser(policy=policy.default).parsebytes(raw)
    except Exception as error:
        problems.append(f"broken MIME: {type(error).__name__}")
        msg = BytesParser(policy=policy.compat32).parsebytes(raw)
    headers = _Headers(msg, problems)

    message_id = _guard(lambda: _message_id(headers.first("Message-ID")), None, problems, "Message-ID")
    if message_id is None:
        message_id = fallback_id
        problems.append("no Message-ID")

    from_pair = _guard(lambda: headers.address("From"), None, problems, "From")
    sender, sender_name = _sender(from_pair, headers, problems)
    reply_pair = _guard(lambda: headers.address("Reply-To"), None, problems, "Reply-To")
    reply_to = reply_pair[1] if reply_pair and _valid_address(reply_pair[1]) else sender

    subject = _guard(lambda: _single_line(headers.first("Subject") or ""), "", problems, "Subject")
    in_reply_to = _guard(lambda: _message_id(headers.first("In-Reply-To")), None, problems, "In-Reply-To")
    date = _guard(lambda: _date(headers.first("Date"), problems), None, problems, "Date")
    text = _guard(lambda: _body_text(msg, problems), "", problems, "body")
    auto = _guard(lambda: _auto_reason(msg, headers, sender, own), None, problems, "auto detection")
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
    )


def _guard(step: Callable[[], T], default: T, problems: list[str], what: str) -> T:
    try:
        return step()
    except Exception as error:
        problems.append(f"unreadable {what}: {type(error).__name__}")
        return default


# ------------------------------------------------------------------------ headers


class _Headers:
    """Header access that survives malformed headers.

    The default policy parses headers lazily into rich objects and raises on some
    malformed values; then the raw value is decoded by hand (RFC 2047 words,
    8-bit bytes as UTF-8 or Latin-1) instead.
    """

    def __init__(self, msg: Message, problems: list[str]) -> None:
        self._msg = msg
        self._problems = problems

    def raw_all(self, name: str) -> list[str]:
        wanted = name.lower()
        try:
            items = list(self._msg.raw_items())
        except Exception:
            return []
        return [str(value) for key, value in items if str(key).lower() == wanted]

    def all(self, name: str) -> list[str]:
        raw_values = self.raw_all(name)
        if any(_SURROGATES.search(value) for value in raw_values):
            # 8-bit bytes in the header: the default policy turns every non-UTF-8
            # byte into U+FFFD; decoding by hand keeps Latin-1 headers readable.
            return [decode_raw_header(value) for value in raw_values]
        try:
            values = self._msg.get_all(name) or []
            return [clean_text(str(value)) for value in values]
        except Exception as error:
            self._problems.append(f"malformed {name} header: {type(error).__name__}")
            return [decode_raw_header(value) for value in self.raw_all(name)]

    def first(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def has(self, name: str) -> bool:
        return bool(self.raw_all(name))

    def address(self, name: str) -> tuple[str, str] | None:
        """(display name, lower-cased address) of the first address in the header."""
        try:
            header = self._msg.get(name)
            if header is None:
                return None
            for addr in getattr(header, "addresses", ()):
                spec = clean_text(addr.addr_spec or "")
                if "@" in spec:
                    return clean_text(addr.display_name or ""), spec.strip().lower()
        except Exception as error:
            self._problems.append(f"malformed {name} header: {type(error).__name__}")
        # Fallback: the lenient old parser on the decoded raw value.
        raw_values = self.raw_all(name)
        if not raw_values:
            return None
        decoded = decode_raw_header(raw_values[0])
        for display, spec in email.utils.getaddresses([decoded]):
            if "@" in spec:
                return clean_text(display), clean_text(spec).strip().lower()
        # Last resort: anything shaped like an address.
        found = _ADDRESS.search(decoded)
        if found:
            return "", found.group(0).lower()
        return None


def decode_raw_header(value: str) -> str:
    """Decode a raw header value (RFC 2047 words, surrogate-escaped 8-bit bytes)."""
    text = _unfold(_desurrogate(value))
    if "=?" not in text:
        return clean_text(text)
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
    if not address or len(address) > 254:
        return False
    local, at, domain = address.rpartition("@")
    return bool(at and local and domain and "@" not in domain and not re.search(r"[\s<>,;]", address))


def _sender(
    pair: tuple[str, str] | None, headers: _Headers, problems: list[str]
) -> tuple[str | None, str]:
    if pair is None:
        problems.append("no usable From" if headers.has("From") else "no From")
        return None, ""
    display, address = pair
    if not _valid_address(address):
        problems.append("no usable From")
        return None, display
    return address, display or address.rpartition("@")[0]


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
    try:
        return part.get_content_maintype()
    except Exception:
        return ""


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
        try:
            ctype = part.get_content_type()
        except Exception:
            continue
        if ctype not in ("text/plain", "text/html") or _is_attachment(part):
            continue
        if ctype == "text/plain":
            return _normalise_text(_part_text(part, problems))
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
        charset = part.get_content_charset()
    except Exception:
        charset = None
    return decode_bytes(payload, charset, problems)[0]


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
    result: set[str] = set()
    for entry in own_addresses:
        _, address = email.utils.parseaddr(str(entry))
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
        if msg.get_content_type() == "multipart/report":
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
        decoded = decode_raw_header(raw)
        _, address = email.utils.parseaddr(decoded)
        candidate = (address or decoded).strip().lower()
        local = candidate.rpartition("@")[0] if "@" in candidate else candidate
        if local:
            return local
    return ""


def _note_defects(msg: Message, problems: list[str]) -> None:
    try:
        for part in _tree(msg):
            for defect in getattr(part, "defects", ()):
                problems.append(f"broken MIME: {type(defect).__name__}")
    except Exception:
        problems.append("broken MIME")
