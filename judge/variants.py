"""Power lists: the standard seven and custom lists from the config or a file.

A power is named in a player's mail by its full name, its usual abbreviation
(the first three letters, when unique) or its letter, in any case.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Any, Iterable, Mapping


class PowerListError(ValueError):
    """A power list that cannot be used (duplicate names or letters...)."""


@dataclass(frozen=True)
class Power:
    name: str
    letter: str
    abbreviation: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "letter": self.letter}


@dataclass(frozen=True)
class PowerList:
    powers: tuple[Power, ...]

    def __len__(self) -> int:
        return len(self.powers)

    def __iter__(self):
        return iter(self.powers)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.powers]

    def lookup(self, token: str) -> Power | None:
        """The power a player meant by `token`, or None if it names none."""
        return self._by_key.get(" ".join(token.split()).casefold())

    def by_letter(self, ch: str) -> Power | None:
        """The power whose letter is `ch` (any case), or None."""
        return self._letters.get(ch.casefold())

    @cached_property
    def _by_key(self) -> dict[str, Power]:
        # Built once per list (the lists are cached per variant and game):
        # every bid and every word of a preference list is one dict look-up,
        # not a scan of the powers. The first power that a key names wins, as
        # the scan in power order did.
        keys: dict[str, Power] = {}
        for p in self.powers:
            for key in (p.name, p.abbreviation, p.letter):
                if key:
                    keys.setdefault(key.casefold(), p)
        return keys

    @cached_property
    def memo(self) -> dict[Any, Any]:
        """What readers of this list's words keep of their readings (the
        preference lists read, by text): each text is read once per variant.
        Bounded by its user."""
        return {}

    @cached_property
    def name_tuple(self) -> tuple[str, ...]:
        """names, built once."""
        return tuple(p.name for p in self.powers)

    @cached_property
    def numbers(self) -> dict[str, int]:
        """Each power's number (its place in the list), by name."""
        return {p.name: k for k, p in enumerate(self.powers)}

    @cached_property
    def names_only(self) -> frozenset[str]:
        """Every power's name and abbreviation, folded (not its letter)."""
        return frozenset(k.casefold() for p in self.powers for k in (p.name, p.abbreviation))

    @cached_property
    def full_names(self) -> frozenset[str]:
        """Every power's name, folded."""
        return frozenset(p.name.casefold() for p in self.powers)

    @cached_property
    def short_names(self) -> dict[str, str]:
        """Each power's letter, or its name where it has none."""
        return {p.name: p.letter or p.name for p in self.powers}

    @cached_property
    def _letters(self) -> dict[str, Power]:
        return {p.letter.casefold(): p for p in self.powers if p.letter}

    @property
    def lookup_folded(self) -> dict[str, Power]:
        """lookup() as a dict of folded keys, for a word folded already."""
        return self._by_key

    @property
    def letters(self) -> dict[str, Power]:
        """The powers by their letter, folded."""
        return self._letters

    @cached_property
    def multi_word(self) -> dict[str, tuple[tuple[tuple[str, ...], Power], ...]]:
        """The powers whose names have several words, by their first word
        (folded): (the name's other words, folded; the power), those of the
        most words first, so "Gulf of Lyon" is read before a power named
        "Gulf" could be."""
        out: dict[str, list[tuple[tuple[str, ...], Power]]] = {}
        for p in sorted((p for p in self.powers if " " in p.name), key=lambda p: -len(p.name.split())):
            first, *rest = (w.casefold() for w in p.name.split())
            out.setdefault(first, []).append((tuple(rest), p))
        return {k: tuple(v) for k, v in out.items()}

    def describe(self) -> str:
        return ", ".join(f"{p.name} ({p.letter})" if p.letter else p.name for p in self.powers)

    def as_json(self) -> list[dict[str, str]]:
        return [p.as_dict() for p in self.powers]


