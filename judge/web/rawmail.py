"""A stored mail as the console shows it: its header, its body as it came
(when it is plain text), and the text the judge read, with every password
masked as in the replies (judge.syntax.mask_secret).

An encoded body (base64, quoted-printable) is never shown as it came: a
password in it would be masked by no line-based rule, so only its decoded
text is shown, masked. Encoded words in the header (=?utf-8?b?...?=) are
shown decoded, masked too. Everything here is linear in the mail's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.masking import decoded, header_lines, mask_line, mask_text, split

SHOWN_BYTES = 256 * 1024
_ENCODED = re.compile(rb"(?im)^content-transfer-encoding[ \t]*:[ \t]*\"?(base64|quoted-printable)")


@dataclass(frozen=True)
class ShownMail:
    header: str  # one line a header field, unfolded, decoded, masked
    body: str | None  # the body as it came, masked; None when encoded
    why_no_body: str | None
    text: str  # what the judge read of it, masked
    truncated: bool


def show(raw: bytes, own_address: str) -> ShownMail:
    from judge.mail.inbound import parse_message

    head, body = split(raw)
    header = "\n".join(mask_line(decoded(f)) for f in header_lines(head.decode("utf-8", "replace")))
    truncated = len(body) > SHOWN_BYTES
    if _ENCODED.search(raw):
        shown_body, why = None, ("its body is encoded (base64 or quoted-printable): only the text the judge "
                                 "read from it is shown, below")
    else:
        shown_body, why = mask_text(body[:SHOWN_BYTES].decode("utf-8", "replace").replace("\r\n", "\n")), None
    text = mask_text(parse_message(raw, own_addresses=[own_address]).text)
    return ShownMail(header=header, body=shown_body, why_no_body=why, text=text, truncated=truncated)
