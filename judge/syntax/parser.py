"""Parse one line of a mail into a command (LALR, grammar loaded once).

The grammar is grammars/commands.lark with every method's own that extends
it (a Method's GRAMMAR, found through judge.methods.registry): one LALR
parser for all. The method's SYNTAX module builds its nodes (`Transform`,
mixed into the shell's transformer) and names what the replies and masks
need of its lines (`EXPECTED`, `LISTED`, `SECRET_WORDS`)."""

from __future__ import annotations

import importlib
import re
import unicodedata
from dataclasses import replace
from functools import cache
from types import ModuleType
from typing import Callable

from lark import Lark, LarkError, Token, Transformer, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from judge import grammar_cache
from judge.resources import data_dir
from judge.syntax import forum, nodes
from judge.syntax.errors import CommandSyntaxError, fault

# What a person should read for each terminal lark may expect next.
_EXPECTED = {
    "GAME": "a game name starting with ? (like ?spring)",
    "TARGET": "?game to play, Mgame as the game's master, Ogame to observe, or Xgame to take over power X",
    "PASSWORD": "a password",
    "NAME": "a name",
    "REST": "a date and time (like 2026-12-01 18:00 UTC) or a delay (like +48h)",
    "WHO": "a player's address, or name as the judge shows it",
    "PREF_LIST": "a preference list (like E[FGR][TAI])",
    "COUNT": "a number of players",
    "ENTROPY_TEXT": "any text",
    "NOTICE_MODE": "EACH (a mail for each player and list) or DAILY (one digest a day)",
    "AMOUNT": "a number of points",
    "PARAM_VALUE": "a whole number (or T/U for D)",
    "WORD": "a power's name",
    "$END": "the end of the line",
}
_SHELL_COMMANDS = ("CREATE", "SIGNON", "SET", "SIGNOFF", "START", "PROCESS", "EJECT", "UNLOCK", "REPLACE",
                   "NO PREFERENCE", "FOR", "ENTROPY", "LIST", "HELP")


@cache
def _extensions() -> tuple[tuple[str, ModuleType], ...]:
    """(grammar text, SYNTAX module) of each method whose commands extend
    the shell's grammar, in the registry's order."""
    from judge.methods.registry import METHODS

    found = []
    for name in METHODS:
        method = METHODS[name]
        if method.GRAMMAR:
            text = (data_dir("grammars") / method.GRAMMAR).read_text(encoding="utf-8")
            found.append((text, importlib.import_module(method.SYNTAX)))
    return tuple(found)


@cache
def _commands() -> str:
    """The commands, as a reply that expected one lists them."""
    return ", ".join(_SHELL_COMMANDS + tuple(w for _, m in _extensions() for w in m.LISTED))


@cache
def _expected() -> dict[str, str]:
    return {**_EXPECTED, **{k: v for _, m in _extensions() for k, v in m.EXPECTED.items()}}


@cache
def _token_words() -> frozenset[str]:
    """The methods' lines whose word after the game is a secret (SECRET_WORDS)."""
    return frozenset(w for _, m in _extensions() for w in m.SECRET_WORDS)


@cache
def _parser() -> Lark:
    texts = [(data_dir("grammars") / "commands.lark").read_text(encoding="utf-8")]
    texts += [text for text, _ in _extensions()]
    # The shell's callbacks and each method's (Transform), one transformer.
    transformer = type("_ToNodes", (_ToNodes, *(m.Transform for _, m in _extensions())), {})
    return grammar_cache.lark("\n".join(texts), "commands", parser="lalr", maybe_placeholders=True,
                              transformer=transformer())


# Keywords of several words, which the grammar matches with one pattern each
# (a blank or none between the words): named as the words, among the keywords.
_PHRASES = {"MANUAL_START": "MANUAL START", "NO_MANUAL_START": "NO MANUAL START", "AUTO_START": "AUTO START"}


def _describe(expected: set[str]) -> str:
    names = []
    keywords = []
    for term in sorted(expected):
        if term in _PHRASES:
            keywords.append(_PHRASES[term])
        elif term in _expected():
            names.append(_expected()[term])
        else:
            try:
                value = getattr(_parser().get_terminal(term).pattern, "value", term)
            except KeyError:  # a name of lark's own, not of the grammar
                continue
            keywords.append(value.upper() if value.isalpha() else f"'{value}'")
    if "WORD" in expected and len(keywords) > 5:
        return f"a command ({_commands()}) or a bid like 'Austria 40'"
    if keywords:
        names.append("one of " + ", ".join(sorted(set(keywords))) if len(keywords) > 1 else keywords[0])
    return " or ".join(names) if names else "something else"


