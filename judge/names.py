"""Player names: one line of printable text, and no name that looks like another.

A name comes from a mail's From header (SIGNON) or from the master's
REPLACE line, and every results mail, LIST and forum post prints it. So a
name is cleaned where it enters the store (clean_name): a line break or a
control character in it would add forged lines to every results mail, a
bidi control (U+202E...) would turn the text around it, and a very long
name would bury the chart. A name that looks like another player's
(`Аlice`, with a Cyrillic А, beside `Alice`) is refused at SIGNON
(looks_like), by the skeletons of Unicode TS#39 (section 4): Unicode's own
table of confusables (judge/data/confusables.txt, as Unicode publishes it;
its version is in its header) and Python's unicodedata, so that installing
the judge needs no compiler and no ICU.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path
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


CONFUSABLES = Path(__file__).resolve().parent / "data" / "confusables.txt"

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt, a stable
# property): invisible, so a skeleton drops them (UTS #39, section 4, step 2).
_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


@cache
def _prototypes() -> dict[int, str]:
    """confusables.txt as str.translate's table: each character that looks
    like another, to its prototype. Read at the first SIGNON that names a
    new player (a few milliseconds), not at every `judge deliver`'s start."""
    table: dict[int, str] = {}
    with CONFUSABLES.open(encoding="utf-8-sig") as f:
        for line in f:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 3:
                continue  # a comment or a blank line
            source, target = fields[0].strip(), fields[1].split()
            table[int(source, 16)] = "".join(chr(int(c, 16)) for c in target)
    return table


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of `text`: NFD, default-ignorable characters
    removed, each character replaced by its prototype, NFD again. Linear in
    the text (one pass of each step; a prototype is a few characters)."""
    text = _IGNORABLE.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", text.translate(_prototypes()))


def skeleton_keys(name: str) -> frozenset[str]:
    """The TS#39 skeletons of a name, case ignored: the skeleton of the
    name and of its case-folded form, each case-folded. Two names look
    alike when their keys meet. Both are needed: the skeleton alone keeps
    `Alice` and `ALICE` apart, folding first loses `paypaI` ~ `paypal`
    (capital I is confusable with l, small i is not)."""
    return frozenset({skeleton(name).casefold(), skeleton(name.casefold()).casefold()})


def looks_like(name: str, others: Iterable[tuple[str, T]]) -> T | None:
    """The first of `others` (name, what) whose name looks like `name`
    (same skeleton, case ignored; an equal name too), or None."""
    mine = skeleton_keys(name)
    for other, what in others:
        if mine & skeleton_keys(other):
            return what
    return None
