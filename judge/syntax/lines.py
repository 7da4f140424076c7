"""Reading one line of a mail with a method's own grammar: the checks
before the grammar, lark's errors turned into the method's syntax error,
and where the command stood. Shared by the methods whose lines go through a
lark parser of their own (LUI, PT3): each passes its parser, its error class
and the words for "a command" in its replies."""

from __future__ import annotations

from typing import Any, Callable

from judge.syntax.errors import CommandSyntaxError

MAX_LINE_LENGTH = 1000


def read_line(text: str, line_no: int, *, parse: Callable[[str], Any], error: type[CommandSyntaxError],
              commands: str, syntax_error: Callable[[Any, str, int], CommandSyntaxError],
              max_length: int = MAX_LINE_LENGTH) -> Any:
    """One line -> the command `parse` builds from it, a copy with its line
    and column; `error` (or what `syntax_error(err, line, line_no)` makes of
    lark's UnexpectedInput) if it is none. Never raises anything else.
    `commands` is what the reply says was expected when lark fails
    otherwise."""
    from lark import LarkError, UnexpectedInput  # lark is loaded by the method's parser

    line = text.rstrip("\r\n")
    if len(line) > max_length:
        raise error(line_no, 1, line[:80] + "...", f"a line of at most {max_length} characters",
                    "Split it: one command per line.")
    # Every kind of white space counts as one blank (columns stay true).
    line = "".join(" " if ch.isspace() or ch == "\ufeff" else ch for ch in line)
    for i, ch in enumerate(line):
        if not ch.isprintable():
            raise error(line_no, i + 1, line.replace(ch, "\ufffd"), "visible text",
                        f"The character U+{ord(ch):04X} cannot stand here; delete it.")
    try:
        command = parse(line)
    except UnexpectedInput as err:
        raise syntax_error(err, line, line_no) from err
    except LarkError as err:
        raise error(line_no, 1, line, commands, "The judge could not read this line.") from err
    column = len(line) - len(line.lstrip()) + 1
    return type(command)(**{**command.__dict__, "line": line_no, "column": column})