class _ToNodes(Transformer):
    """Rules -> nodes, run inline by the LALR parser (no parse tree is built).

    Line and column of a command are filled in by parse_line, which knows the
    line; the columns of passwords and bids come from their tokens."""

    def start(self, c):
        return c[0]

    def set_cmd(self, c):
        return c[0]

    def create(self, c):
        game, password, method, variant = c
        return nodes.Create(**_HERE, game=str(game)[1:], **_secret(password),
                            method=_opt(method), variant=_opt(variant))

    def signon(self, c):
        target, password, variant = c
        t = str(target)
        common = {**_HERE, "game": t[1:], **_secret(password), "variant": _opt(variant)}
        if t.startswith("?"):
            return nodes.Signon(**common, master=False)
        if t[0] in "mM":
            return nodes.Signon(**common, master=True)
        if t[0] in "oO":
            return nodes.Signon(**common, master=False, observer=True)
        if t[0].isalpha():
            # nJudge's Xgame: power X's seat (the handler checks the letter,
            # and hints at ?game when the game is named without its prefix).
            return nodes.Signon(**common, master=False, power=t[0].upper())
        raise _Semantic(target.column, _EXPECTED["TARGET"], f"write SIGNON ?{t.lstrip('?')} yourpassword to play.")

    def signoff(self, c):
        return nodes.Signoff(**_HERE)

    def set_password(self, c):
        return nodes.SetPassword(**_HERE, **_secret(c[0]))

    def set_deadline(self, c):
        return nodes.SetDeadline(**_HERE, text=str(c[0]).strip())

    def param(self, c):
        return str(c[0])[0].upper()

    def set_param(self, c):
        return nodes.SetParam(**_HERE, name=c[0], value=str(c[1]).upper())

    def set_variant(self, c):
        return nodes.SetVariant(**_HERE, name=str(c[0]))

    def set_method(self, c):
        return nodes.SetMethod(**_HERE, name=str(c[0]))

    def set_preference(self, c):
        tok = c[0]
        if tok is None:
            return nodes.SetPreference(**_HERE, text="", text_column=0)
        return nodes.SetPreference(**_HERE, text=str(tok).rstrip(), text_column=tok.column)

    def set_mode(self, c):
        return nodes.SetPrefMode(**_HERE, mode={"PRFLIST": "list", "PRFBOTH": "both",
                                                "PRFRAND": "random"}[str(c[0]).upper()])

    def set_players(self, c):
        return nodes.SetPlayers(**_HERE, count=int(c[0]))

    def start_game(self, c):
        return nodes.Start(**_HERE)

    def process(self, c):
        return nodes.Process(**_HERE)

    def eject(self, c):
        return nodes.Eject(**_HERE, player=_who(c[0]))

    def unlock(self, c):
        return nodes.Unlock(**_HERE, player=_who(c[0]))

    def replace(self, c):
        (tok,) = c
        text = _who(tok)
        # "REPLACE old WITH new" (or BY): the master said where the old name ends.
        m = re.search(r"\s(?:with|by)\s+(?=\S)", text, re.IGNORECASE)
        if m is not None:
            return nodes.Replace(**_HERE, player=text[:m.start()].strip(), new_player=text[m.end():].strip(),
                                 text=text, split=True)
        words = text.split()
        if len(words) < 2 or words[-1].casefold() in ("with", "by"):
            raise _Semantic(tok.column + len(text), "the new player's address",
                            f"Write REPLACE {text} new.player@example.com")
        # A first reading: the first word is the old player; the handler
        # reads it again with the players' names (judge/commands/eml_eject.py).
        return nodes.Replace(**_HERE, player=words[0], new_player=" ".join(words[1:]), text=text)

    def no_preference(self, c):
        return nodes.NoPreference(**_HERE, player=_who(c[-1]) if c and c[-1] is not None else None)

    def list_game(self, c):
        game = _opt(c[0] if c else None)
        return nodes.ListGame(**_HERE, game=game[1:] if game else None)

    def on_behalf(self, c):
        return nodes.OnBehalf(**_HERE, player=_who(c[0]))

    def entropy(self, c):
        return nodes.Entropy(**_HERE, text=str(c[0]).rstrip() if c[0] is not None else "")

    def help(self, c):
        return nodes.Help(**_HERE, topic=_opt(c[0]).casefold() if c and c[0] is not None else None)

    def set_reminders(self, c):
        return nodes.SetReminders(**_HERE, text=str(c[0]).strip())

    def set_notices(self, c):
        word = str(c[0]).casefold()
        return nodes.SetNotices(**_HERE, mode="each" if word == "each" else "daily")

    def set_start(self, c):
        word = "".join(str(c[0]).split()).upper()
        return nodes.SetStart(**_HERE, manual=word == "MANUALSTART")

    def power(self, c):
        return " ".join(str(w) for w in c), c[0].column

    def bid(self, c):
        (name, column), amount = c[0], c[-1]
        # "Turkey 5." ends a sentence: the full stop is no decimal point.
        return nodes.BidEntry(power=name, amount=str(amount).removesuffix("."), line=0, column=column)

    def bids(self, c):
        return nodes.Bids(**_HERE, entries=tuple(c))


