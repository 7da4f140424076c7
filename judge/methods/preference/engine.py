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
from operator import mul
from typing import TYPE_CHECKING, Any, Mapping, Sequence

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


@dataclass
class Round:
    number: int
    random: dict[str, str] = field(default_factory=dict)
    shortcut: dict[str, str] = field(default_factory=dict)
    optimized: dict[str, str] = field(default_factory=dict)
    total: float = 0.0
    stddev: float = 0.0
    tied: int = 1
    exact: bool = True  # tied was counted; else it is an estimate within tied_bounds
    blocks: list[dict[str, Any]] = field(default_factory=list)
    shortcut_check: dict[str, Any] | None = None
    tied_bounds: tuple[int, int] = (1, 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.number, "random": self.random, "shortcut": self.shortcut,
            "optimized": self.optimized, "total": self.total, "stddev": self.stddev,
            "tied": self.tied, "exact": self.exact,
            **({} if self.exact else {"tied_low": self.tied_bounds[0], "tied_high": self.tied_bounds[1]}),
            "blocks": self.blocks, "shortcut_check": self.shortcut_check,
        }


@dataclass
class Outcome:
    assignment: dict[str, list[str]]  # player -> powers (one unless duplex)
    values: dict[str, float]  # player -> sum of the values of their powers
    total: float
    stddev: float
    tied: int
    exact: bool
    tied_bounds: tuple[int, int]  # the count's bounds (both tied when exact)
    unassigned: list[str]
    rounds: list[Round]
    draws: list[dict[str, Any]]


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
        _one_round(r, players, names, remaining, prefs, weights, params, stream, got, worth)
        rounds.append(r)
        if params.players is None:
            break  # not duplex: one power each
    total2, squares2 = _sums(worth)
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
    joined = bytearray(b"".join([p.kept_row if p.kept_for is key else values_row(p, powers) for p in prefs]))
    table = np.frombuffer(joined, dtype=np.int64).reshape(len(prefs), len(powers))
    # writable and aligned (a bytearray's buffer is): the only table type the kernels are compiled for
    return table if table.flags.aligned else table.copy()


def _value_matrix(prefs: Sequence[Preference], index: Mapping[str, int], N: int) -> np.ndarray:
    """The players' doubled values (_value_row's), one row each."""
    import numpy as np

    return np.array([_value_row(p, index, N) for p in prefs], dtype=np.int64)


