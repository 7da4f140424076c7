"""Text as players post it on forums (PlayDiplomacy's phpBB, Discourse):
BBCode around names (`[b]Italy[/b] 12`), lists inside `[code]...[/code]`,
numbered lines (`1. Germany 20`). The markup is blanked, one space for each
character, so that every column a reply points at stays true to the line
as sent; what is left is read as a bid line or a preference list.

Linear in the line: one regular expression without nested repetition.
"""

from __future__ import annotations

import re

# The tags of BBCode that wrap text (phpBB's and Discourse's): [b]...[/b],
# [color=red]...[/color], [code], [quote="x"], [list], [*] (a list item).
TAGS = ("b", "i", "u", "s", "code", "quote", "color", "colour", "size", "font", "url", "spoiler", "center",
        "left", "right", "list", "highlight", "sup", "sub", "strike", "pre", "tt", "c")
_TAG = re.compile(r"\[(/?)(" + "|".join(TAGS) + r"|\*)(=[^\[\]\n]{0,100})?\]", re.IGNORECASE)


def blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def blank_markup(line: str) -> str:
    """The line with every BBCode tag blanked (for bid lines: a bid never
    holds a bracket)."""
    if "[" not in line:
        return line
    return _TAG.sub(lambda m: " " * len(m.group(0)), line)


def blank_markup_in_list(text: str) -> str:
    """A preference list with its BBCode blanked, where a tag cannot be one
    of the list's own brackets: a closing tag ([/b]), a tag with a value
    ([color=red]), [code], [quote], [list] and [*], and an opening tag whose
    closing tag follows. `E[I]F` keeps its bracket (Italy alone), however
    like the italic tag it looks; `[i]E[/i]` is England in italics."""
    if "[" not in text:
        return text
    tags = list(_TAG.finditer(text))
    closed = {m.group(2).casefold() for m in tags if m.group(1)}
    out = text
    for m in tags:
        name = m.group(2).casefold()
        if m.group(1) or m.group(3) or name in ("code", "quote", "list", "*", "url", "color", "size") \
                or name in closed:
            out = blank(out, m.start(), m.end())
    return out


def only_markup(line: str) -> bool:
    """Whether the line holds tags and nothing else (`[code]`, `[/quote]`):
    the frame of a pasted post, no part of what it says."""
    return "[" in line and not blank_markup(line).strip()


# -- bid lines as posted ------------------------------------------------------

# Words that name the unit of a bid ("40 points", "25pts", "12 pkt").
UNITS = frozenset({"points", "point", "pts", "pt", "p", "pkt", "pkts", "punti", "punkte"})
# Between a power and its bid: "Austria: 40", "England - 30", "France => 25".
_BETWEEN = frozenset(":=-\u2013\u2014>\u2192")
# A word as the command grammar reads one (grammars/commands.lark's WORD), a
# number (a decimal is refused later, as "not a whole number"), a comma or
# semicolon between bids, any other sign.
_BID_TOKENS = re.compile(r"(?P<word>[^\W\d_][\w'.\-\u2019]*)|(?P<num>\d+(?:\.\d+)?)|(?P<sep>[,;])|(?P<other>\S)")
MAX_NAME_WORDS = 4  # a power's name: more words before a number are prose, not a bid
_MOST_TOKENS = 16  # in one bid, with its list number, signs and unit


class Ambiguous(ValueError):
    """A line that reads as a bid but not as one bid: the column and why."""

    def __init__(self, column: int, message: str) -> None:
        self.column = column
        super().__init__(message)


def read_bid_line(line: str) -> list[tuple[str, int, str]] | None:
    """The bids of a line as forums post them, as (power as written, its
    column, amount): `Austria: 40 points`, `England - 30`, `France 25pts`,
    `1. Germany 20`, `[b]Italy[/b] 12`, `- Russia 8.`, several on a line
    apart by `,` or `;`. (Never the number first: "2 days left" is no bid.) None if the line is no bid of that kind (it stays
    what the grammar said); Ambiguous if it reads as a bid in more than one
    way (two numbers for a power, two powers for a number)."""
    text = blank_markup(line)
    segments: list[list[tuple[str, str, int]]] = [[]]
    for m in _BID_TOKENS.finditer(text):
        if m.lastgroup == "sep":
            segments.append([])
        elif len(segments[-1]) < _MOST_TOKENS:
            segments[-1].append((m.lastgroup, m.group(), m.start() + 1))
        else:
            return None  # no bid is this long: prose (or a flood), left to the grammar's refusal
    bids = []
    for tokens in segments:
        if not tokens:
            return None
        bid = _one_bid(_tidy(tokens))
        if bid is None:
            return None
        bids.append(bid)
    return bids


def _tidy(tokens: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """A segment without what stands around a bid: its number in a list
    (`1.`, `2)`, `#3`, a bullet), the unit after the amount, the sign
    between power and amount, a full stop after the amount."""
    t = list(tokens)
    if len(t) >= 2 and t[0][0] == "num" and t[1][1] in ".):" and t[1][2] == t[0][2] + len(t[0][1]) \
            and len(t) > 2 and t[2][0] == "word":
        t = t[2:]  # "1. Germany 20", "2) England 30"
    elif len(t) >= 2 and t[0][1] == "#" and t[1][0] == "num":
        t = t[2:] if len(t) < 3 or t[2][1] not in ".):" else t[3:]
    elif t and t[0][1] in "-*\u2022\u00b7\u2013\u2014>" and len(t) > 1:
        t = t[1:]  # a bullet
    if len(t) >= 2 and t[-1][1] == "." and t[-2][0] == "num":
        del t[-1]  # "Turkey 5." ends a sentence
    out = []
    for k, tok in enumerate(t):
        if tok[0] == "word" and tok[1].casefold() in UNITS and out and out[-1][0] == "num":
            continue  # "40 points", "25pts"
        if tok[0] == "other" and tok[1] in _BETWEEN:
            continue
        out.append(tok)
    return out


def _one_bid(tokens: list[tuple[str, str, int]]) -> tuple[str, int, str] | None:
    kinds = "".join("w" if k == "word" else "n" if k == "num" else "o" for k, _, _ in tokens)
    words = [tok for tok in tokens if tok[0] == "word"]
    numbers = [tok for tok in tokens if tok[0] == "num"]
    if not words or not numbers or len(words) > MAX_NAME_WORDS:
        return None
    name = " ".join(w for _, w, _ in words)
    if re.fullmatch(r"w+n", kinds):
        return name, words[0][2], numbers[0][1]
    if re.fullmatch(r"w+nn+", kinds):
        raise Ambiguous(numbers[1][2], f"{len(numbers)} numbers for {name}: which is the bid? "
                                       f"Send one number per power, like '{name} {numbers[0][1]}'")
    if re.fullmatch(r"w+ow+n", kinds) and tokens[kinds.index("o")][1] in "/&+|":
        raise Ambiguous(tokens[kinds.index("o")][2], f"two powers for one number ({name}): bid on each "
                                                     f"power apart, one number each")
    return None
