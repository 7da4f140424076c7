"""The domain error for a line the judge cannot read."""

from __future__ import annotations


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
        out = [
            f"{prefix}{self.text}",
            " " * (len(prefix) + self.column - 1) + "^",
            f"column {self.column}: expected {self.expected}.",
        ]
        if self.hint:
            out.append(self.hint)
        return "\n".join(out)