def _one_round(r: Round, players: list[str], names: Sequence[str], remaining: list[int], prefs: list[Preference],
               weights: np.ndarray, params: Params, stream: DrawStream, got: list[list[str]],
               worth: list[int]) -> None:
    """One round (all of it unless duplex): steps 1-4 of the module
    docstring on the powers `remaining` (power-list order), which it
    reduces; each player's powers go to `got` (names), their doubled
    values to `worth`."""
    import numpy as np

    from judge.methods.preference.solver import assignment, linear_assignment, tight_graph

    doubled: list[int] = []  # this round's doubled values of the shortcut and the optimum
    # 1. Random powers: everybody in mode "random", "*" players in mode "both".
    if params.mode == "random":
        randoms = list(range(len(players)))
    else:
        randoms = [i for i, p in enumerate(prefs) if p.random] if params.mode == "both" else []
    for i, w in _random_powers(r.number, randoms, players, names, remaining, stream):
        r.random[players[i]] = names[w]
        got[i].append(names[w])
        worth[i] += weights.item(i, w)
    open_rows = [i for i in range(len(players)) if players[i] not in r.random] if r.random else \
        list(range(len(players)))
    if not remaining or not open_rows:
        return
    before = remaining[:]
    whole = len(open_rows) == weights.shape[0] and len(before) == weights.shape[1]
    open_weights = weights if whole else weights.take(open_rows, 0).take(before, 1)
    # 2. Uncontested first choices (the seed's shortcut), as (row, column) of
    # open_weights. The literal step (SET PREFERENCE SHORTCUT) gives them
    # before the optimum, which can cost total value; by default they only
    # break ties among the best assignments.
    kernel = linear_assignment._kernel(len(names))
    listed = [prefs[i].listed for i in open_rows]
    analysed = None  # the optimum's analysis, when the round's compiled call made it
    rest_optimum = None  # and the best of the rest after the literal step, when it was needed
    if kernel is not None and not params.shortcut:
        # One compiled call for steps 2-4's compiled parts (the uncontested
        # first choices, the optimum with them as the bonus table, the
        # shortcut's comparison): the same results as the calls one by one
        # below, without their glue (the bonus table, the comparison's
        # arrays and its solve from scratch: solver_kernel.preference_round).
        out = kernel.preference_round(open_weights, weights.shape[1] - 1 - np.array(listed, dtype=np.int64))
        uncontested = list(zip(out[0].tolist(), out[1].tolist()))
        analysed = tight_graph._kernel_analysis(*open_weights.shape, *out[2:11])
        if out[11]:
            tight_graph._kernel_status(out[12])
            rest_optimum = (int(out[13]), int(out[14]))
    else:
        uncontested = _uncontested(open_weights, listed, weights.shape[1], kernel)
    ks: list[int] = []  # the (row, column) pairs given this round, as the results list them
    js: list[int] = []
    firsts = dict(uncontested)
    if params.shortcut:
        ks += [k for k, _ in uncontested]
        js += [j for _, j in uncontested]
        rest = [k for k in range(len(open_rows)) if k not in firsts]
        given = set(firsts.values())
        columns = [j for j in range(len(before)) if j not in given]
    else:
        rest, columns = list(range(len(open_rows))), list(range(len(before)))
    # 3-4. The exact optimum of the rest, uniform among all co-optimal
    # assignments (by default, those giving the most uncontested first choices).
    if rest and columns and analysed is not None:  # (all open players and powers: not SHORTCUT)
        sol = assignment.solve(open_weights, stream, what="co-optimal", analysed=analysed)
    elif rest and columns:
        bonus = None
        if not params.shortcut and uncontested:
            bonus = np.zeros(open_weights.shape, dtype=np.int64)
            bonus[tuple(zip(*uncontested))] = 1
        table = open_weights if len(rest) == len(open_rows) and len(columns) == len(before) else \
            open_weights.take(rest, 0).take(columns, 1)
        sol = assignment.solve(table, stream, what="co-optimal", bonus=bonus)
    if rest and columns:
        solved = sol.assignment
        if None in solved:
            ks += [k for k, col in zip(rest, solved) if col is not None]
            js += [columns[col] for col in solved if col is not None]
        else:  # (by default `columns` are all the open powers, in order)
            ks += rest
            js += [columns[col] for col in solved] if params.shortcut else solved
        r.tied, r.exact, r.tied_bounds = sol.tied, sol.exact, (sol.tied_low, sol.tied_high)
        r.blocks = [{"players": [players[open_rows[rest[k]]] for k in b.rows],
                     "powers": [names[before[columns[j]]] for j in b.cols],
                     "count": b.count, "index": b.index, "exact": b.exact,
                     # a count too big to count is an estimate: its bounds go with it
                     **({} if b.exact else {"low": b.low, "high": b.high})} for b in sol.blocks]
    if ks:
        doubled = list(map(open_weights.item, ks, js))  # (no index arrays built from the lists)
        # (comprehensions rather than one loop over the pairs: fewer steps per player)
        who = [players[open_rows[k]] for k in ks]
        what = [names[before[j]] for j in js]
        if firsts:
            first = [firsts.get(k) == j for k, j in zip(ks, js)]
            r.shortcut.update([(pl, w) for pl, w, f in zip(who, what, first) if f])
            r.optimized.update([(pl, w) for pl, w, f in zip(who, what, first) if not f])
        else:
            r.optimized.update(zip(who, what))
        for k, w, v in zip(ks, what, doubled):
            i = open_rows[k]
            got[i].append(w)
            worth[i] += v
        taken = {before[j] for j in js}
        remaining[:] = [w for w in remaining if w not in taken]
    sums = _sums(doubled)
    r.total = sums[0] / 2
    # the values' standard deviation from the doubled sums: the same float
    # as from the values (halves of small integers add up exactly)
    r.stddev = _spread(*sums, len(doubled)) if doubled else 0.0
    if uncontested:
        if params.shortcut:
            r.shortcut_check = compare_without_shortcut(open_weights, doubled)
        elif all(players[open_rows[k]] in r.shortcut for k, _ in uncontested):
            # The optimum gave every uncontested first choice: the literal
            # step fixes those, and the best of the rest is the optimum's
            # own rest (else the optimum could be bettered), so both are
            # the same and need no second solve.
            r.shortcut_check = _comparison(sums, sums, len(doubled))
        else:
            r.shortcut_check = compare_with_shortcut(open_weights, [k for k, _ in uncontested],
                                                     [j for _, j in uncontested], doubled, rest_optimum, sums)


def _random_powers(number: int, randoms: list[int], players: list[str], names: Sequence[str], remaining: list[int],
                   stream: DrawStream) -> list[tuple[int, int]]:
    """Step 1: (player, power) drawn for the players `randoms`, taken out
    of `remaining`."""
    out = []
    if len(remaining) >= len(randoms):
        options = [names[w] for w in remaining]  # kept beside `remaining`, in its order
        for i in randoms:
            k = options.index(stream.choice(options, what="random-power", round=number, player=players[i]))
            del options[k]
            out.append((i, remaining.pop(k)))
    else:
        # Fewer powers than random players (a duplex game's last round): each
        # power draws its player, so who gets one is random too, not name order.
        waiting = list(randoms)
        for w in list(remaining):
            options = [players[i] for i in waiting]
            i = waiting[options.index(stream.choice(options, what="random-player", round=number,
                                                    power=names[w]))]
            waiting.remove(i)
            remaining.remove(w)
            out.append((i, w))
    return out


