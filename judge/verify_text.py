"""Does a results mail's text say what its attached record says?

`judge verify` re-runs the record a mail carries (judge/verify.py). A mail
whose text was altered but whose resolution.json was not ("Alice  France"
made "Alice  Russia", another seed shown) would still pass that check, yet
the text is what people read. This module compares the text with the record.

It reads facts, not layouts: the wording of the results mails may change
between judge versions, so nothing here re-renders or parses a template.
What it relies on:

- A player is recognised by what the record can vouch for: their address
  (any case); the judge's default name, the address's local part (`p3` for
  p3@example.org), when no other player has the same; a name the record
  holds (`names`, address -> name, where a record carries one); in a player's
  own mail, the name in "You, NAME, play" (the reader is known apart). A
  display name the record does not hold cannot be tied to an address: such a
  player's lines are not checked, and `TextCheck.unchecked` says who.
- A power is recognised by its name in the record's power list (whole word,
  exact case; not after `?`, which marks a game's name).
- Text the players wrote themselves (ENTROPY lines, preference lists,
  refusal reasons) may name any power or player: where it appears it is
  masked, so "France is mine" is no claim about anyone's power. A text that
  is one name or power alone ("France") is masked only on a line that names
  its writer, so that it does not hide every France of the mail.

The checks, line by line (the first difference found is the answer):

1. A line naming exactly one player and exactly one power must name that
   player's power (one of them, for a duplex player).
2. "you play X" / "your power is X" must give the reader's power: the
   player of a blind game's player record, or the addressee of a results
   mail.
3. A 64-hex-digit string labelled seed, commitment or secret (the label
   nearest before it on its line) must be the record's value of that name
   (or of a field named for it, as `final_key_commitment`); any other must
   be one of the record's hex values.

Then, for mails that give the whole assignment (every record but a player's
own): every player the text names must have a line that states their power,
and every power the record assigns must be named somewhere.

Time: one pass over the text per compiled pattern, each pattern built from
the record alone, so the work grows linearly with the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

# 64 hex digits, not part of a longer run of hex digits.
_HEX64 = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])")
_LABEL = re.compile(r"\b(seed|commitment|committed|secret)\b", re.IGNORECASE)
_LABEL_KEY = {"seed": "seed", "commitment": "commitment", "committed": "commitment", "secret": "secret"}
# "You play X", "You, NAME, play X", "Your power is X".
_YOU = re.compile(r"\byou(?:,\s*(?P<name>[^,\n]{1,60}?)\s*,)?\s+play\b|\byour\s+power\s+is\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.;!](?:\s|$)")
_NO_POWER = re.compile(r"\bno power\b", re.IGNORECASE)
# A name or power is a whole token: not inside a word, an address, or a
# game's name (`?France` is a game, not the power).
_BEFORE = r"(?<![\w?@.+\-])"
_AFTER = r"(?![\w@+\-]|\.\w)"
_BBCODE = str.maketrans("[]", "()")  # how the forum post shows free text (judge/templating.py)
_SHOWN = 100  # characters of a line quoted in a difference


@dataclass
class TextCheck:
    """What the text check found: `difference` is None when the text agrees."""

    difference: str | None = None
    whole: bool = True  # the record gives the whole assignment (not one player's own record)
    stated: list[str] = field(default_factory=list)  # players whose power the text states
    unchecked: list[str] = field(default_factory=list)  # players the text names by no name the record vouches for


def text_difference(text: str, record: Mapping[str, Any], reader: str | None = None) -> str | None:
    """None when the mail's text agrees with the record, else one sentence
    naming the first difference. `reader` is the address the mail was sent
    to, when known: "you play X" must then be that player's power."""
    return check_text(text, record, reader).difference