# The words that begin a command line (grammars/commands.lark, and a
# method's own: its Method's COMMAND_WORDS): a power name or abbreviation
# must not be one of them, or a bid on it would not parse.
COMMAND_WORDS = frozenset({"create", "signon", "signoff", "set", "start", "process", "eject", "replace",
                           "no", "nopref", "nopreference", "list", "help", "for", "entropy"})


@cache
def command_words() -> frozenset[str]:
    """The shell's COMMAND_WORDS and every method's."""
    from judge.methods.registry import METHODS

    return COMMAND_WORDS | {w for name in METHODS for w in METHODS[name].COMMAND_WORDS}

STANDARD_POWERS = ("Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey")


def make_power_list(entries: Iterable[Any]) -> PowerList:
    """Build a power list from names or {"name": ..., "letter": ...} objects.

    Letters default to the first letter of the name; abbreviations are the
    first three letters. Clashes are refused: a letter or abbreviation that
    could mean two powers would make bids ambiguous.
    """
    raw: list[tuple[str, str | None]] = []
    for e in entries:
        if isinstance(e, str):
            raw.append((e.strip(), None))
        elif isinstance(e, Mapping) and isinstance(e.get("name"), str):
            letter = e.get("letter")
            if letter is not None and not isinstance(letter, str):
                raise PowerListError(f"letter of {e['name']!r} must be text")
            raw.append((e["name"].strip(), letter.strip() if letter else None))
        else:
            raise PowerListError(f"a power must be a name or a {{name, letter}} object, got {e!r}")
    if not raw:
        raise PowerListError("the power list is empty")
    return _power_list(tuple(raw))


@lru_cache(maxsize=256)
def _power_list(raw: tuple[tuple[str, str | None], ...]) -> PowerList:
    # One PowerList per distinct list: its dictionaries (and the lists read
    # with it, PowerList.memo) are built once, whoever asks for the variant.
    names = [n for n, _ in raw]
    for n in names:
        if not n or any(ch in n for ch in ":=,;") or n[0].isdigit():
            raise PowerListError(f"unusable power name {n!r}")
        if n.split()[0].casefold() in command_words():
            # "Start 3" would read as the START command: the power could not be bid on by name.
            raise PowerListError(f"power name {n!r} begins with the command word {n.split()[0]!r}; rename it")
    folded = [n.casefold() for n in names]
    dup = {n for n in folded if folded.count(n) > 1}
    if dup:
        raise PowerListError(f"power named twice: {', '.join(sorted(dup))}")
    powers = []
    used_letters: dict[str, str] = {}
    explicit = {l.casefold() for _, l in raw if l}
    for name, letter in raw:
        if not letter:
            # Implicit letters are first letters; a power whose first letter is
            # already taken gets none and is named by name or abbreviation.
            first = name[0].upper()
            letter = "" if (first.casefold() in used_letters or first.casefold() in explicit) else first
            if not letter:
                powers.append((name, ""))
                continue
        elif " " in letter or letter[0].isdigit():
            raise PowerListError(f"unusable letter {letter!r} for {name}")
        if letter.casefold() in used_letters:
            raise PowerListError(
                f"letter {letter!r} given to both {used_letters[letter.casefold()]} and {name}; "
                "give each power its own letter"
            )
        used_letters[letter.casefold()] = name
        powers.append((name, letter.upper() if len(letter) == 1 else letter))
    abbrevs = [n[:3] for n, _ in powers]
    result = []
    for (name, letter), ab in zip(powers, abbrevs):
        # An abbreviation shared with another power, or equal to another
        # power's name or letter, would be ambiguous: fall back to the name.
        clash = [a for a in abbrevs if a.casefold() == ab.casefold()]
        others = {x.casefold() for n, l in powers if n != name for x in (n, l) if x}
        if len(clash) > 1 or ab.casefold() in others or len(name) <= 3 or ab.casefold() in command_words():
            ab = name
        result.append(Power(name, letter, ab))
    return PowerList(tuple(result))


