"""Authentication-Results (RFC 8601): did the judge's own mail server vouch
for the From domain? Only the topmost header of a trusted authserv-id is
read, by a linear tokenizer; see parse_message() for the rules."""

from __future__ import annotations

from typing import Iterator

from judge.mail.inbound.fast_headers import _fetch_unfold
from judge.mail.inbound.headers import _Headers


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
