"""RFC 2047 encoded words ("=?utf-8?q?J=C3=BCrgen?="), decoded by hand:
decode_raw_header() reads a raw header value that the header registry
refused or that is too long for it (its cost grows with the square of a
value's length; here it is linear)."""

from __future__ import annotations

import base64
import binascii
import email.header
import re

from judge.mail.inbound.charsets import _LINE_BREAKS, _desurrogate, clean_text, decode_bytes
from judge.mail.inbound.limits import _MAX_REGISTRY_CHARS

_ANY_SURROGATE = re.compile("[\ud800-\udfff]")


# One RFC 2047 encoded word of a shape the registry decodes without a defect:
# no language tag, strict Q or B text (B with correct padding). The Q text may
# not hold "?" (the registry ends the word at the first "?=").
_EW = re.compile(
    r"=\?([^?*\s]+)\?(?:[qQ]\?((?:[!-<>@-~]|=[0-9A-Fa-f]{2})*)"
    r"|[bB]\?((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?))\?="
)
_WSP_RUN = re.compile(r"([ \t]+)")  # keeps the gaps


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