class _Semantic(Exception):
    def __init__(self, column: int, expected: str, hint: str) -> None:
        self.column, self.expected, self.hint = column, expected, hint


_HERE = {"line": 0, "column": 0}  # placeholders, filled in by parse_line


def _opt(tok: Token | None) -> str | None:
    return None if tok is None else str(tok)


def _who(tok: Token) -> str:
    """A player as written: an address, or a name of several words."""
    return " ".join(str(tok).split())


def _secret(tok: Token) -> dict:
    return {"password": str(tok), "password_column": tok.column}


# For the callbacks of a method's grammar (its SYNTAX's Transform): the
# placeholders of a node's place, a password's fields, a player as written.
HERE, secret, who = _HERE, _secret, _who


# White space as mail clients send it: tabs, no-break spaces (U+00A0, U+202F),
# ideographic and typographic spaces, line and paragraph separators, NEL, and
# the byte order mark that some clients leave at the start of a line. Each is
# replaced by one ' ' before parsing, so that columns stay true to the line as
# sent. This is every character for which str.isspace() holds, plus U+FEFF
# (BOM) and U+200B (zero width space), which are not white space to Python but
# are to the person who pasted them. tests/security/test_syntax_unicode.py
# checks the list against str.isspace().
_SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200C)))
           + "\u2028\u2029\u202f\u205f\u3000\ufeff")
_TO_SPACE = str.maketrans(dict.fromkeys(_SPACES, " "))

MAX_LINE_LENGTH = 1000  # longer lines are refused before any regex or the grammar reads them
_SHOWN_OF_LONG_LINE = 80  # how much of a refused long line its error shows


def _is_space(ch: str) -> bool:
    return ch in _SPACES


def _skip(line: str, i: int, also: str = ":=,") -> int:
    """The index of the first character at or after i that is neither white
    space nor punctuation glued to a keyword ("SIGNON: ?x", "PASSWORD = y")."""
    while i < len(line) and (line[i] in also or _is_space(line[i])):
        i += 1
    return i


def _run(line: str, i: int, keep) -> int:
    """The index just past the run of characters from i for which keep holds."""
    while i < len(line) and keep(line[i]):
        i += 1
    return i


def _secret_span(line: str) -> tuple[int, int] | None:
    """Where the password of a password-bearing command stands, read from the
    line's first words: no parse and no backtracking regex, one pass over the
    line, so that it works (and is linear) on any line, above all on one that
    did not parse. It errs on the side of masking too much:
    SIGNON: everything after the game; CREATE: the word after the game;
    SET PASSWORD: everything after PASSWORD; a method's line with a secret
    after the game (SECRET_WORDS): that word."""
    i = _run(line, 0, lambda ch: not ch.isalpha())  # blanks, and "1." or "-" of a list
    j = _run(line, i, str.isalpha)
    keyword = line[i:j].casefold()
    if keyword == "sign":  # SIGN ON, nJudge's two words
        k = _skip(line, j)
        m = _run(line, k, str.isalpha)
        if line[k:m].casefold() == "on":
            keyword, j = "signon", m
    if keyword in ("set", "setpassword"):
        if keyword == "set":
            i = _skip(line, j)
            j = _run(line, i, str.isalpha)
            if line[i:j].casefold() != "password":
                return None
        start, end = _skip(line, j), len(line)
    elif keyword in ("signon", "create") or keyword in _token_words():
        i = _skip(line, j)
        # The game token: ?game or Mgame, up to what no game name holds (lark
        # reads "?spring:pw" as ?spring and ":pw"); a word if it holds no name.
        j = _run(line, i, lambda ch: ch.isalnum() or ch in "?_.-")
        if j == i:
            j = _run(line, i, lambda ch: not _is_space(ch))
        start = _skip(line, j)
        end = len(line) if keyword == "signon" else _run(line, start, lambda ch: not _is_space(ch))
        if keyword in _token_words() and not line[start:end].isalpha():
            return None  # no token there (BLINDED ?g 1234: the number, not a secret)
    else:
        return None
    while end > start and _is_space(line[end - 1]):
        end -= 1  # trailing blanks are no part of the password
    return (start, end) if start < end else None


