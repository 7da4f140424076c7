"""Which lines of a mail's text are the sender's own, and which are the mail
they reply to, a forwarded mail, a signature or PGP armour.

The judge runs only the sender's own lines. Mail programs mark the rest in
a few documented ways, and each is read here:

  - "> " before each line (every client in plain text; the HTML reader,
    judge/mail/html2text.py, writes it for <blockquote>): quoted;
  - the line that introduces such a quote, "On Fri, Nov 27, 2026 at
    01:21:04PM +0000, Judge wrote:" (mutt, Gmail, Thunderbird, Apple Mail,
    K-9 Mail; Gmail wraps it over two lines), "Judge <judge@...> schrieb
    am ...:", "Le ... a écrit :": quoted with the quote it introduces. Such
    a line with no quote after it introduces the mail replied to, unmarked:
    nothing after it is read;
  - Outlook's reply header, "From: / Sent: / To: / Subject:" (in plain text
    or in its HTML; Outlook on the web puts a line of underscores before it,
    classic Outlook "-----Original Message-----"), and the forward markers
    ("---------- Forwarded message ---------", "Begin forwarded message:"):
    the mail below is not marked at all, so nothing after them is read;
  - a signature after "-- " (RFC 3676 section 4.3): not read;
  - an inline PGP clearsigned text (RFC 4880 section 7): its "-----BEGIN PGP
    SIGNED MESSAGE-----" and "Hash:" lines are armour, skipped; a line of the
    signed text that starts with "- " is dash-escaped and read without it;
    nothing from "-----BEGIN PGP SIGNATURE-----" on is read.

Why not a library: quotequail's quote() takes everything after the first
"On ... wrote:" for quoted, so a bottom-posted reply (mutt's habit: the quote
first, the commands under it) would lose its commands; and its Gmail pattern
costs cubic time on a hostile line. mail-parser-reply runs whole-text
regular expressions whose cost is quadratic on a line of blanks. Both were
measured (tests/security/test_inbound_linear_time.py says so).

Cost: one pass; each line is looked at with a bounded look-ahead (a wrapped
introduction, the header lines after "From:"), and a line longer than
_MAX_MARKER_CHARS is never a marker. So linear in the length of the text.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

# Kinds of line (TextLine.kind).
COMMAND = "command"  # the sender's own line: the judge reads it
BLANK = "blank"
QUOTED = "quoted"  # a quoted line ("> ...")
INTRO = "intro"  # a line introducing a quote ("On ... wrote:")
ARMOUR = "armour"  # PGP armour: "-----BEGIN PGP SIGNED MESSAGE-----", "Hash: SHA256"
END = "end"  # nothing from this line on is read; TextLine.why says what starts here

# What starts at an END line (TextLine.why); the reply names it.
SIGNATURE = "a signature"
REPLIED_TO = "the mail you replied to"
FORWARDED = "a forwarded mail"
PGP_SIGNATURE = "the PGP signature"

_MAX_MARKER_CHARS = 500  # no introduction, separator or header line is longer
_WRAP = 3  # an introduction may be wrapped over this many lines (Gmail: two)
_HEADER_LOOKAHEAD = 6  # "From:" must be followed by header lines within this many
# A header's name and colon, or a forward marker's colon, stand within this
# many characters of a line's start.
_MARKER_COLON = 45


class TextLine(NamedTuple):  # a tuple, not a dataclass: one is made per line of every mail
    number: int  # 1-based, counting every line of the text
    text: str  # the line as the judge reads it (a PGP dash-escape removed)
    kind: str
    why: str = ""  # for END: what starts here
    # For END: whether the line itself belongs to what is not read (an
    # Outlook header, a forwarded mail's marker) or only marks its start
    # ("-- ", "-----BEGIN PGP SIGNATURE-----").
    marker_only: bool = False


# The words that end an introduction ("... wrote:"), in the languages of
# the mail programs players use; compared without case, as whole words.
_INTRO_WORDS = frozenset({
    "wrote", "writes", "schrieb", "écrit", "ecrit", "escribió", "escribio", "scritto", "schreef", "escreveu",
    "skrev", "kirjoitti", "napisał", "napisal", "napsal", "írta", "написал", "написала", "написал(а)",
})
# A wrapped introduction's first line starts with one of these (Gmail's
# "On <date> <name> <address>" then "wrote:"), so that a command line just
# above a one-line introduction is never taken into it.
_INTRO_OPENERS = frozenset({"on", "am", "le", "el", "il", "op", "em", "den", "w", "dne"})
_WORD = re.compile(r"[^\W\d_]+(?:\(\w+\))?")

# Outlook's reply and forward headers, and their names in other languages
# (as Outlook writes them: "From:", "Von:", "De :").
_FROM_NAMES = frozenset({"from", "von", "de", "van", "da", "från", "fra", "od", "от", "lähettäjä"})
_HEADER_NAMES = frozenset({
    "sent", "date", "to", "cc", "bcc", "subject", "reply-to",
    "gesendet", "datum", "an", "betreff", "kopie",
    "envoyé", "envoye", "à", "a", "objet", "date d'envoi",
    "enviado", "fecha", "para", "asunto", "inviato", "data", "oggetto", "verzonden", "aan", "onderwerp",
    "skickat", "till", "ämne", "sendt", "til", "emne", "wysłano", "do", "temat",
})
_HEADER_LINE = re.compile(r"\*?([^\W\d_][\w' -]{0,30}?)\s?\*?:")
_SEPARATORS = re.compile(
    r"-{2,}\s*(?:original message|forwarded message|ursprüngliche nachricht|weitergeleitete nachricht"
    r"|message d'origine|message transféré|mensaje original|mensaje reenviado|messaggio originale"
    r"|messaggio inoltrato|oorspronkelijk bericht|doorgestuurd bericht|ursprungligt meddelande)\s*-{2,}",
    re.IGNORECASE)
_FORWARD_INTROS = ("begin forwarded message:", "anfang der weitergeleiteten nachricht:",
                   "début du message réexpédié :", "inicio del mensaje reenviado:")
_UNDERSCORES = re.compile(r"_{10,}")

_PGP_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"


def text_lines(text: str) -> Iterator[TextLine]:
    """Every line of `text` with its kind, up to and including the first
    END line (the rest is not read). Never raises."""
    lines = text.split("\n")
    in_armour = signed = False
    skip_until = -1  # the last line of an introduction already yielded
    for index, raw in enumerate(lines):
        number = index + 1
        if index <= skip_until:
            yield TextLine(number, raw, INTRO)
            continue
        line = raw
        stripped = line.strip()
        if in_armour:
            if not stripped:  # the armour headers end at the first blank line
                in_armour = False
                yield TextLine(number, raw, BLANK)
            else:
                yield TextLine(number, raw, ARMOUR)
            continue
        if stripped == _PGP_SIGNED and not signed:
            in_armour = signed = True
            yield TextLine(number, raw, ARMOUR)
            continue
        if signed:
            if stripped == _PGP_SIGNATURE:
                yield TextLine(number, raw, END, PGP_SIGNATURE, marker_only=True)
                return
            if line.startswith("- "):
                line = line[2:]  # dash-escaped (RFC 4880 section 7.1)
                stripped = line.strip()
        if not stripped:
            yield TextLine(number, line, BLANK)
            continue
        if stripped.startswith(">"):
            yield TextLine(number, line, QUOTED)
            continue
        if line.rstrip() in ("--", "-- "):
            yield TextLine(number, line, END, SIGNATURE, marker_only=True)
            return
        if len(stripped) > _MAX_MARKER_CHARS:
            yield TextLine(number, line, COMMAND)
            continue
        ends = _ends_here(lines, index, stripped)
        if ends is not None:
            yield TextLine(number, line, END, ends)
            return
        last = _introduction(lines, index)
        if last is not None:
            if _quote_follows(lines, last + 1):
                skip_until = last
                yield TextLine(number, line, INTRO)
                continue
            yield TextLine(number, line, END, REPLIED_TO)
            return
        yield TextLine(number, line, COMMAND)


def _ends_here(lines: list[str], index: int, stripped: str) -> str | None:
    """What starts at this line if it is a separator, a forward marker or
    Outlook's header (From: followed by header lines), else None."""
    if stripped[0] not in "-_" and ":" not in stripped[:_MARKER_COLON]:
        return None  # the common case, a command line: no marker starts so
    folded = stripped.casefold()
    if _SEPARATORS.fullmatch(stripped):
        return FORWARDED if "forward" in folded or "weitergeleitet" in folded or "transf" in folded \
            or "reenviado" in folded or "inoltrato" in folded or "doorgestuurd" in folded else REPLIED_TO
    if folded in _FORWARD_INTROS:
        return FORWARDED
    if _UNDERSCORES.fullmatch(stripped) and _headers_follow(lines, index + 1):
        return REPLIED_TO
    if _header_name(stripped) in _FROM_NAMES and _headers_follow(lines, index + 1, need=2):
        return REPLIED_TO
    return None