def check_text(text: str, record: Mapping[str, Any], reader: str | None = None) -> TextCheck:
    facts = _Facts(record, reader)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    facts.learn_reader_name(lines)
    token = facts.token_pattern()
    free = facts.free_pattern(token)
    named: set[str] = set()
    stated: set[str] = set()
    seen_powers: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        diff = _hex_difference(facts, number, line)
        if diff:
            return TextCheck(diff)
        masked, raw = _tokens(facts, token, free, line)
        seen_powers.update(w for _, w, _ in raw if w)
        # "You, p2, play X" is read as what it says to the reader first.
        diff = _you(facts, number, line, masked) or _statement(facts, number, line, masked, raw, named, stated)
        if diff:
            return TextCheck(diff)
    check = TextCheck(whole=facts.whole, stated=[p for p in facts.assignment if p in stated])
    if not facts.whole:
        return check
    for player, powers in facts.assignment.items():
        if player in stated:
            continue
        if player in named:
            check.difference = (f"the text names {player} but no line of it states their power "
                                f"(the record gives them {_say(powers)})")
            return check
        check.unchecked.append(player)
    for player, powers in facts.assignment.items():
        for power in powers:
            if power not in seen_powers:
                check.difference = f"the text never names {power}, which the record gives to {player}"
                return check
    return check


# --------------------------------------------------------------------------

class _Facts:
    """What the text is checked against, gathered from the record once."""

    def __init__(self, record: Mapping[str, Any], reader: str | None) -> None:
        result = record.get("result", record)
        result = result if isinstance(result, Mapping) else {}
        data = record.get("input")
        data = data if isinstance(data, Mapping) else {}
        # A blind game's player record holds that player's power alone; every
        # other record (results, the master's) gives the whole assignment.
        self.whole = not (record.get("role") == "player" or (
            "assignment" not in result and "power" in result and isinstance(data.get("player"), str)))
        if self.whole:
            raw = result.get("assignment") or {}
            pairs = raw.items() if isinstance(raw, Mapping) else [
                p for p in raw if isinstance(p, (list, tuple)) and len(p) == 2]
            self.assignment = {str(pl): _powers_of(w) for pl, w in pairs}
            by_fold = {p.casefold(): p for p in self.assignment}
            self.reader = by_fold.get(reader.strip().casefold()) if isinstance(reader, str) else None
        else:
            player = data.get("player")
            self.assignment = {player: _powers_of(result.get("power"))} if isinstance(player, str) else {}
            self.reader = player if isinstance(player, str) else None
        self.powers = _power_names(result, data, self.assignment)
        self.hexes = {key: value.lower() for key, value in
                      (("seed", result.get("seed")), ("commitment", record.get("commitment")),
                       ("secret", record.get("secret"))) if isinstance(value, str)}
        # Every 64-hex string anywhere in the record (an ENTROPY line may hold one).
        self.known_hex = {h.lower() for h in _HEX64.findall(json.dumps(record, ensure_ascii=False))}
        # A label may also name a field of its own kind ("the final key's
        # commitment"): the record's values under keys holding the word.
        self.labelled: dict[str, set[str]] = {key: {value} for key, value in self.hexes.items()}
        _hex_fields(record, self.labelled)
        self.addresses = {p.casefold(): p for p in self.assignment if "@" in p}
        self.names = self._names(record.get("names") or result.get("names"))
        self.free = _free_texts(record, result)
        self.bare: set[str] = set()  # free texts that are one name or power and nothing else

    def _names(self, given: Any) -> dict[str, str]:
        """name -> player: the names the record vouches for, where exactly
        one player has them and they are not a power's name."""
        found: dict[str, set[str]] = {}
        locals_: dict[str, set[str]] = {}
        for p in self.assignment:
            if "@" in p:
                local = p.split("@", 1)[0]
                locals_.setdefault(local.casefold(), set()).add(p)
                found.setdefault(local, set()).add(p)
            else:
                found.setdefault(p, set()).add(p)  # offline resolutions name players by their key
        if isinstance(given, Mapping):
            for p, name in given.items():
                if p in self.assignment and isinstance(name, str) and name.strip():
                    found.setdefault(name.strip(), set()).add(p)
                    if " <" in name:  # "Name <address>", as results show look-alike names
                        found.setdefault(name.split(" <", 1)[0].strip(), set()).add(p)
        powers = {w.casefold() for w in self.powers}
        # Local parts equal but for case (ann@a, Ann@b): the judge shows
        # such names with their addresses, so the bare name is nobody's.
        shared = {local for local, owners in locals_.items() if len(owners) > 1}
        return {name: next(iter(owners)) for name, owners in found.items()
                if name and len(owners) == 1 and name.casefold() not in powers
                and not ("@" not in name and name.casefold() in shared)}

    def learn_reader_name(self, lines: list[str]) -> None:
        """In the reader's own mail, "You, NAME, play" ties NAME to them."""
        if not self.reader:
            return
        power = re.compile(_BEFORE + "(?:" + "|".join(map(re.escape, self.powers)) + ")" + _AFTER)
        for line in lines:
            m = _YOU.search(line)
            name = m.group("name") if m else None
            if not name or name in self.names or (self.powers and power.search(name)):
                continue
            self.names[name] = self.reader

    def token_pattern(self) -> re.Pattern[str]:
        """Every address, name and power, longest first, so that a name
        holding a power's name (`Frank Germany`) is read as the name."""
        alts = [(a, True) for a in self.addresses.values()] + [(n, False) for n in self.names]
        alts += [(w, False) for w in self.powers]
        alts.sort(key=lambda a: len(a[0]), reverse=True)
        if not alts:
            return re.compile(r"(?!x)x")
        body = "|".join(f"(?i:{re.escape(a)})" if fold else re.escape(a) for a, fold in alts)
        return re.compile(f"{_BEFORE}(?:{body}){_AFTER}")

    def free_pattern(self, token: re.Pattern[str]) -> re.Pattern[str] | None:
        """The players' own texts that name a power or a player: where they
        appear, they are masked."""
        texts = sorted((t for t in self.free if token.search(t)), key=len, reverse=True)
        # An ENTROPY line that is just "France" must not hide every France
        # of the mail: such a text is masked only beside its owner's name.
        self.bare = {t for t in texts if token.fullmatch(t)}
        if not texts:
            return None
        return re.compile("|".join(
            (r"(?<!\w)" if t[0].isalnum() else "") + re.escape(t) + (r"(?!\w)" if t[-1].isalnum() else "")
            for t in texts))

    def player_of(self, token: str) -> str | None:
        if "@" in token and token.casefold() in self.addresses:
            return self.addresses[token.casefold()]
        return self.names.get(token)