# Void (Mario Huys, DPjudge): 36 players, each named for the space of their
# one starting unit, with the one-letter names the DPjudge publishes for
# SIGNON (http://www.floc.net/dpjudge/?page=about_void). Its twelve other
# powers have a digit or a sign there ("Piedmont: 0", "Yorkshire: *"),
# which cannot name a power in a bid or a preference list here ("*" asks
# for a random power): they are named by name (or unique abbreviation).
VOID_POWERS: tuple[dict[str, str] | str, ...] = (
    *({"name": name, "letter": letter} for name, letter in (
        ("Adriatic Sea", "A"), ("Aegean Sea", "B"), ("Albania", "C"), ("Apulia", "D"), ("Armenia", "E"),
        ("Baltic Sea", "F"), ("Barents Sea", "G"), ("Black Sea", "H"), ("Bohemia", "I"), ("Burgundy", "J"),
        ("Clyde", "K"), ("English Channel", "L"), ("Finland", "N"), ("Galicia", "P"), ("Gascony", "Q"),
        ("Gulf of Bothnia", "R"), ("Gulf of Lyon", "S"), ("Helgoland Bight", "T"), ("Ionian Sea", "U"),
        ("Livonia", "V"), ("Mid-Atlantic Ocean", "W"), ("North Sea", "X"), ("Norwegian Sea", "Y"),
        ("Picardy", "Z"))),
    "Piedmont", "Prussia", "Ruhr", "Silesia", "Skagerrak", "Tuscany", "Tyrolia", "Tyrrhenian Sea", "Ukraine",
    "Wales", "Western Mediterranean", "Yorkshire",
)

BUILTIN_VARIANTS: dict[str, tuple[Any, ...]] = {"standard": STANDARD_POWERS, "void": VOID_POWERS}


def _maps_dir():
    try:
        import diplomacy  # the DATC adjudicator ships the hobby's map files
    except ImportError:  # pragma: no cover - a dependency, but keep the judge usable without it
        return None
    from pathlib import Path

    return Path(diplomacy.__file__).resolve().parent / "maps"


def map_variants() -> list[str]:
    """The maps of the `diplomacy` package (standard, modern, world, ancmed, ...)."""
    folder = _maps_dir()
    return sorted(p.stem for p in folder.glob("*.map")) if folder else []


@cache
def _map_powers(name: str) -> tuple[dict[str, str], ...]:
    from diplomacy.engine.map import Map

    # use_cache=False: the package would otherwise compute convoy paths for
    # minutes; only the power list is wanted here.
    m = Map(name, use_cache=False)
    if m.error:
        raise PowerListError(f"variant {name!r}: {m.error[0]}")
    out = []
    for power in m.powers:
        shown = m.pow_name.get(power, power).replace("-", " ").replace("+", " ").title()
        entry = {"name": shown}
        if m.abbrev.get(power):
            entry["letter"] = m.abbrev[power]
        out.append(entry)
    return tuple(out)


def variant_powers(name: str, custom: Mapping[str, Iterable[Any]] | None = None) -> PowerList:
    """The power list of a named variant: a custom one from the config, a
    built-in one, or a map of the `diplomacy` package."""
    key = name.casefold()
    for source in (custom or {}), BUILTIN_VARIANTS:
        for vname, entries in source.items():
            if vname.casefold() == key:
                return make_power_list(entries)
    for vname in map_variants():
        if vname.casefold() == key:
            return make_power_list(_map_powers(vname))
    raise PowerListError(f"unknown variant {name!r}; known variants: {', '.join(known_variants(custom))}")


def is_variant(name: str, custom: Mapping[str, Iterable[Any]] | None = None) -> bool:
    key = name.casefold()
    return any(v.casefold() == key for v in known_variants(custom))


def known_variants(custom: Mapping[str, Iterable[Any]] | None = None) -> list[str]:
    return sorted(set(BUILTIN_VARIANTS) | set(custom or {}) | set(map_variants()))
