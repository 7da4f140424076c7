"""nJudge preference lists, solved exactly, with uniform tie-breaks.

Rules: ../shared/seeds/njudge-preferences.txt, made exact (docs/preference.md):

1. Players who asked for `*` (mode "both") and everybody in mode "random"
   get a uniformly random power first, in canonical player order.
2. Shortcut (on by default, as the seed asks): a player whose first remaining
   choice is a single power that no other player has in their first remaining
   group gets it. All such players at once, one pass.
3. The value of a power for a player is N - X (N the number of powers of the
   variant, X its position in the player's list); a bracket gets the average of
   the positions it covers; unlisted powers share the average of the
   remaining positions. Values are multiples of 1/2: we work with doubled
   integers.
4. The remaining players get the assignment of highest total value; among
   those, the lowest standard deviation; among those, one drawn uniformly
   among ALL of them (judge.methods.preference.solver).
5. Duplex games (fewer players than powers): rounds of 1-4 until every power
   is taken.

Pure: state + stream -> outcome. No I/O, no clock, no global randomness.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

# A round's steps and the records a resolution gives live beside, in
# rounds.py and outcome.py; the tests and the kernels' build know the
# seed's step and the values' reading of the first choices by this module.
from judge.methods.preference.outcome import Outcome, Round, _spread, _sums
from judge.methods.preference.rounds import _one_round, _uncontested, first_choice_shortcut  # noqa: F401
from judge.rng import DrawStream
from judge.syntax.forum import blank_markup_in_list
from judge.syntax.preference import Group, ListSyntaxError, Word, fast_tokens, parse_list
from judge.variants import PowerList

if TYPE_CHECKING:
    import numpy as np

# numpy and the solver (judge.methods.preference.solver) are imported by the
# functions that resolve: reading and checking a list (every SET PREFERENCE
# mail) needs neither, and their import is most of such a mail's start-up.

NAME = "preference"
MODES = ("list", "both", "random")  # nJudge's PRFLIST, PRFBOTH, PRFRAND


class ParamError(ValueError):
    """Parameters with which no assignment can be made."""


class PreferenceError(ValueError):
    """A list that cannot be used: the column (1-based, in the list) and why."""

    def __init__(self, column: int, message: str) -> None:
        self.column = column
        super().__init__(message)


@dataclass(frozen=True)
class Params:
    mode: str = "list"  # list | both | random
    # The seed's uncontested-first-choice step taken literally, before the
    # optimum (SET PREFERENCE SHORTCUT). Off by default: it can cost total
    # value, so uncontested first choices only break ties among the best.
    shortcut: bool = False
    players: int | None = None  # duplex: this many players share the powers

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "shortcut": self.shortcut, "players": self.players}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    raw = dict(raw or {})
    unknown = set(raw) - {"mode", "shortcut", "players"}
    if unknown:
        raise ParamError(f"unknown params: {', '.join(sorted(unknown))} (preference takes mode, shortcut, players)")
    mode = raw.get("mode", "list")
    if mode not in MODES:
        raise ParamError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    shortcut = raw.get("shortcut", False)
    if not isinstance(shortcut, bool):
        raise ParamError(f"shortcut must be true or false, not {shortcut!r}")
    players = raw.get("players")
    if players is not None and (not isinstance(players, int) or isinstance(players, bool)):
        raise ParamError(f"players must be a whole number, not {players!r}")
    params = Params(mode, shortcut, players)
    check_params(U, params)
    return params


def check_params(U: int, params: Params) -> list[str]:
    if params.players is not None and not 1 <= params.players <= U:
        raise ParamError(f"players must be between 1 and the {U} powers, not {params.players}")
    return []


def seats(U: int, params: Params) -> int:
    """How many players the game takes."""
    return params.players or U


@dataclass(frozen=True, slots=True)  # (slots: a resolution reads each list's row in one step)
class Preference:
    """A player's list: groups of equally preferred powers, best first."""

    groups: tuple[tuple[str, ...], ...] = ()
    random: bool = False  # "*"
    # (power, first + last position of its group) for every listed power, and
    # how many are listed: the values follow from these (see _value_row).
    ranks: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False, compare=False)
    listed: int = field(default=0, init=False, repr=False, compare=False)
    # The doubled values on the powers `kept_for` as int64 bytes: kept from
    # the first time the list is valued on a variant (read_preference does
    # it as it reads the list, issue 29), so that a resolution joins the rows
    # instead of looking up every listed power (values_row).
    kept_row: bytes = field(default=b"", init=False, repr=False, compare=False)
    kept_for: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ranks = []
        position = 1
        for group in self.groups:
            if len(group) == 1:
                ranks.append((group[0], 2 * position))
                position += 1
                continue
            last = position + len(group) - 1
            ranks.extend([(name, position + last) for name in group])
            position = last + 1
        object.__setattr__(self, "ranks", tuple(ranks))
        object.__setattr__(self, "listed", position - 1)

    @property
    def empty(self) -> bool:
        return not self.groups and not self.random

    def as_text(self, powers: PowerList) -> str:
        """The list written back in letters (names where a power has none)."""
        if self.random:
            return "*"
        short = powers.short_names
        parts = [[short[n] for n in g] for g in self.groups]
        if all(len(x) == 1 for g in parts for x in g):
            return "".join(g[0] if len(g) == 1 else "[" + "".join(g) + "]" for g in parts)
        return " ".join(g[0] if len(g) == 1 else "[" + " ".join(g) + "]" for g in parts)

    def as_json(self) -> dict[str, Any]:
        return {"random": self.random, "groups": [list(g) for g in self.groups]}