def _hex_fields(value: Any, out: dict[str, set[str]], depth: int = 0) -> None:
    """Collect 64-hex values by the label word their key holds (seed,
    commitment, secret), anywhere in the record."""
    if depth > 20:
        return
    items = value.items() if isinstance(value, Mapping) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, v in items:
        if isinstance(v, str) and isinstance(key, str) and _HEX64.fullmatch(v):
            for label in ("seed", "commitment", "secret"):
                if label in key.lower():
                    out.setdefault(label, set()).add(v.lower())
        elif isinstance(v, (Mapping, list)):
            _hex_fields(v, out, depth + 1)


def _powers_of(value: Any) -> tuple[str, ...]:
    """A player's powers as a tuple: () for none, several for a duplex player."""
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(w) for w in value if w is not None)
    return (str(value),)


def _power_names(result: Mapping[str, Any], data: Mapping[str, Any],
                 assignment: Mapping[str, tuple[str, ...]]) -> list[str]:
    names: list[str] = []
    for source in (result.get("powers"), data.get("powers")):
        for p in source if isinstance(source, list) else ():
            name = p.get("name") if isinstance(p, Mapping) else p
            if isinstance(name, str) and name.strip():
                names.append(name.strip())
    for powers in assignment.values():
        names.extend(powers)
    return list(dict.fromkeys(names))


def _free_texts(record: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, set[str]]:
    """What players wrote themselves and results show (their ENTROPY lines,
    preference lists, why a list was refused, why a message was corrected),
    also as the forum post shows it, [ ] turned into ( ): text -> whose."""
    texts: list[tuple[Any, Any]] = []
    for entry in record.get("entropy") or ():
        if isinstance(entry, (list, tuple)) and len(entry) == 2:
            texts.append((entry[0], entry[1]))
    prefs = result.get("preferences")
    for player, p in (prefs.items() if isinstance(prefs, Mapping) else ()):
        texts.append((player, p.get("text") if isinstance(p, Mapping) else None))
    rejected = result.get("rejected")
    texts.extend(rejected.items() if isinstance(rejected, Mapping) else ())
    for c in result.get("corrections") or ():
        if isinstance(c, Mapping):
            texts.append((c.get("player"), c.get("reason")))
    out: dict[str, set[str]] = {}
    for player, t in texts:
        if isinstance(player, str) and isinstance(t, str) and t.strip():
            for shown in (t.strip(), t.strip().translate(_BBCODE)):
                out.setdefault(shown, set()).add(player)
    return out