# The first word of a line the judge reads as a (failed) command: a command
# keyword, with punctuation glued to it ("SIGNON:"). A line that begins with
# a word and holds a number may be a bid ("Austria 4O").
_SHELL_WORDS = frozenset({"create", "signon", "sign", "signoff", "set", "start", "process", "eject", "replace", "no",
                          "nopreference", "nopref", "list", "help", "for", "entropy", "unlock"})


@cache
def _command_words() -> frozenset[str]:
    """The shell's and every method's (its COMMAND_WORDS)."""
    from judge.methods.registry import METHODS

    return _SHELL_WORDS | {w for name in METHODS for w in METHODS[name].COMMAND_WORDS}

_FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")
_FIRST_ALPHA = re.compile(r"[^A-Za-z]{0,20}([A-Za-z]+)")


def looks_like_command(line: str) -> bool:
    """Whether a line the grammar refused was meant as a command (its reply
    quotes it with a caret) or is prose (its reply does not quote it)."""
    m = _FIRST_WORD.match(line)
    if m is None:
        return False
    return m.group(1).casefold() in _command_words() or any(c.isdigit() for c in line[:80])


def mask_secret(line: str, node: nodes.Node | None = None) -> str:
    """The line with its password replaced: '****' for a parsed command,
    stars of the same length for a line that did not parse (so that the caret
    of a syntax error stays under the right column)."""
    if isinstance(node, nodes.Secret):
        if not node.password:
            return line
        start = node.password_column - 1
        return line[:start] + "****" + line[start + len(node.password):]
    span = _secret_span(line)
    if span is None:
        return line
    start, end = span
    return line[:start] + "*" * (end - start) + line[end:]


def _shown(line: str) -> str:
    """The line as an error shows it: masked, and any character that cannot
    be printed (a control or format character, which could hide text or steer
    a terminal) as U+FFFD, one for one, so that columns stay true."""
    masked = mask_secret(line)
    if masked.isprintable():
        return masked
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in masked)


def parse_line(text: str, line_no: int = 1, *, max_length: int = MAX_LINE_LENGTH,
               is_variant: Callable[[str], bool] | None = None) -> nodes.Node:
    """Parse one line (without its newline); CommandSyntaxError if it is no
    command. Never raises anything else, and costs time linear in the line.
    `is_variant`: whether a word after a SIGNON's password names a variant
    (the judge's, with its configured ones); if it does not, the line is
    refused as a password of two words."""
    line = text.rstrip("\r\n")
    if len(line) > max_length:
        # Before anything else reads it: nothing may spend time on a flood.
        shown = _shown(line[:_SHOWN_OF_LONG_LINE].translate(_TO_SPACE))
        raise CommandSyntaxError(
            line_no, 1, shown + "...", f"a line of at most {max_length} characters",
            f"This line is {len(line)} characters long; the judge reads lines of at most {max_length}. "
            "Split it: one command per line.")
    line = line.translate(_TO_SPACE)  # one space for one: carets stay true
    if not line.isprintable():
        # A control or format character left (NUL, ESC, bidi overrides, soft
        # hyphen...): invisible in a reply, able to hide or reorder text.
        for i, ch in enumerate(line):
            if unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
                raise CommandSyntaxError(line_no, i + 1, _shown(line), "visible text", _invisible(ch))
    try:
        node = _parsed(line)
    except UnexpectedInput as err:
        shown = _shown(line)
        node = _as_posted(line, line_no, shown)
        if node is None:
            raise _syntax_error(err, shown, line, line_no) from err
        return node
    except _Semantic as err:  # raised by a transformer callback during the parse
        raise CommandSyntaxError(line_no, err.column, _shown(line), err.expected, err.hint) from err
    except LarkError as err:
        # Any other error of lark's is still this line's fault, not the mail's:
        # the line is refused, the rest of the mail is read.
        raise CommandSyntaxError(line_no, 1, _shown(line), f"a command ({_commands()}) or a bid like 'Austria 40'",
                                 "The judge could not read this line.") from err
    if isinstance(node, nodes.Signon) and node.variant is not None and is_variant is not None \
            and not is_variant(node.variant):
        # Not a variant: most likely the second word of a password written
        # with a space ("SIGNON ?g my secret"). Refused as before variants
        # could follow, masked as an unparsed line is (the whole rest), so a
        # password's second word is never echoed as if it were a variant.
        shown = _shown(line)
        at = line.index(node.variant, node.password_column - 1 + len(node.password)) + 1
        raise CommandSyntaxError(line_no, at, shown, "the end of the line (or a variant's name)",
                                 (_found(shown, line, at) + _one_word(line, at)).strip())
    column = len(line) - len(line.lstrip()) + 1
    if isinstance(node, nodes.Bids):
        entries = tuple(replace(e, line=line_no) for e in node.entries)
        return replace(node, line=line_no, column=column, entries=entries)
    return replace(node, line=line_no, column=column)