def _header_name(stripped: str) -> str | None:
    match = _HEADER_LINE.match(stripped)
    if match is None:
        return None
    return match.group(1).strip().casefold()


def _headers_follow(lines: list[str], start: int, need: int = 1) -> bool:
    """Whether `need` header lines (Sent:, To:, Subject:...; or From: after
    a separator) stand within the next few non-blank lines from `start`."""
    found = seen = 0
    for line in lines[start:start + 2 * _HEADER_LOOKAHEAD]:
        stripped = line.strip()
        if not stripped:
            continue
        seen += 1
        if seen > _HEADER_LOOKAHEAD:
            break
        if len(stripped) > _MAX_MARKER_CHARS:
            continue
        name = _header_name(stripped)
        if name in _HEADER_NAMES or (need == 1 and name in _FROM_NAMES):
            found += 1
            if found >= need:
                return True
    return False


def _introduction(lines: list[str], index: int) -> int | None:
    """The index of the last line of an introduction ("On ... wrote:")
    that starts at lines[index], or None."""
    first = lines[index].strip()
    if not first.endswith(":") and first.partition(" ")[0].casefold() not in _INTRO_OPENERS:
        return None  # the common case: neither a whole introduction nor the start of a wrapped one
    parts: list[str] = []
    for last in range(index, min(index + _WRAP, len(lines))):
        stripped = lines[last].strip()
        if not stripped or stripped.startswith(">") or len(stripped) > _MAX_MARKER_CHARS:
            return None
        parts.append(stripped)
        if stripped.endswith(":") and _is_introduction(" ".join(parts), wrapped=last > index):
            return last
    return None


def _is_introduction(text: str, wrapped: bool) -> bool:
    words = [word.casefold() for word in _WORD.findall(text)]
    if not words:
        return False
    if wrapped and words[0] not in _INTRO_OPENERS:
        return False
    if words[-1] in _INTRO_WORDS or any(word in _INTRO_WORDS for word in words[-12:]):
        return True
    # mutt's and slrn's older "* Judge <judge@example.test> [2026-11-27 13:21]:"
    # and Horde's "Quoting Judge <judge@example.test>:".
    return ("@" in text and (text.startswith("* ") or words[0] == "quoting")) and not wrapped


def _quote_follows(lines: list[str], start: int) -> bool:
    """Whether the next non-blank line from `start` is quoted (or none is left)."""
    for index in range(start, len(lines)):  # not lines[start:]: a copy per introduction is quadratic
        stripped = lines[index].strip()
        if stripped:
            return stripped.startswith(">")
    return True