def _tokens(facts: _Facts, token: re.Pattern[str], free: re.Pattern[str] | None,
            line: str) -> tuple[list[tuple[str | None, str | None, int]], list[tuple[str | None, str | None, int]]]:
    """The players and powers a line names, as (player, power, position):
    outside the players' own texts (masked), and all of them (raw)."""
    spans = [(m.start(), m.end(), m.group()) for m in free.finditer(line)] if free else []
    raw: list[tuple[str | None, str | None, int]] = []
    within: list[str | None] = []  # the free text each token lies in, if any
    k = 0
    for m in token.finditer(line):
        player = facts.player_of(m.group())
        raw.append((player, None if player else m.group(), m.start()))
        # Spans and tokens both come in order: one forward pointer.
        while k < len(spans) and spans[k][1] <= m.start():
            k += 1
        inside = k < len(spans) and spans[k][0] <= m.start() and m.end() <= spans[k][1]
        within.append(spans[k][2] if inside else None)
    beside = {p for (p, _, _), t in zip(raw, within) if p and t is None}

    def hidden(t: str | None) -> bool:
        return t is not None and (t not in facts.bare or bool(facts.free.get(t, set()) & beside))

    return [item for item, t in zip(raw, within) if not hidden(t)], raw


def _statement(facts: _Facts, number: int, line: str, masked: list, raw: list,
               named: set[str], stated: set[str]) -> str | None:
    """Rule 1: a line about one player and one power names their power."""
    players = {p for p, _, _ in masked if p}
    named.update(players)
    powers = {w for _, w, _ in masked if w}
    if len(players) == 1:
        (player,) = players
        expected = set(facts.assignment.get(player, ()))
        if len(powers) == 1 and not powers <= expected:
            return (f"line {number} ({_quote(line)}) gives {player} {_say(tuple(powers))}, "
                    f"but the record gives them {_say(facts.assignment.get(player, ()))}")
        if expected and powers == expected:
            stated.add(player)
        elif not expected and not powers and _NO_POWER.search(line):
            stated.add(player)
    # The players' own texts hide nothing that agrees: "dan  France" still
    # states dan's power if dan's ENTROPY line was "France".
    raw_players = {p for p, _, _ in raw if p}
    raw_powers = {w for _, w, _ in raw if w}
    if len(raw_players) == 1 and raw_powers and raw_powers == set(facts.assignment.get(next(iter(raw_players)), ())):
        stated.add(next(iter(raw_players)))
    return None


def _you(facts: _Facts, number: int, line: str, masked: list) -> str | None:
    """Rule 2: "you play X" gives the reader's power."""
    m = _YOU.search(line)
    if not m or not facts.reader:
        return None
    end = _SENTENCE_END.search(line, m.end())
    stop = end.start() if end else len(line)
    said = tuple(dict.fromkeys(w for _, w, at in masked if w and m.end() <= at < stop))
    expected = facts.assignment.get(facts.reader, ())
    if set(said) != set(expected):
        return (f"line {number} ({_quote(line)}) says you play {_say(said)}, but the record gives you "
                f"({facts.reader}) {_say(expected)}")
    return None


def _hex_difference(facts: _Facts, number: int, line: str) -> str | None:
    """Rule 3: the seed, the commitment and the secret are the record's."""
    hexes = list(_HEX64.finditer(line))
    if not hexes:
        return None
    labels = [(m.start(), _LABEL_KEY[m.group(1).lower()]) for m in _LABEL.finditer(line)]
    k, label = 0, None
    for h in hexes:
        while k < len(labels) and labels[k][0] < h.start():
            label = labels[k][1]
            k += 1
        value = h.group().lower()
        expected = facts.labelled.get(label, set()) if label else set()
        if expected and value not in expected:
            main = facts.hexes.get(label) or sorted(expected)[0]
            return (f"line {number} ({_quote(line)}) gives the {label} as {value}, but the record's {label} "
                    f"is {main}")
        if not expected and value not in facts.known_hex:
            return (f"line {number} ({_quote(line)}) shows {value}, which is none of the record's values "
                    f"(seed, commitment, secret)")
    return None


def _say(powers: tuple[str, ...] | list[str]) -> str:
    return " and ".join(powers) if powers else "no power"


def _quote(line: str) -> str:
    line = line.strip()
    return f'"{line[:_SHOWN]}..."' if len(line) > _SHOWN else f'"{line}"'
