"""Message-IDs and the key a mail is stored under: a header's id made
comparable, a stand-in id for a mail without one, and dedup_key_of(), which
`judge deliver` and the daemon compute before anything else is read."""

from __future__ import annotations

import hashlib
import re
from email import policy
from email.parser import BytesHeaderParser

from judge.mail.inbound.charsets import clean_text
from judge.mail.inbound.limits import _MAX_ID_BYTES

_ANGLE_ID = re.compile(r"<([^<>]*)>")


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
