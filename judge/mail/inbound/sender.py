"""Who sent the mail: the addr-spec of the one mailbox of the one From
header, read strictly as RFC 5322 writes it (from_address()): no address out
of a display name, a comment or a decoded encoded word, no lenient guess;
several From headers or mailboxes give none. The display name is shown,
never trusted."""

from __future__ import annotations

import re

from judge.mail.inbound.charsets import clean_text
from judge.mail.inbound.fast_headers import _fetch_unfold, _shaped_like_address
from judge.mail.inbound.guard import _guard
from judge.mail.inbound.headers import _Headers


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