def read_preference(text: str, powers: PowerList, column: int = 1) -> Preference:
    """The list a player wrote; PreferenceError names the column at fault.

    `column` is where the list starts in the player's line (1 when the text
    is the whole line): every column the errors give counts in that line."""
    # Each list is read once per variant (issue 29): the daemon reads it at
    # SET PREFERENCE, then again from the same text when the game is
    # resolved, and every SIGNON shows it. A refusal is not kept: it is
    # read again, and says again where.
    memo = powers.memo
    key = (text, column)
    known = memo.get(key)
    if known is not None:
        return known
    pref = _read_fast(text, powers) or read_preference_carefully(text, powers, column)
    values_row(pref, powers)  # valued once, as it is read: a resolution only joins the rows
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = pref
    return pref


_MEMO_SIZE = 10_000  # lists per variant; then the memo starts again


def read_preference_carefully(text: str, powers: PowerList, column: int = 1) -> Preference:
    """read_preference word by word, with each word's column: what says
    where a list is wrong (and the reading _read_fast is checked against)."""
    shift = column - 1
    try:
        raw = parse_list(text, shift)
    except ListSyntaxError as err:
        raise PreferenceError(err.column, str(err)) from err
    if raw.random:
        return Preference(random=True)
    seen: dict[str, int] = {}
    groups: list[tuple[str, ...]] = []
    items = raw.items
    as_names = _separate_names(text, items, powers, shift)
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Group):
            names = _words_to_powers(item, powers, seen, as_names)
            if names:
                groups.append(tuple(names))
            i += 1
            continue
        # A run of plain words: multi-word names may span several of them.
        start = i
        while i < len(items) and not isinstance(items[i], Group):
            i += 1
        groups.extend((n,) for n in _words_to_powers(items[start:i], powers, seen, as_names))
    return Preference(tuple(groups))


_SEPARATORS = frozenset(" \t,;>/")


_SPECIAL = re.compile(r"[\[\]()*\d]")  # what makes a list more than a row of words