def _uncontested(weights: np.ndarray, listed: Sequence[int], N: int, kernel: Any = None) -> list[tuple[int, int]]:
    """first_choice_shortcut's pairs read from the doubled values of the
    open players (rows) on the powers left (columns), as (row, column) in
    row order: a player's first remaining group is the powers of the
    highest value left, if that value is a listed power's (a bracket's
    powers share one value, a later group's is lower, and unlisted powers
    are worth less than any listed one: N - listed - 1). With `kernel`
    (judge/methods/preference/solver/solver_kernel.py), its compiled
    `uncontested`: the same pairs (tests)."""
    import numpy as np

    floor = N - 1 - np.array(listed, dtype=np.int64)
    if kernel is not None:
        rows, cols = kernel.uncontested(weights, floor)
        return list(zip(rows.tolist(), cols.tolist()))
    top = weights.max(axis=1)
    first = weights == top[:, None]
    first &= (top > floor)[:, None]
    single = first.sum(axis=1) == 1
    if not single.any():
        return []
    col = first.argmax(axis=1)
    alone = first.sum(axis=0)[col] == 1
    return [(k, int(col[k])) for k in np.flatnonzero(single & alone).tolist()]


def first_choice_shortcut(players: Sequence[str], remaining: Sequence[str],
                          lists: Mapping[str, Preference]) -> dict[str, str]:
    """The seed's step: each player's first remaining group; a single power
    that is in nobody else's first remaining group goes to that player.

    Only what a player listed is a choice: a player whose list is empty or
    used up has no first choice, so takes nothing here and contests nothing
    (not minding which power one gets is no claim on any of them)."""
    left = set(remaining)
    first: dict[str, list[str]] = {}
    claims: dict[str, int] = {}  # how many first groups hold each power
    for pl in players:
        group: list[str] = []
        for g in lists[pl].groups:
            group = [w for w in g if w in left]
            if group:
                break
        first[pl] = group
        for w in group:
            claims[w] = claims.get(w, 0) + 1
    return {pl: group[0] for pl, group in first.items() if len(group) == 1 and claims[group[0]] == 1}


def _sums(doubled: Sequence[int]) -> tuple[int, int]:
    """(sum, sum of squares) of doubled values."""
    return sum(doubled), sum(map(mul, doubled, doubled))


def _comparison(with_: tuple[int, int], without: tuple[int, int], n: int) -> dict[str, Any]:
    """The shortcut_check of a round: (total, std-dev) with the seed's
    literal step and without it, from doubled (sum, sum of squares)."""
    return {"with": _figures(*with_, n), "without": _figures(*without, n), "differs": with_ != without}


def _figures(total2: int, squares2: int, n: int) -> dict[str, float]:
    """Total and standard deviation of n players from doubled sums."""
    return {"total": total2 / 2, "stddev": _spread(total2, squares2, n)}


def _spread(total2: int, squares2: int, n: int) -> float:
    """The standard deviation of n values from their doubled sum and sum of
    squares: the float that sum(x) / n and sum(x * x) / n of the values
    give, as the values are halves of integers far below 2**53 (their sums
    are exact)."""
    mean = total2 / 2 / n
    return math.sqrt(max(0.0, squares2 / 4 / n - mean * mean))


def compare_without_shortcut(weights: np.ndarray, doubled: Sequence[int]) -> dict[str, Any]:
    """Under SET PREFERENCE SHORTCUT: the round's (total, std-dev) with the
    literal step, and the optimum of the same players and powers without it.
    Both over the players who got a power this round (the same number either way)."""
    from judge.methods.preference.solver import assignment

    return _comparison(_sums(doubled), assignment.optimum(weights), len(doubled))


def compare_equal(doubled: Sequence[int]) -> dict[str, Any]:
    """The comparison's keys when the literal step gives the round's own result."""
    sums = _sums(doubled)
    return _comparison(sums, sums, len(doubled))


def compare_with_shortcut(weights: np.ndarray, rows: Sequence[int], cols: Sequence[int],
                          doubled: Sequence[int], rest_optimum: tuple[int, int] | None = None,
                          sums: tuple[int, int] | None = None) -> dict[str, Any]:
    """By default: what the seed's literal step would give (its uncontested
    first choices `rows` x `cols` first, the optimum of the rest), against the
    round's exact optimum. The same keys as compare_without_shortcut.
    `rest_optimum`: that optimum of the rest (assignment.optimum's), when
    the round's compiled call has made it already; `sums`: _sums(doubled)."""
    import numpy as np

    from judge.methods.preference.solver import assignment

    rows, cols = list(rows), list(cols)
    if rest_optimum is None:
        keep_rows = np.ones(weights.shape[0], dtype=bool)
        keep_rows[rows] = False
        keep_cols = np.ones(weights.shape[1], dtype=bool)
        keep_cols[cols] = False
        rest_optimum = assignment.optimum(weights, keep_rows, keep_cols)
    t2, s2 = rest_optimum
    total, squares = _sums(list(map(weights.item, rows, cols)))
    return _comparison((total + t2, squares + s2), sums or _sums(doubled), len(doubled))
