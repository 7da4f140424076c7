"""Player names: one line of printable text, and no name that looks like another.

A name comes from a mail's From header (SIGNON) or from the master's
REPLACE line, and every results mail, LIST and forum post prints it. So a
name is cleaned where it enters the store (clean_name): a line break or a
control character in it would add forged lines to every results mail, a
bidi control (U+202E...) would turn the text around it, and a very long
name would bury the chart. A name that looks like another player's
(`Аlice`, with a Cyrillic А, beside `Alice`) is refused at SIGNON
(looks_like), by Unicode TS#39 skeletons from ICU: the reference
implementation of UTS #39, kept with every Unicode release.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable, TypeVar

MAX_NAME = 60  # characters; a results chart stays readable

# Bidirectional controls: removed, not replaced by a space (they are
# invisible; a space would show where the attacker put one).
_BIDI = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c"))
_BLANKS = re.compile(r"\s+")

T = TypeVar("T")


def one_line(text: str) -> str:
    """The text on one line: bidi controls removed; every other character
    that is not printable (controls, line and paragraph separators, NEL,
    tabs, odd spaces, format characters) a space; runs of spaces squeezed."""
    text = text.translate(_BIDI)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    return _BLANKS.sub(" ", text).strip()


def clean_name(raw: str | None, fallback: str = "") -> str:
    """A player's name as the judge stores it: one line, at most MAX_NAME
    characters; `fallback` (cleaned too) when nothing printable is left."""
    name = one_line(raw or "")[:MAX_NAME].rstrip()
    if not name and fallback:
        return clean_name(fallback)
    return name


@cache
def _checker():
    # Imported here, not at the top: `judge deliver` starts for every mail,
    # and only a SIGNON that names a new player needs ICU (about 30 ms).
    import icu

    return icu.SpoofChecker()


def skeleton_keys(name: str) -> frozenset[str]:
    """The TS#39 skeletons of a name, case ignored: the skeleton of the
    name and of its case-folded form, each case-folded. Two names look
    alike when their keys meet. Both are needed: the skeleton alone keeps
    `Alice` and `ALICE` apart, folding first loses `paypaI` ~ `paypal`
    (capital I is confusable with l, small i is not)."""
    checker = _checker()
    return frozenset({checker.getSkeleton(0, name).casefold(),
                      checker.getSkeleton(0, name.casefold()).casefold()})


def looks_like(name: str, others: Iterable[tuple[str, T]]) -> T | None:
    """The first of `others` (name, what) whose name looks like `name`
    (same skeleton, case ignored; an equal name too), or None."""
    mine = skeleton_keys(name)
    for other, what in others:
        if mine & skeleton_keys(other):
            return what
    return None
