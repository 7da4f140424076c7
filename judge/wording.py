"""Small helpers for the texts people read: "1 line", "2 lines", not
"1 line(s)" (nJudge's and our users read every reply)."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and the word in the number it needs: plural(1, "line") is "1 line",
    plural(2, "line") "2 lines"; `many` for a plural not made with "s"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def about(n: int) -> str:
    """A count that may be huge, to be read: "1,234" up to a million, else
    three significant figures ("1.37e+41")."""
    return f"{n:,}" if n < 10**6 else f"{n:.3g}"


def were(n: int) -> str:
    """The verb for `n` things: "was" or "were"."""
    return "was" if n == 1 else "were"


def reply_subject(subject: str | None) -> str:
    """The subject of a reply: "Re: " once, never "Re: Re: "."""
    subject = (subject or "").strip()
    if not subject:
        return "Re: your commands"
    return subject if subject[:3].casefold() == "re:" else f"Re: {subject}"
