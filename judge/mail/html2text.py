"""Turn the HTML part of a mail into plain text lines the command parser can read.

Only used when a player's mail has no text/plain part (some webmail and phone
clients send HTML only). The goal is not pretty text but faithful *lines*:
every block element and <br> ends a line, so "<p>Austria 40<br>England 30</p>"
yields the two order lines a player meant to write.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Content of these elements is never visible text. <title> usually repeats the
# subject and would otherwise become a stray first "command" line.
_INVISIBLE = frozenset({"script", "style", "title", "template", "noscript"})

# Elements that start and end a line of their own.
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "center", "dd", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
        "h2", "h3", "h4", "h5", "h6", "header", "hr", "html", "li", "main", "nav",
        "ol", "p", "pre", "section", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)

# Table cells stay on their row's line, separated by a space.
_CELLS = frozenset({"td", "th"})

_WHITESPACE = re.compile(r"[ \t\n\r\f\v\u00a0\u200b]+")
_BLANK_RUNS = re.compile(r"\n{3,}")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._invisible_depth = 0
        self._pre_depth = 0

    # "Soft" breaks end the current line only if it has content, so nested
    # blocks (<div><p>..</p></div>) do not pile up empty lines; <br> is "hard"
    # and always ends a line, which keeps Gmail's "<div><br></div>" blank line.
    def _soft_break(self) -> None:
        # Whitespace between tags (source indentation) is not line content.
        while self.chunks and not self.chunks[-1].endswith("\n") and not self.chunks[-1].strip():
            self.chunks.pop()
        if self.chunks and not self.chunks[-1].endswith("\n"):
            self.chunks.append("\n")

    def _space(self) -> None:
        if self.chunks and not self.chunks[-1][-1:].isspace():
            self.chunks.append(" ")

    def _hard_break(self) -> None:
        self.chunks.append("\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _INVISIBLE:
            self._invisible_depth += 1
        elif tag == "br":
            self._hard_break()
        elif tag in _BLOCKS:
            self._soft_break()
            if tag == "pre":
                self._pre_depth += 1
        elif tag in _CELLS:
            self._space()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # "<br/>", "<hr/>", "<div/>": no content, so only the break matters.
        if tag == "br":
            self._hard_break()
        elif tag in _BLOCKS:
            self._soft_break()

    def handle_endtag(self, tag: str) -> None:
        if tag in _INVISIBLE:
            self._invisible_depth = max(0, self._invisible_depth - 1)
        elif tag in _BLOCKS:
            self._soft_break()
            if tag == "pre":
                self._pre_depth = max(0, self._pre_depth - 1)
        elif tag in _CELLS:
            self._space()

    def handle_data(self, data: str) -> None:
        if self._invisible_depth:
            return
        if self._pre_depth:
            self.chunks.append(data.replace("\r\n", "\n").replace("\r", "\n"))
        else:
            # Outside <pre>, source line breaks and indentation are layout, not text.
            self.chunks.append(_WHITESPACE.sub(" ", data))


def _tidy(text: str) -> str:
    lines = [line.strip(" \t\u00a0") for line in text.split("\n")]
    joined = "\n".join(lines)
    return _BLANK_RUNS.sub("\n\n", joined).strip("\n")


def html_to_text(html: str) -> str:
    """Plain text of an HTML document: one line per block/<br>, entities decoded,
    script/style dropped, runs of blank lines collapsed to one. Never raises."""
    collector = _TextCollector()
    try:
        collector.feed(html)
        collector.close()
    except Exception:
        # html.parser still has a few assertion paths on hostile markup
        # ("<![" sections); keep whatever was collected before the failure.
        pass
    return _tidy("".join(collector.chunks))
