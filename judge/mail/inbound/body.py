"""The text of a mail: its first text/plain part that is not an
attachment (RFC 3676 format=flowed decoded), else its first text/html part
as text; in the charset the part declares (judge/mail/inbound/charsets.py).
Attached messages are not read: a forwarded mail's text is not the
sender's commands."""

from __future__ import annotations

import re
from email import utils as email_utils
from email.message import Message

from judge.mail.flowed import decode_flowed, is_flowed
from judge.mail.html2text import html_to_text
from judge.mail.inbound.charsets import _normalise_text, decode_bytes
from judge.mail.inbound.mime import (
    _FWS,
    _MIME_TOKEN,
    _PLAIN_CONTENT_TYPE,
    _PLAIN_QUOTED,
    _content_type,
    _content_type_value,
    _tree,
)


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
