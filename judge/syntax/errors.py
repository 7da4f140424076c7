"""The domain error for a line the judge cannot read, and where lark's
error puts the fault (shared by every grammar's parser: the commands' and
each method's own)."""

from __future__ import annotations

from typing import Any


class CommandSyntaxError(ValueError):
    """A line that is not a command: where, what was expected, what to send."""

    def __init__(self, line: int, column: int, text: str, expected: str, hint: str = "") -> None:
        self.line = line
        self.column = column
        self.text = text
        self.expected = expected
        self.hint = hint
        super().__init__(f"line {line}, column {column}: expected {expected}")

    def render(self) -> str:
        """The line, a caret under the fault, and what was expected."""
        prefix = f"line {self.line}: "
        text, column = self.text, self.column
        if len(text) > 120:
            # A window around the fault: the caret stays under it.
            start = max(0, column - 61)
            shown = text[start:start + 120]
            lead = "..." if start else ""
            text = lead + shown + ("..." if start + 120 < len(self.text) else "")
            column = column - start + len(lead)
        out = [
            f"{prefix}{text}",
            " " * (len(prefix) + column - 1) + "^",
            f"column {self.column}: expected {self.expected}.",
        ]
        if self.hint:
            out.append(self.hint)
        return "\n".join(out)


def fault(err: Any, line: str) -> tuple[int, set[str]]:
    """Where lark's error `err` (an UnexpectedInput) puts the fault in
    `line`, as (column, terminals expected there). The column is 1-based; a
    fault past the line, or at its end, is put just after its last
    character. The end of the line is "$END" (lark's contextual lexer calls
    it "<END-OF-FILE>", a name no terminal has)."""
    from lark import UnexpectedCharacters, UnexpectedToken  # lark is loaded by whoever raised err

    end = len(line.rstrip()) + 1
    column = getattr(err, "column", end)
    if not isinstance(column, int) or not 1 <= column <= len(line):
        column = end
    if isinstance(err, UnexpectedToken):
        expected = set(err.accepts or err.expected)
        if err.token.type == "$END":
            column = end
    elif isinstance(err, UnexpectedCharacters):
        expected = set(err.allowed or ())
    else:  # lark's other errors name nothing
        expected = set()
    return column, {"$END" if term == "<END-OF-FILE>" else term for term in expected}
