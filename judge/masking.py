"""Passwords masked in any text a person reads: a mail's lines as the
replies mask them (judge.syntax.mask_secret), also where a password command
stands inside a line, and a mail's passwords wherever else they turn up (a
bug's traceback may quote a command). For the web console's pages and for
`judge quarantine`."""

from __future__ import annotations

import re

from judge.syntax import mask_secret

# Passwords follow these words (mask_secret's rules): masked also where they
# stand inside a line ("I sent SIGNON ?g pw"), not only at its start as a
# command line would; the blinding protocol's tokens only at a line's start,
# as the replies mask them (mid-line they would mask ordinary words).
_PASSWORD_WORDS = re.compile(r"(?i)\b(?:sign[ \t]*on|create|set[ \t]*password)\b")
# Past this many password words in one line, the rest of the line is masked whole.
_MAX_HITS = 20


def mask_line(line: str) -> str:
    line = mask_secret(line)
    for hits, m in enumerate(_PASSWORD_WORDS.finditer(line)):
        if hits >= _MAX_HITS:
            return line[:m.start()] + "*" * (len(line) - m.start())
        # Stars replace characters one for one, so later matches keep their place.
        line = line[:m.start()] + mask_secret(line[m.start():])
    return line


def mask_text(text: str) -> str:
    return "\n".join(mask_line(line) for line in text.split("\n"))


def secrets_in(text: str) -> set[str]:
    """The passwords of a mail's lines (what mask_line hides), to hide them
    anywhere else they turn up: a bug's traceback may quote a command."""
    found: set[str] = set()
    for line in text.split("\n"):
        masked = mask_line(line)
        i = 0
        while i < len(line):
            if masked[i] == "*" and line[i] != "*":
                j = i
                while j < len(line) and masked[j] == "*":
                    j += 1
                found.update(w for w in [line[i:j].strip(), *line[i:j].split()] if w)
                i = j
            else:
                i += 1
    return found


def mask_known(text: str, secrets: set[str]) -> str:
    """`text` masked by lines, and each of `secrets` masked wherever it stands."""
    text = mask_text(text)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "*" * len(secret))
    return text


def secrets_of_mail(raw: bytes, own_address: str | None = None) -> set[str]:
    """The passwords of a stored mail: of its header fields and of the text the judge read."""
    from judge.mail.inbound import parse_message

    head, _ = split(raw)
    fields = "\n".join(decoded(f) for f in header_lines(head.decode("utf-8", "replace")))
    text = parse_message(raw, own_addresses=[own_address] if own_address else []).text
    return secrets_in(fields) | secrets_in(text)


def header_lines(block: str) -> list[str]:
    """The header fields, each unfolded into one line."""
    fields: list[str] = []
    for line in block.split("\n"):
        line = line.rstrip("\r")
        if line[:1] in (" ", "\t") and fields:
            fields[-1] += " " + line.strip()
        elif line:
            fields.append(line)
    return fields


def decoded(field: str) -> str:
    """A header field with its encoded words decoded, as the judge reads
    them (judge.mail.inbound: linear in the field's length)."""
    if "=?" not in field:
        return field
    from judge.mail.inbound import decode_raw_header

    name, _, value = field.partition(":")
    return f"{name}: {decode_raw_header(value)}"


def split(raw: bytes) -> tuple[bytes, bytes]:
    """The header block and the body, at the first empty line (CRLF or LF)."""
    ends = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := raw.find(sep)) >= 0]
    if not ends:
        return raw, b""
    i, n = min(ends)
    return raw[:i], raw[i + n:]
