"""The header fast paths: exact readers of the ordinary header shapes.

policy.default's header registry costs about a millisecond per mail, so a
header value of an ordinary shape (plain text, well-formed RFC 2047 words,
"Name <address>", a plain Message-ID or Date) is read here instead. Each
fast reader takes a header value unfolded the way policy.default unfolds it
(CR and LF dropped, the white space after them kept) and returns exactly
the string the registry's header object would be, or None when the value is
not of a shape it knows for sure; then the registry reads it
(judge/mail/inbound/headers.py). The one intended difference: see
_fast_phrase (white space between two encoded words in a display name)."""

from __future__ import annotations

import email.utils
import re
from email import headerregistry, policy
from typing import Callable

from judge.mail.inbound.charsets import clean_text
from judge.mail.inbound.encoded_words import _EW, _WSP_RUN, _decode_ew

_ADDRESS_RUN = re.compile(r"[^\s@<>()\[\],;:\"\\]+")  # the characters an address is made of here


def _fetch_unfold(value: str) -> str:
    # policy.default.header_fetch_parse: ''.join(re.split(r'\n|\r', value))
    if "\r" in value or "\n" in value:
        return value.replace("\r", "").replace("\n", "")
    return value


_WSP_SPLIT = re.compile(r"[ \t]+")
_OTHER_SPACE = re.compile(r"[^\S \t]")  # white space other than space and tab


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
    cls = policy.default.header_factory.registry.get(name.lower(), headerregistry.UnstructuredHeader)
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
