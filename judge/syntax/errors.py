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
