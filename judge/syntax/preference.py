"""Read the text of a preference list (grammars/preference.lark) into words
and groups with their columns; the method maps words to powers.

The list is read by a scanner of its own, in one pass of one regular
expression: the Lark parse it replaces cost more than the rest of a list's
reading and of the assignment together (issue 29). The grammar stays the
list's specification: `parse_list_with_grammar` reads it with Lark, and
tests/test_preference_reader.py checks that both read every list alike and
refuse the same lists at the same column with the same words.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, NamedTuple

from judge.syntax.forum import blank_markup_in_list


class Word(NamedTuple):
    text: str
    column: int  # 1-based, within the list's text (plus the offset parse_list was given)


class Group(tuple):
    """The Words of a bracket: powers liked equally."""


class RawList(NamedTuple):
    random: bool  # "*"
    items: tuple[Word | Group, ...]  # a word, or a group of words (equal preference)


class ListSyntaxError(ValueError):
    def __init__(self, column: int, message: str) -> None:
        self.column = column
        super().__init__(message)


# The grammar's terminals (each starts with a character of its own, so
# none can take another's place); what the grammar ignores is skipped.
_SKIP = "\\s,;>/"
_TOKENS = re.compile(rf"(?P<word>[^\W\d_][\w'.\-]*)|(?P<rank>\d+[.):]?)|(?P<other>[^{_SKIP}])")
# A list of words and separators only, the commonest: read in one findall.
_PLAIN = re.compile(rf"(?:[{_SKIP}]++|[^\W\d_][\w'.\-]*+)*+")
_WORD = re.compile(r"[^\W\d_][\w'.\-]*")
_OPEN = {"[": "]", "(": ")"}


# A list the scanner below reads without an error of lexing: its tokens
# (words, ranks, brackets, "*") in one findall.
_LEXES = re.compile(rf"(?:[{_SKIP}]++|[^\W\d_][\w'.\-]*+|\d++[.):]?+|[\[\]()*])*+")
_TOKEN_TEXTS = re.compile(r"[^\W\d_][\w'.\-]*|\d+[.):]?|[\[\]()*]")


def fast_tokens(text: str) -> list[str] | None:
    """The list's tokens as texts (markup blanked already), or None if a
    character in it is no token's (parse_list then says which)."""
    if _LEXES.fullmatch(text) is None:
        return None
    return _TOKEN_TEXTS.findall(text)


def parse_list(text: str, offset: int = 0) -> RawList:
    """The list `text` (without SET PREFERENCE), or ListSyntaxError with
    the column at fault (1-based, in `text`, plus `offset`: where the text
    stands in the line)."""
    text = blank_markup_in_list(text)
    if _PLAIN.fullmatch(text):
        base = offset + 1
        return RawList(False, tuple([Word(m.group(), m.start() + base) for m in _WORD.finditer(text)]))
    try:
        return _scan(text, offset)
    except ListSyntaxError as err:
        err.column += offset
        raise


def _scan(text: str, offset: int) -> RawList:
    items: list[Word | Group] = []
    ranks: list[tuple[int, str, int, int]] = []  # (value, as written, column, index of the item it numbers)
    group: list[Word] | None = None  # inside a bracket: its words
    closer = ""
    star = False  # "*" read alone so far
    for m in _TOKENS.finditer(text):
        kind, tok, column = m.lastgroup, m.group(), m.start() + 1
        if kind == "other" and tok not in "[]()*":
            raise _unreadable(tok, column)
        if star:  # "*" stands alone: anything after it is out of place
            raise _unexpected(tok, column)
        if group is not None:
            if kind == "word":
                group.append(Word(tok, column + offset))
            elif tok == closer:
                items.append(Group(group))
                group = None
            else:
                raise _unexpected(tok, column)
        elif kind == "word":
            items.append(Word(tok, column + offset))
        elif tok in _OPEN:
            group, closer = [], _OPEN[tok]
        elif kind == "rank":
            ranks.append((int(tok.rstrip(".):")), tok, column, len(items)))
        elif tok == "*" and not items and not ranks:
            star = True
        else:
            raise _unexpected(tok, column)
    if group is not None:
        raise ListSyntaxError(len(text) + 1, "a bracket is not closed")
    if star:
        return RawList(True, ())
    _check_ranks(ranks, len(items))
    return RawList(False, tuple(items))


def _check_ranks(ranks: list[tuple[int, str, int, int]], items: int) -> None:
    """The numbers of a numbered list ("1. France 2. England") each number
    the item after them, and rise: the list is read in the order written,
    so numbers that say another order are refused, not guessed at."""
    last, numbered = 0, -1
    for value, tok, column, index in ranks:
        if index == numbered or value <= last:
            raise ListSyntaxError(column, f"the numbers of a list rise, best first (1, 2, 3...), and {tok} "
                                          f"does not; powers liked equally go in brackets: [France Germany]")
        last, numbered = value, index
    if ranks and ranks[-1][3] == items:
        raise ListSyntaxError(ranks[-1][2], "a number stands at the end of the list, with no power after it")


def _unreadable(ch: str, column: int) -> ListSyntaxError:
    """A character no terminal of the grammar starts with."""
    return ListSyntaxError(column, f"'{ch}' cannot stand in a preference list")


def _unexpected(tok: str, column: int) -> ListSyntaxError:
    """A token the grammar does not take where it stands (lark's
    UnexpectedToken), in the words of the grammar's reader below."""
    if tok == "*":
        return ListSyntaxError(column, "* stands alone: either * or a list")
    if tok in "])":
        return ListSyntaxError(column, f"'{tok}' closes no bracket, or the wrong kind")
    if tok in "[(":
        return ListSyntaxError(column, "a bracket opens inside another; close it first")
    return ListSyntaxError(column, f"'{tok}' cannot stand here")


# -- the grammar's own reading (the specification of parse_list) ----------

@cache
def _grammar() -> Any:
    from lark import Lark, Token, Transformer

    from judge.resources import data_dir

    class ToRaw(Transformer):
        def random(self, c):
            return RawList(True, ())

        def ranked(self, c):
            return c

        def group(self, c):
            return Group(c)

        def WORD(self, tok: Token):
            return Word(str(tok), tok.column)

        def RANK(self, tok: Token):
            return (int(str(tok).rstrip(".):")), str(tok), tok.column)

    text = (data_dir("grammars") / "preference.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", transformer=ToRaw())


def parse_list_with_grammar(text: str) -> RawList:
    """parse_list by grammars/preference.lark and Lark (slower; for tests)."""
    from lark import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

    text = blank_markup_in_list(text)
    try:
        parsed = _grammar().parse(text)
    except UnexpectedCharacters as err:
        ch = text[err.column - 1]
        if ch in "[(":
            raise ListSyntaxError(err.column, "a bracket opens inside another; close it first") from err
        raise _unreadable(ch, err.column) from err
    except UnexpectedToken as err:
        if err.token.type == "$END":
            raise ListSyntaxError(len(text) + 1, "a bracket is not closed") from err
        raise _unexpected(str(err.token), err.column) from err
    except UnexpectedInput as err:  # pragma: no cover - lark's other errors
        raise ListSyntaxError(getattr(err, "column", 1), "not a preference list") from err
    if isinstance(parsed, RawList):
        return parsed
    items: list[Word | Group] = []
    ranks = []
    for item in parsed:
        if not isinstance(item, (Word, Group)):
            ranks.append((*item, len(items)))
        else:
            items.append(item)
    _check_ranks(ranks, len(items))
    return RawList(False, tuple(items))
