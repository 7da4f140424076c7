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