# Lines read already, and the node each gave (at line 0, column 0): the
# same lines come again and again (a deadline's 500 games replay bid lines
# like "Austria: 40" from their stored bids; a backlog's LIST, HELP, SIGNOFF),
# and lark's parse of one costs ~50 us. Only nodes that nothing can change
# are kept (frozen, of immutable fields), and never a line that holds a
# secret: a password stays in no cache.
_PARSED: dict[str, nodes.Node] = {}
_PARSED_MAX = 4096


def _parsed(line: str) -> nodes.Node:
    node = _PARSED.get(line)
    if node is not None:
        return node
    node = _parser().parse(line)
    if not isinstance(node, nodes.Secret) and _immutable(node) and _secret_span(line) is None:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()  # simpler than an LRU, and as good for lines that recur
        _PARSED[line] = node
    return node


_SCALARS = (str, int, float, bool, type(None))


def _immutable(value: object) -> bool:
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    params = getattr(type(value), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return all(_immutable(v) for v in vars(value).values()) if hasattr(value, "__dict__") else False
    return False


def _as_posted(line: str, line_no: int, shown: str) -> nodes.Node | None:
    """A line the grammar refused, read as forums post bids (judge/syntax/
    forum.py): a Markup line, Bids read from around the markup, list numbers,
    units and signs, or None (the grammar's refusal stands). A line that
    reads as a bid in two ways is refused, saying which (CommandSyntaxError)."""
    if forum.only_markup(line):
        return nodes.Markup(line=line_no, column=1)
    first = _FIRST_ALPHA.match(forum.blank_markup(line))
    if first is not None and first.group(1).casefold() in _command_words():
        return None  # a command that went wrong is said to be one ("SET T 140 points")
    try:
        bids = forum.read_bid_line(line)
    except forum.Ambiguous as err:
        raise CommandSyntaxError(line_no, err.column, shown, "one power and one number of points", f"{err}.") \
            from None
    if bids is None:
        return None
    column = len(line) - len(line.lstrip()) + 1
    return nodes.Bids(line=line_no, column=column, forum=True, entries=tuple(
        nodes.BidEntry(power=power, amount=amount, line=line_no, column=at) for power, at, amount in bids))


def _invisible(ch: str) -> str:
    return f"The character U+{ord(ch):04X} (invisible, or not printable) cannot stand here; delete it."


def _one_word(line: str, column: int) -> str:
    """A word more for an error inside a password (as lark and _secret_span see it)."""
    span = _secret_span(line)
    return " A password is one word, without spaces." if span and span[0] < column <= span[1] else ""


def _found(line: str, raw: str, column: int) -> str:
    """What stands at column, quoted from the line as shown (masked), never
    from lark's token: that may be a password, or the whole rest of the line."""
    if line[column - 1] == "\ufffd" != raw[column - 1]:
        return _invisible(raw[column - 1])  # never a password's: those are stars
    rest = line[column - 1:].split(None, 1)
    return f"Instead '{rest[0][:20]}'." if rest else "Instead the line ends."


def _syntax_error(err: UnexpectedInput, line: str, raw: str, line_no: int) -> CommandSyntaxError:
    """The error for a line that lark could not parse: `line` as shown (see
    _shown), `raw` as parsed."""
    end = len(line.rstrip()) + 1
    column, expected = fault(err, line)
    if isinstance(err, UnexpectedToken):
        hint = _found(line, raw, column) if column < end else "Instead the line ends."
    elif isinstance(err, UnexpectedCharacters):
        ch = line[column - 1] if column <= len(line) else ""
        hint = _invisible(raw[column - 1]) if ch == "\ufffd" != raw[column - 1] else f"'{ch}' cannot stand here."
    else:
        hint = ""
    if expected == {"$END"}:
        hint += _one_word(raw, column)
    if not expected or expected >= {"WORD", "GAME"}:
        what = f"a command ({_commands()}) or a bid like 'Austria 40'"
    else:
        what = _describe(expected)
    if "AMOUNT" in expected and "WORD" in expected:
        # The line began with a word that is no command: a bid, or just prose.
        what = f"a number of points for a bid (like 'Austria 40'), or a command ({_commands()})"
    return CommandSyntaxError(line_no, column, line, what, hint.strip())
