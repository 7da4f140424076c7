"""Reading one line of a mail with a method's own grammar: the checks
before the grammar, lark's errors turned into the method's syntax error
(what was expected, what stood there instead), and where the command stood.
Shared by the methods whose lines go through a lark parser of their own
(LUI, PT3; Payola's commands load their grammar here too): each passes its
parser, its error class, its names for the terminals and the words for "a
command" in its replies."""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping

from judge.resources import data_dir
from judge.syntax.errors import CommandSyntaxError, fault

MAX_LINE_LENGTH = 1000


def grammar(name: str, transformer: Any) -> Any:
    """grammars/<name>.lark as an LALR parser (linear time in the line)
    that builds the commands while parsing; the method keeps it (@cache)."""
    from judge import grammar_cache

    text = (data_dir("grammars") / f"{name}.lark").read_text(encoding="utf-8")
    return grammar_cache.lark(text, name, parser="lalr", maybe_placeholders=True, transformer=transformer)


def expected_text(expected: set[str], names: Mapping[str, str], parser: Any, commands: str,
                  command_words: Collection[str]) -> str:
    """What a reply says was expected, from lark's terminals: each by its
    name in `names` ("" for one another name already says), the keywords
    as written; `commands` where a command was expected (every one of
    `command_words` among the keywords)."""
    said, keywords = [], []
    for term in sorted(expected):
        if term in names:
            if names[term]:
                said.append(names[term])
            continue
        try:
            value = getattr(parser.get_terminal(term).pattern, "value", term)
        except KeyError:
            continue
        keywords.append(value.upper() if value.isalpha() else f"'{value}'")
    if set(command_words) <= set(keywords):
        return commands
    if keywords:
        said.append("one of " + ", ".join(sorted(set(keywords))) if len(keywords) > 1 else keywords[0])
    return " or ".join(said) if said else "something else"


def read_line(text: str, line_no: int, *, parser: Callable[[], Any], error: type[CommandSyntaxError],
              commands: str, describe: Callable[[set[str]], str],
              hint: Callable[[str], str] | None = None) -> Any:
    """One line -> the command `parser()` builds from it, a copy with its
    line and column; `error` if it is none, never anything else. The error
    says what was expected (`describe(terminals)`, or `commands` where lark
    names nothing) and what stood there instead, then `hint(line)` if
    given."""
    from lark import LarkError, UnexpectedInput  # lark is loaded by the method's parser

    line = text.rstrip("\r\n")
    if len(line) > MAX_LINE_LENGTH:
        raise error(line_no, 1, line[:80] + "...", f"a line of at most {MAX_LINE_LENGTH} characters",
                    "Split it: one command per line.")
    # Every kind of white space counts as one blank (columns stay true).
    line = "".join(" " if ch.isspace() or ch == "\ufeff" else ch for ch in line)
    for i, ch in enumerate(line):
        if not ch.isprintable():
            raise error(line_no, i + 1, line.replace(ch, "\ufffd"), "visible text",
                        f"The character U+{ord(ch):04X} cannot stand here; delete it.")
    try:
        command = parser().parse(line)
    except UnexpectedInput as err:
        end = len(line.rstrip()) + 1
        column, expected = fault(err, line)
        rest = line[column - 1:].split(None, 1) if column < end else []
        instead = f"Instead '{rest[0][:20]}'." if rest else "Instead the line ends."
        if hint is not None:
            instead += hint(line)
        raise error(line_no, column, line, describe(expected) if expected else commands, instead) from err
    except LarkError as err:
        raise error(line_no, 1, line, commands, "The judge could not read this line.") from err
    column = len(line) - len(line.lstrip()) + 1
    return type(command)(**{**command.__dict__, "line": line_no, "column": column})
