"""RFC 3676 text/plain; format=flowed, as Thunderbird, Apple Mail, K-9 Mail
and FairEmail send it: the lines a player typed, from the lines the mail
program wrapped.

A flowed mail wraps a long line into several, each but the last ending in a
space (a "soft" line break); the reader joins them again. Without this, a
long `SET PREFERENCE ...` wrapped before `England` was read as a list without
England, and `England` as a line of its own. The standard library has no
decoder (email.contentmanager leaves the wrapped lines as they are).

What RFC 3676 section 4 says, and what this does:
  - a line's quote depth is its number of leading ">"; the quote marks are
    kept in the output (as ">" per level and one space), so that the judge
    still knows a quoted line for one;
  - a space after the quote marks (or at the start of an unquoted line) is
    space-stuffing, and removed;
  - a line ending in a space is flowed: the next line of the same depth
    continues it; with DelSp=yes that last space is deleted first (it was
    added to wrap a word that had no space); a flowed line followed by one
    of another depth, or by the end, ends its paragraph all the same
    (section 4.5);
  - the signature separator "-- " is never flowed.
One pass over the text, so linear in its length.
"""

from __future__ import annotations


def decode_flowed(text: str, *, delsp: bool = False) -> str:
    """The logical lines of a format=flowed text (its lines joined with "\\n")."""
    out: list[str] = []
    paragraph: list[str] = []
    depth_of_paragraph = -1
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        depth = 0
        while depth < len(line) and line[depth] == ">":
            depth += 1
        body = line[depth:]
        if body.startswith(" "):
            body = body[1:]  # space-stuffing (or the one space after the quote marks)
        if paragraph and depth != depth_of_paragraph:
            out.append(_quoted(depth_of_paragraph, "".join(paragraph)))
            paragraph = []
        flowed = body.endswith(" ") and body != "-- "
        if flowed and delsp:
            body = body[:-1]
        paragraph.append(body)
        depth_of_paragraph = depth
        if not flowed:
            out.append(_quoted(depth, "".join(paragraph)))
            paragraph = []
    if paragraph:
        out.append(_quoted(depth_of_paragraph, "".join(paragraph)))
    return "\n".join(out)


def _quoted(depth: int, text: str) -> str:
    return (">" * depth + " " + text) if depth else text


def is_flowed(content_type_params: dict[str, str]) -> tuple[bool, bool]:
    """(format=flowed, DelSp=yes) from a Content-Type's parameters (names
    lower-cased); values are compared without case (RFC 3676 section 4.1)."""
    flowed = content_type_params.get("format", "").strip().lower() == "flowed"
    delsp = content_type_params.get("delsp", "").strip().lower() == "yes"
    return flowed, flowed and delsp
