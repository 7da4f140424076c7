"""Turn the HTML part of a mail into plain text lines the command parser can read.

Only used when a player's mail has no text/plain part (some webmail and phone
clients send HTML only). The goal is not pretty text but faithful *lines*:
every block element and <br> ends a line, so "<p>Austria 40<br>England 30</p>"
yields the two order lines a player meant to write. Text inside <blockquote>
(how Gmail, Apple Mail, Thunderbird and FairEmail quote the mail replied to:
`class="gmail_quote"`, `type="cite"`) comes out with "> " before each line,
as a plain-text reply would quote it, so the judge never runs it.

Why not a library: inscriptis (linear, on lxml) lays text out for reading,
indenting blocks and putting "* " before list items, so a command in a list
or a quote would not start its line; html2text writes Markdown (escapes,
"**" for bold) and reads with html.parser, whose cost on unclosed tags is
quadratic (below). Both were measured against this module (issue 25).

The markup is read by a small tokenizer of its own, not html.parser: that one
(Python 3.11) takes quadratic time on markup that never closes a tag
("<a<a<a...", "</</</..."), because it scans to the end of the document again
from every "<". Here every step either ends a construct and moves past it or
reaches the end of the document, as the HTML5 tokenizer does: a tag, comment
or declaration still open at the end is dropped with the rest of the
document (a browser shows nothing of it either), and a "<" that starts no
markup is text.
"""

from __future__ import annotations

import re
from html import unescape

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


# Elements whose content is raw text up to their end tag (as html.parser reads them).
_RAW_TEXT = frozenset({"script", "style"})


class _TextCollector:
    def __init__(self) -> None:
        self.chunks: list[str] = []
        self._invisible_depth = 0
        self._pre_depth = 0
        self._quote_depth = 0

    def _at_line_start(self) -> bool:
        return not self.chunks or self.chunks[-1].endswith("\n")

    def _text(self, text: str) -> None:
        """Visible text; inside a <blockquote> each line that starts with it
        gets the quote marks a plain-text reply would have."""
        if self._quote_depth and text.strip() and self._at_line_start():
            # One mark whatever the depth: ">" per level would make a mail of
            # n nested quotes and n lines cost n * n.
            self.chunks.append("> ")
        self.chunks.append(text)

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
            elif tag == "blockquote":
                self._quote_depth += 1
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
            elif tag == "blockquote":
                self._quote_depth = max(0, self._quote_depth - 1)
        elif tag in _CELLS:
            self._space()

    def handle_data(self, data: str) -> None:
        if self._invisible_depth:
            return
        if self._pre_depth:
            lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for index, line in enumerate(lines):
                if index:
                    self.chunks.append("\n")
                if line:
                    self._text(line)
        else:
            # Outside <pre>, source line breaks and indentation are layout, not text.
            self._text(_WHITESPACE.sub(" ", data))


def _tidy(text: str) -> str:
    lines = [line.strip(" \t\u00a0") for line in text.split("\n")]
    joined = "\n".join(lines)
    return _BLANK_RUNS.sub("\n\n", joined).strip("\n")


def html_to_text(html: str) -> str:
    """Plain text of an HTML document: one line per block/<br>, entities decoded,
    script/style dropped, runs of blank lines collapsed to one. Never raises;
    linear in the length of the document."""
    collector = _TextCollector()
    try:
        _tokenize(str(html), collector)
    except Exception:
        pass  # keep whatever was collected before the failure (none is known)
    return _tidy("".join(collector.chunks))


_TAG_NAME_END = re.compile(r"[\t\n\r\f />\x00]")  # what ends a tag name (as html.parser reads it)
_END_TAG = re.compile(r"\s*([a-zA-Z][-.a-zA-Z0-9:_]*)\s*")  # "</ p >" is an end tag too
_TAG_STOP = re.compile(r"[>\"'=]")
_SPACES = " \t\n\r\f"


def _tokenize(html: str, out: _TextCollector) -> None:
    """Drive `out` with the data, start tags and end tags of `html`."""
    pos, end = 0, len(html)
    while pos < end:
        lt = html.find("<", pos)
        if lt < 0:
            out.handle_data(unescape(html[pos:]))
            return
        if lt > pos:
            out.handle_data(unescape(html[pos:lt]))
        following = html[lt + 1:lt + 2]
        if following.isascii() and following.isalpha():
            pos = _start_tag(html, lt, out)
        elif following == "/":
            pos = _end_tag(html, lt, out)
        elif html.startswith("<!--", lt):
            close = html.find("-->", lt + 4)
            pos = end if close < 0 else close + 3
        elif following in ("!", "?"):  # declarations, CDATA, processing instructions
            close = html.find(">", lt + 2)
            pos = end if close < 0 else close + 1
        else:
            out.handle_data("<")
            pos = lt + 1


def _start_tag(html: str, lt: int, out: _TextCollector) -> int:
    """Read the start tag at html[lt] (a letter follows); the index after it."""
    end = len(html)
    stop = _TAG_NAME_END.search(html, lt + 1)
    name_end = end if stop is None else stop.start()
    tag = html[lt + 1:name_end].lower()
    # Find the ">" that ends the tag: one inside a quoted attribute value
    # (a quote after "=") does not.
    pos, after_equals = name_end, False
    while True:
        found = _TAG_STOP.search(html, pos)
        if found is None:
            return end  # the tag never ends: neither does the document
        char = found.group()
        if char == ">":
            close = found.start()
            break
        if char == "=":
            after_equals = True
            pos = found.end()
            continue
        if after_equals and not html[pos:found.start()].strip(_SPACES):
            quote_end = html.find(char, found.end())
            if quote_end < 0:
                return end
            pos = quote_end + 1
        else:
            pos = found.end()
        after_equals = False
    if close > lt + 1 and html[close - 1] == "/":
        out.handle_startendtag(tag, [])
        return close + 1
    out.handle_starttag(tag, [])
    if tag in _RAW_TEXT:
        # Raw text up to </script> (html.parser's pattern: </\s*script\s*>).
        raw_end = re.compile(r"</\s*" + tag + r"\s*>", re.IGNORECASE).search(html, close + 1)
        if raw_end is None:
            return end
        out.handle_endtag(tag)
        return raw_end.end()
    return close + 1


def _end_tag(html: str, lt: int, out: _TextCollector) -> int:
    """Read the end tag (or the bogus comment) at html[lt] = "</"; the index after it."""
    close = html.find(">", lt + 2)
    if close < 0:
        return len(html)
    exact = _END_TAG.fullmatch(html, lt + 2, close)
    if exact is not None:
        out.handle_endtag(exact.group(1).lower())
    elif html[lt + 2:lt + 3].isascii() and html[lt + 2:lt + 3].isalpha():
        stop = _TAG_NAME_END.search(html, lt + 2, close)
        out.handle_endtag(html[lt + 2:close if stop is None else stop.start()].lower())
    return close + 1  # else a bogus comment, skipped