def _read_fast(text: str, powers: PowerList) -> Preference | None:
    """The list read as read_preference reads it, from the words alone
    (without the columns, which only a refusal needs): the reading of every
    list read_preference takes, in a third of the time; None where it
    refuses the list, or would have to weigh what stands between two words
    (read_preference then reads it again, and says where and why).
    tests/test_preference_reader.py checks that both agree."""
    if "[" in text:
        text = blank_markup_in_list(text)
    folded_text = text.casefold()
    if len(folded_text) != len(text):
        return None  # a letter that folds to two ("ß"): read one by one
    tokens = fast_tokens(folded_text)
    if tokens is None:
        return None
    if tokens == ["*"]:
        return Preference(random=True)
    # Runs of plain words and groups, as read_preference sees them: a rank
    # only numbers the item after it (checked here), a run goes on past it.
    items: list[list[str] | tuple[str, ...]] = []
    run: list[str] | None = None
    group: list[str] | None = None
    closer = ""
    last_rank, pending = 0, False
    if _SPECIAL.search(folded_text) is None:
        tokens, items = [], [tokens]  # words only, the commonest list: one run
    for tok in tokens:
        c = tok[0]
        if group is not None:
            if c == closer and len(tok) == 1:
                items.append(tuple(group))
                group, run = None, None
            elif c in "[]()*" or c.isdigit():
                return None
            else:
                group.append(tok)
            continue
        if c in "[(" and len(tok) == 1:
            group, closer, pending = [], "]" if c == "[" else ")", False
        elif c.isdigit():
            value = int(tok.rstrip(".):"))
            if pending or value <= last_rank:
                return None
            last_rank, pending = value, True
        elif c in "])*":
            return None
        else:
            pending = False
            if run is None:
                run = []
                items.append(run)
            run.append(tok)
    if group is not None or pending:
        return None
    folded_words = [w for item in items for w in item]
    names_only, full_names = powers.names_only, powers.full_names
    multi, lookup, letters = powers.multi_word, powers.lookup_folded, powers.letters
    as_names = len(folded_words) >= 2 and names_only.issuperset(folded_words)
    if as_names and len(items) > 1 and not full_names.issuperset(folded_words):
        return None  # names with brackets: read_preference weighs what stands between them
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for item in items:
        out: list[str] = []
        folded = item
        k, n = 0, len(folded)
        if multi.keys().isdisjoint(folded):
            # No word begins a name of several words: each word is a power
            # (a name, or an abbreviation read as one), or the loop below reads it.
            found = list(map(lookup.get, folded))
            if None not in found and (as_names or full_names.issuperset(folded)):
                out, k = [p.name for p in found], n
        while k < n:
            f = folded[k]
            if f in multi:
                hit = None
                for rest, p in multi[f]:
                    if tuple(folded[k + 1:k + 1 + len(rest)]) == rest:
                        hit = p
                        break
                if hit is not None:
                    out.append(hit.name)
                    k += 1 + len(rest)
                    continue
            p = lookup.get(f)
            if p is not None and (as_names or f in full_names):
                out.append(p.name)
            else:
                run_of = [letters.get(ch) for ch in f]
                if None in run_of:
                    if p is None:
                        return None
                    out.append(p.name)  # an abbreviation that is no run of letters
                else:
                    out.extend([q.name for q in run_of])
            k += 1
        if len(seen) + len(out) != len(seen.union(out)) or len(set(out)) != len(out):
            return None
        seen.update(out)
        if isinstance(item, tuple):
            if out:
                groups.append(tuple(out))
        else:
            groups.extend([(name,) for name in out])
    return Preference(tuple(groups))


def _separate_names(text: str, items, powers: PowerList, shift: int = 0) -> bool:
    """Are the words names? Yes when there are several, each is a power's
    name or abbreviation (not a lone letter), and each is set apart from the
    next by a space, comma, ';', '>' or '/' (not by a bracket alone):
    "Fra Ger Eng" is France, Germany, England. Otherwise letters run
    together are letters, as nJudge reads them: "FRA" and "E[FRA]" are
    France, Russia, Austria."""
    words = [w for item in items for w in (item if isinstance(item, Group) else (item,))]
    if len(words) < 2:
        return False
    names = powers.names_only
    for w in words:
        if w.text.casefold() not in names:
            return False  # a letter, or no power at all: read as today
    if not any(isinstance(item, Group) for item in items):
        return True  # nothing but separators stands between two words
    for a, b in zip(words, words[1:]):
        between = text[a.column - shift - 1 + len(a.text):b.column - shift - 1]
        if not _SEPARATORS.intersection(between):
            return False
    return True


def _words_to_powers(words: Sequence[Word], powers: PowerList, seen: dict[str, int],
                     as_names: bool = False) -> list[str]:
    out: list[str] = []
    k = 0
    multi = powers.multi_word
    lookup, by_letter = powers.lookup, powers.by_letter
    while k < len(words):
        w = words[k]
        folded = w.text.casefold()
        if folded in multi:
            matched = None
            for rest, p in multi[folded]:  # "North Africa" written as two words
                n = len(rest) + 1
                if k + n <= len(words) and all(x.text.casefold() == y for x, y in zip(words[k + 1:k + n], rest)):
                    matched, k = p.name, k + n
                    break
            if matched:
                _take(matched, w.column, w.text, seen, out)
                continue
        whole = lookup(folded)
        # nJudge players run letters together ("[FRA]" is France, Russia,
        # Austria): a word made only of power letters is read as letters,
        # even where it spells an abbreviation, unless the list is a row of
        # separate names (_separate_names); the reply shows the reading.
        if whole is not None and (as_names or whole.name.casefold() == folded
                                  or not all(by_letter(ch) for ch in w.text)):
            _take(whole.name, w.column, w.text, seen, out)
        else:
            # Letters run together, as nJudge players write them: "FRIGATE".
            for offset, ch in enumerate(w.text):
                p = by_letter(ch)
                if p is None:
                    raise PreferenceError(
                        w.column + offset,
                        f"'{ch}' is not a power's letter (in '{w.text}'); the powers are {powers.describe()}",
                    )
                _take(p.name, w.column + offset, ch, seen, out)
        k += 1
    return out


