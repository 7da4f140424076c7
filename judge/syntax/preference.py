"""Parse the text of a preference list (grammars/preference.lark) into words
and groups with their columns; the method maps words to powers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from lark import Lark, Token, Transformer, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from judge import grammar_cache
from judge.resources import data_dir


@dataclass(frozen=True)
class Word:
    text: str
    column: int  # 1-based, within the list's text


@dataclass(frozen=True)
class RawList:
    random: bool  # "*"
    items: tuple[Word | tuple[Word, ...], ...]  # a word, or a group of words (equal preference)


class ListSyntaxError(ValueError):
    def __init__(self, column: int, message: str) -> None:
        self.column = column
        super().__init__(message)


class _ToRaw(Transformer):
    def random(self, c):
        return RawList(True, ())

    def ranked(self, c):
        return RawList(False, tuple(c))

    def group(self, c):
        return tuple(c)

    def WORD(self, tok: Token):
        return Word(str(tok), tok.column)


@cache
def _parser() -> Lark:
    text = (data_dir("grammars") / "preference.lark").read_text(encoding="utf-8")
    return grammar_cache.lark(text, "preference", parser="lalr", transformer=_ToRaw())


def parse_list(text: str) -> RawList:
    try:
        return _parser().parse(text)
    except UnexpectedCharacters as err:
        ch = text[err.column - 1]
        if ch in "[(":
            raise ListSyntaxError(err.column, "a bracket opens inside another; close it first") from err
        raise ListSyntaxError(err.column, f"'{ch}' cannot stand in a preference list") from err
    except UnexpectedToken as err:
        if err.token.type == "$END":
            raise ListSyntaxError(len(text) + 1, "a bracket is not closed") from err
        tok = str(err.token)
        if tok == "*":
            raise ListSyntaxError(err.column, "* stands alone: either * or a list") from err
        if tok in "])":
            raise ListSyntaxError(err.column, f"'{tok}' closes no bracket, or the wrong kind") from err
        if tok in "[(":
            raise ListSyntaxError(err.column, "a bracket opens inside another; close it first") from err
        raise ListSyntaxError(err.column, f"'{tok}' cannot stand here") from err
    except UnexpectedInput as err:  # pragma: no cover - lark's other errors
        raise ListSyntaxError(getattr(err, "column", 1), "not a preference list") from err