def _take(name: str, column: int, written: str, seen: dict[str, int], out: list[str]) -> None:
    if name in seen:
        raise PreferenceError(column, f"'{written}' ({name}) is listed twice (first at column {seen[name]})")
    seen[name] = column
    out.append(name)


def doubled_values(pref: Preference, powers: PowerList) -> dict[str, int]:
    """2 x value of every power for this player (exact integers)."""
    row = _value_row(pref, {p.name: k for k, p in enumerate(powers)}, len(powers))
    return dict(zip((p.name for p in powers), row))


def values_row(pref: Preference, powers: PowerList) -> bytes:
    """The list's doubled values on `powers` (_value_row's) as int64 bytes,
    worked out once per list and variant and kept with the list."""
    kept = pref.kept_for
    if kept is not None and (kept is powers.powers or kept == powers.powers):
        return pref.kept_row
    row = array("q", _value_row(pref, powers.numbers, len(powers))).tobytes()
    object.__setattr__(pref, "kept_row", row)
    object.__setattr__(pref, "kept_for", powers.powers)
    return row


def _value_row(pref: Preference, index: Mapping[str, int], N: int) -> list[int]:
    """The doubled values of one player, in power-list order. A power at
    positions first..last (a bracket) is worth 2N - (first + last)."""
    # Unlisted powers share positions listed+1 .. N.
    row = [N - pref.listed - 1] * N
    twice = 2 * N
    for name, first_plus_last in pref.ranks:
        row[index[name]] = twice - first_plus_last
    return row


def player_order(players: Sequence[str]) -> list[str]:
    """By name, case-insensitively, then as written: sorted by (casefold,
    name), as two stable sorts without a key tuple per player."""
    return sorted(sorted(players), key=str.casefold)


def resolve(powers: PowerList, params: Params, lists: Mapping[str, Preference], stream: DrawStream) -> Outcome:
    """Assign the powers. `lists` holds every player's list (empty: don't care)."""
    players = player_order(list(lists))
    if not players:
        raise ParamError("no players")
    if params.players is None and len(players) > len(powers):
        raise ParamError(f"{len(players)} players for {len(powers)} powers")
    names = powers.name_tuple
    prefs = [lists[pl] for pl in players]
    weights = _value_table(prefs, powers)
    remaining = list(range(len(names)))  # power indices, in power-list order
    got: list[list[str]] = [[] for _ in players]  # the powers' names
    worth = [0] * len(players)  # doubled values of what each player got
    rounds: list[Round] = []
    while remaining:
        r = Round(len(rounds) + 1)
        sums = _one_round(r, players, names, remaining, prefs, weights, params, stream, got, worth)
        rounds.append(r)
        if params.players is None:
            break  # not duplex: one power each
    # One round gives each player one value: the round's sums are worth's.
    total2, squares2 = sums if len(rounds) == 1 else _sums(worth)
    if len(rounds) == 1:  # (all but duplex games)
        tied, exact, bounds = rounds[0].tied, rounds[0].exact, rounds[0].tied_bounds
    else:
        tied, exact = math.prod(r.tied for r in rounds), all(r.exact for r in rounds)
        bounds = (math.prod(r.tied_bounds[0] for r in rounds), math.prod(r.tied_bounds[1] for r in rounds))
    return Outcome(
        assignment=dict(zip(players, got)),
        values={pl: v / 2 for pl, v in zip(players, worth)},
        total=total2 / 2,  # (the sum of the values: halves of small integers add up exactly)
        stddev=_spread(total2, squares2, len(players)),
        tied=tied,
        exact=exact,
        tied_bounds=bounds,
        unassigned=[names[w] for w in remaining],
        rounds=rounds,
        draws=stream.records(),
    )


def _value_table(prefs: Sequence[Preference], powers: PowerList) -> np.ndarray:
    """_value_matrix's table from the rows the lists keep (values_row): one
    join, where looking up every listed power took a fifth of a resolution
    at 36 powers (issue 29)."""
    import numpy as np

    key = powers.powers
    # (a bytearray's join: the rows joined into a writable buffer in one copy)
    joined = bytearray().join([p.kept_row if p.kept_for is key else values_row(p, powers) for p in prefs])
    table = np.frombuffer(joined, dtype=np.int64).reshape(len(prefs), len(powers))
    # writable and aligned (a bytearray's buffer is): the only table type the kernels are compiled for
    return table if table.flags.aligned else table.copy()


def _value_matrix(prefs: Sequence[Preference], index: Mapping[str, int], N: int) -> np.ndarray:
    """The players' doubled values (_value_row's), one row each."""
    import numpy as np

    return np.array([_value_row(p, index, N) for p in prefs], dtype=np.int64)
