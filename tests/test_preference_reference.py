"""An independent brute-force reference for the WHOLE preference method.

Written from docs/preference.md alone (no code of judge.methods.preference is
reused; judge.variants only builds the power lists). The cases are group
structures generated here and written out as texts the way players mail them;
`run_resolution` reads them, resolves with a seed, and its record is checked
step by step against the rules:

1. random powers: the right players (everybody in mode "random", the `*`
   players in mode "both"), in case-insensitive name order, each drawn among
   the powers left in the variant's order (the draws themselves are taken as
   given);
2. the shortcut: each remaining player's first remaining group (the first
   group with an available power, those powers only); a single power in nobody
   else's first remaining group is taken; empty or used-up lists neither take
   nor contest;
3. values N - X with averages for brackets and for the unlisted powers, as
   exact Fractions;
4. the optimized part has the brute-force optimum (total, then sum of squares)
   over every injective assignment of the remaining players and powers, and
   `tied` is the brute-force number of co-optimal assignments;
5. duplex games: rounds of 1-4 until every power is taken.

Also: uniformity of the draw among co-optimal assignments (chi-square over
fixed seeds), the shortcut's report when it changes the optimum, and the
offline resolver's command line.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.stats import chisquare

from judge.resolution import run_resolution
from judge.variants import STANDARD_POWERS, make_power_list

JUDGE = str(Path(sys.executable).with_name("judge"))

CUSTOM_POOL = ["Austria", "Britain", "China", "Denmark", "Egypt", "France", "Greece", "Holland"]
# Mixed case on purpose; "ann" and "Ann" differ only in case.
PLAYER_POOL = ["ann", "Bob", "carl", "Dora", "eve", "Fay", "gus", "Hal", "Ann", "ivy"]


# --------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------

def canonical(players) -> list[str]:
    """Case-insensitive name order (ties between names differing only in case
    broken by the plain string order)."""
    return sorted(players, key=lambda s: (s.casefold(), s))


def ref_values(groups, powers: list[str]) -> dict[str, Fraction]:
    """Value N - X of every power; a bracket or the unlisted rest gets the
    average of the positions it covers."""
    N = len(powers)
    out: dict[str, Fraction] = {}
    position = 1
    for g in groups:
        covered = range(position, position + len(g))
        avg = Fraction(sum(covered), len(covered))
        for w in g:
            out[w] = N - avg
        position += len(g)
    rest = [w for w in powers if w not in out]
    if rest:
        covered = range(position, N + 1)
        assert len(covered) == len(rest)
        avg = Fraction(sum(covered), len(covered))
        for w in rest:
            out[w] = N - avg
    return out


def ref_shortcut(players, available, groups_of) -> dict[str, str]:
    """The uncontested-first-choice step, straight from docs/preference.md."""
    first: dict[str, frozenset] = {}
    for pl in players:
        first[pl] = frozenset()
        for g in groups_of[pl]:
            still = frozenset(w for w in g if w in available)
            if still:
                first[pl] = still
                break
    out = {}
    for pl in players:
        if len(first[pl]) == 1:
            (w,) = first[pl]
            if all(w not in first[q] for q in players if q != pl):
                out[pl] = w
    return out


@cache
def _injections(a: int, b: int) -> np.ndarray:
    """Every injective map of b items into range(a): shape (count, b)."""
    return np.array(list(itertools.permutations(range(a), b)), dtype=np.intp).reshape(-1, b)


def doubled(v: Fraction) -> int:
    d = 2 * v
    assert d.denominator == 1, f"value {v} is not a multiple of 1/2"
    return int(d)


def brute(players: list[str], powers: list[str], value) -> tuple[int, int, list[frozenset]]:
    """Over every assignment (each player a different power when there are no
    more players than powers, else each power a different player; the others
    get nothing and score 0): (best doubled total, lowest doubled sum of
    squares among those, the co-optimal assignments as sets of pairs)."""
    p, q = len(players), len(powers)
    if p == 0 or q == 0:
        return 0, 0, [frozenset()]
    w = np.array([[doubled(value[pl][x]) for x in powers] for pl in players], dtype=np.int64)
    if p <= q:
        perms = _injections(q, p)  # perms[:, i] = power of player i
        vals = w[np.arange(p)[None, :], perms]
    else:
        perms = _injections(p, q)  # perms[:, j] = player of power j
        vals = w[perms, np.arange(q)[None, :]]
    tot = vals.sum(axis=1)
    sq = (vals * vals).sum(axis=1)
    best = tot.max()
    best_sq = sq[tot == best].min()
    rows = np.nonzero((tot == best) & (sq == best_sq))[0]
    if p <= q:
        co = [frozenset((players[i], powers[perms[k, i]]) for i in range(p)) for k in rows]
    else:
        co = [frozenset((players[perms[k, j]], powers[j]) for j in range(q)) for k in rows]
    assert len(set(co)) == len(co)
    return int(best), int(best_sq), co


def stats(vals: list[Fraction], n: int | None = None) -> tuple[Fraction, float]:
    """Total and population standard deviation (n players; missing ones score 0)."""
    n = len(vals) if n is None else n
    if n == 0:
        return Fraction(0), 0.0
    total = sum(vals, Fraction(0))
    var = sum((v * v for v in vals), Fraction(0)) / n - (total / n) ** 2
    assert var >= 0
    return total, math.sqrt(var)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9


# --------------------------------------------------------------------------
# Cases: group structures, and their texts as players write them
# --------------------------------------------------------------------------

@dataclass
class Case:
    powers: list[str]
    mode: str = "list"
    shortcut: bool = True
    players: int | None = None  # duplex
    texts: dict[str, str] = field(default_factory=dict)
    groups: dict[str, tuple] = field(default_factory=dict)  # what each player meant (effective list)
    star: dict[str, bool] = field(default_factory=dict)  # "*" accepted
    rejected: set[str] = field(default_factory=set)

    def data(self) -> dict:
        return {"method": "preference", "powers": self.powers,
                "params": {"mode": self.mode, "shortcut": self.shortcut, "players": self.players},
                "submissions": dict(self.texts)}

    def describe(self) -> str:
        return json.dumps(self.data())


def add_player(case: Case, name: str, text: str, groups=(), star=False, rejected=False) -> None:
    case.texts[name] = text
    case.groups[name] = tuple(tuple(g) for g in groups)
    case.star[name] = star
    if rejected:
        case.rejected.add(name)


def render(rnd: random.Random, groups, plist) -> str:
    """A list as a player might write it: letters run together, names or
    abbreviations, brackets [] or (), random case, separators."""
    meta = {p.name: p for p in plist}
    # Letters run together are read as letters even where they spell an
    # abbreviation ("FRA": France, Russia, Austria); only a full name wins.
    spelled = {p.name.casefold() for p in plist}
    letters_of = {p.letter.casefold() for p in plist if p.letter}
    all_letters = all(p.letter for p in plist)
    style = rnd.choice(["letters", "letters", "names", "abbr", "mixed"]) if all_letters else rnd.choice(
        ["names", "abbr", "mixed"])
    opening, closing = rnd.choice([("[", "]"), ("(", ")")])

    def case_of(s: str) -> str:
        return rnd.choice([s, s.lower(), s.upper()])

    if style == "letters":
        def word(names):  # a run of letters, spaced where it would spell a name
            letters = [meta[n].letter for n in names]
            joined = "".join(letters)
            return case_of(" ".join(letters) if len(letters) > 1 and joined.casefold() in spelled else joined)

        out, run = [], []
        for g in groups:
            if len(g) == 1 and rnd.random() < 0.85:
                run.append(g[0])
                continue
            if run:
                out.append(word(run))
                run = []
            out.append(opening + word(g) + closing)
        if run:
            out.append(word(run))
        sep = rnd.choice(["", "", " "])
        return sep.join(out)

    def token(n: str) -> str:
        kind = {"names": "name", "abbr": "abbr"}.get(style) or rnd.choice(["name", "abbr", "letter"])
        if kind == "letter" and meta[n].letter:
            return case_of(meta[n].letter)
        if kind == "abbr" and not all(ch.casefold() in letters_of for ch in meta[n].abbreviation):
            return case_of(meta[n].abbreviation)
        return case_of(n)

    sep = rnd.choice([", ", " ", " > ", ","])
    inner = rnd.choice([" ", ", "])
    parts = []
    for g in groups:
        if len(g) == 1 and rnd.random() < 0.9:
            parts.append(token(g[0]))
        else:
            parts.append(opening + inner.join(token(n) for n in g) + closing)
    return sep.join(parts)


def random_groups(rnd: random.Random, powers: list[str], popularity: dict[str, float], noise: float,
                  partial: bool) -> tuple:
    order = sorted(powers, key=lambda w: popularity[w] + rnd.gauss(0.0, noise))
    listed = rnd.randint(1, len(order)) if partial else len(order)
    order = order[:listed]
    groups, i = [], 0
    bracket_rate = rnd.choice([0.0, 0.15, 0.4])
    while i < len(order):
        size = 1
        if rnd.random() < bracket_rate:
            size = rnd.randint(2, 4)
        groups.append(tuple(order[i:i + size]))
        i += size
    return tuple(groups)


def random_case(rnd: random.Random) -> Case:
    N = rnd.choice([2, 3, 4, 5, 6, 7, 7, 7, 8, 8])
    if N == 7 and rnd.random() < 0.7:
        names = list(STANDARD_POWERS)
    else:
        names = sorted(rnd.sample(CUSTOM_POOL, N))
    plist = make_power_list(names)
    mode = rnd.choices(["list", "both", "random"], [0.45, 0.4, 0.15])[0]
    case = Case(names, mode, rnd.random() < 0.6)
    u = rnd.random()
    if u < 0.15 and N >= 2:  # duplex
        case.players = rnd.randint(1, N - 1)
        k = case.players if rnd.random() < 0.85 else rnd.randint(1, case.players)
    elif u < 0.35:  # fewer players than powers
        k = rnd.randint(1, N)
    else:
        k = N
    k = min(k, len(PLAYER_POOL))
    popularity = {w: rnd.gauss(0.0, 1.0) for w in names}
    noise = rnd.choice([0.2, 0.7, 2.0, 10.0])
    empty_rate = rnd.choice([0.0, 0.1, 0.4])
    star_rate = rnd.choice([0.0, 0.15, 0.4])
    for name in rnd.sample(PLAYER_POOL, k):
        prefix = rnd.choices(["", "SET PREFERENCE ", "set pref ", "Set Preferences "], [0.7, 0.15, 0.1, 0.05])[0]
        u = rnd.random()
        if u < star_rate:
            text = prefix + "*"
            if mode == "list":  # refused: counts as no list
                add_player(case, name, text, rejected=True)
            else:
                add_player(case, name, text, star=True)
        elif u < star_rate + empty_rate:
            add_player(case, name, prefix.rstrip() if prefix and rnd.random() < 0.5 else prefix)
        else:
            groups = random_groups(rnd, names, popularity, noise, partial=rnd.random() < 0.4)
            text = render(rnd, groups, plist)
            if rnd.random() < 0.03:  # a power twice: refused, counts as no list
                again = rnd.choice([x for g in groups for x in g])
                add_player(case, name, prefix + text + " " + again, rejected=True)
            else:
                add_player(case, name, prefix + text, groups)
    return case


# --------------------------------------------------------------------------
# Checking a record against the reference
# --------------------------------------------------------------------------

def check_record(case: Case, rec: dict) -> dict:
    """Every claim of the record against the reference; returns facts for the caller."""
    powers = case.powers
    N = len(powers)
    players = canonical(case.texts)
    value = {pl: ref_values(case.groups[pl], powers) for pl in players}
    duplex = case.players is not None

    assert rec["method"] == "preference"
    assert rec["params"] == {"mode": case.mode, "shortcut": case.shortcut, "players": case.players}
    assert set(rec["rejected"]) == case.rejected
    for pl, why in rec["rejected"].items():
        assert why.startswith("column "), why
    for pl in players:
        got = rec["preferences"][pl]
        assert [tuple(g) for g in got["groups"]] == list(case.groups[pl]), (pl, got)
        assert got["random"] == case.star[pl]

    eligible = [pl for pl in players if case.mode == "random" or (case.mode == "both" and case.star[pl])]
    avail = list(powers)  # variant order
    got: dict[str, list[str]] = {pl: [] for pl in players}
    draws = rec["draws"]
    di = 0
    tied = 1
    facts = {"differs": [], "shortcut": []}
    expected_rounds = math.ceil(N / len(players)) if duplex else 1
    assert len(rec["rounds"]) == expected_rounds
    for number, r in enumerate(rec["rounds"], start=1):
        assert r["round"] == number
        # 1. random powers: each eligible player draws a power; where fewer
        # powers than eligible players are left, each power draws its player.
        if len(avail) >= len(eligible):
            assert list(r["random"]) == eligible, (r["random"], eligible)
            for pl in eligible:
                w = r["random"][pl]
                assert w in avail
                if len(avail) > 1:
                    d = draws[di]
                    di += 1
                    assert d["what"] == "random-power" and d["options"] == avail, d
                    assert d["options"][d["index"]] == d["chosen"] == w
                    assert d["context"] == {"round": number, "player": pl}
                avail.remove(w)
                got[pl].append(w)
        else:
            waiting = list(eligible)
            by_power = {w: pl for pl, w in r["random"].items()}
            assert sorted(by_power) == sorted(avail)
            for w in list(avail):
                pl = by_power[w]
                assert pl in waiting
                if len(waiting) > 1:
                    d = draws[di]
                    di += 1
                    assert d["what"] == "random-player" and d["options"] == waiting, d
                    assert d["options"][d["index"]] == d["chosen"] == pl
                    assert d["context"] == {"round": number, "power": w}
                waiting.remove(pl)
                avail.remove(w)
                got[pl].append(w)
        open_players = [pl for pl in players if pl not in r["random"]]
        before = list(avail)
        if not avail or not open_players:
            assert r["shortcut"] == {} and r["optimized"] == {} and r["tied"] == 1 and r["blocks"] == []
            assert r["shortcut_check"] is None
            continue
        # 2. the uncontested first choices: given first under the shortcut,
        # else a tie-break among the best assignments
        uncontested = ref_shortcut(open_players, set(avail), case.groups)
        expected = uncontested if case.shortcut else {}
        for pl, w in expected.items():
            avail.remove(w)
            got[pl].append(w)
        # 3-4. the optimum of the rest (by default: of every open player)
        rest = [pl for pl in open_players if pl not in expected]
        given = {pl: w for pl, w in {**r["shortcut"], **r["optimized"]}.items() if pl in rest}
        if case.shortcut:
            assert r["shortcut"] == expected, (r["shortcut"], expected)
            opt = r["optimized"]
        else:
            opt = given
            assert r["shortcut"] == {pl: w for pl, w in given.items() if uncontested.get(pl) == w}
            assert set(r["optimized"]).isdisjoint(r["shortcut"])
        assert list(r["optimized"]) == [pl for pl in rest if pl in r["optimized"]]  # canonical order
        assert len(set(opt.values())) == len(opt) and set(opt.values()) <= set(avail)
        assert len(opt) == min(len(rest), len(avail))
        best, best_sq, co = brute(rest, avail, value)
        if not case.shortcut:  # the most uncontested first choices among the best
            firsts = {c: len(c & frozenset(uncontested.items())) for c in co}
            most = max(firsts.values())  # once: inside the filter it made 8! ties cost 8!^2
            co = [c for c in co if firsts[c] == most]
        facts["shortcut"].append(dict(r["shortcut"]))
        vals = [doubled(value[pl][w]) for pl, w in opt.items()]
        assert (sum(vals), sum(v * v for v in vals)) == (best, best_sq), (opt, best, best_sq)
        assert frozenset(opt.items()) in co
        assert r["tied"] == len(co)
        assert r["exact"] is True
        assert math.prod(b["count"] for b in r["blocks"]) == len(co)
        for b in r["blocks"]:
            assert b["count"] > 1 and b["exact"] is True and 0 <= b["index"] < b["count"]
            assert set(b["players"]) <= set(rest) and set(b["powers"]) <= set(avail)
            d = draws[di]
            di += 1
            assert d["what"] == "co-optimal" and d["index"] == b["index"] and d["context"]["count"] == b["count"]
        for pl, w in opt.items():
            avail.remove(w)
            got[pl].append(w)
        # the round's figures: the players of the shortcut and of the optimum
        round_vals = [value[pl][w] for pl, w in {**expected, **opt}.items()]
        total, sd = stats(round_vals)
        assert r["total"] == float(total) and close(r["stddev"], sd), (r["total"], total, r["stddev"], sd)
        # the shortcut's check: the seed's literal step against the optimum
        # of the same players and powers without it, whenever it takes a power
        if uncontested:
            # Over the players who got a power this round (the same number
            # with the shortcut and without it).
            n = min(len(open_players), len(before))
            rest_lit = [pl for pl in open_players if pl not in uncontested]
            left_lit = [w for w in before if w not in uncontested.values()]
            lt, ls, _ = brute(rest_lit, left_lit, value)
            lit_vals = [doubled(value[pl][w]) for pl, w in uncontested.items()]
            wt2, wsq2 = sum(lit_vals) + lt, sum(v * v for v in lit_vals) + ls
            b_total, b_sq, _ = brute(open_players, before, value)
            assert wt2 <= b_total
            differs = (wt2, wsq2) != (b_total, b_sq)
            check = r["shortcut_check"]
            assert check["differs"] == differs
            w_sd = math.sqrt(max(0.0, float(Fraction(wsq2, 4 * n) - Fraction(wt2, 2 * n) ** 2)))
            assert check["with"]["total"] == wt2 / 2 and close(check["with"]["stddev"], w_sd)
            without_sd = math.sqrt(max(0.0, float(Fraction(b_sq, 4 * n) - Fraction(b_total, 2 * n) ** 2)))
            assert check["without"]["total"] == b_total / 2 and close(check["without"]["stddev"], without_sd)
            # the round itself has the literal step's figures under the
            # shortcut, the optimum's otherwise
            mine = check["with"] if case.shortcut else check["without"]
            assert mine["total"] == r["total"] and close(mine["stddev"], r["stddev"])
            facts["differs"].append(differs)
        else:
            assert r["shortcut_check"] is None
        tied *= len(co)
    assert di == len(draws), "draws the rules do not call for"

    # the outcome
    taken = [w for pl in players for w in got[pl]]
    assert len(taken) == len(set(taken))
    if duplex:
        assert sorted(taken) == sorted(powers)
        assert rec["assignment"] == got
    else:
        assert rec["assignment"] == {pl: (ws[0] if ws else None) for pl, ws in got.items()}
        assert all(len(ws) == 1 for ws in got.values())
    assert rec["unassigned"] == [w for w in powers if w not in taken]
    player_values = {pl: sum((value[pl][w] for w in got[pl]), Fraction(0)) for pl in players}
    assert rec["values"] == {pl: float(v) for pl, v in player_values.items()}
    total, sd = stats(list(player_values.values()))
    assert rec["total"] == float(total) and close(rec["stddev"], sd)
    assert rec["tied"] == tied and rec["exact"] is True

    # shortcut off, lists only: the whole assignment is optimal over all permutations
    if not case.shortcut and case.mode == "list" and not duplex:
        best, best_sq, co = brute(players, powers, value)
        assert frozenset((pl, ws[0]) for pl, ws in got.items() if ws) in co
        firsts = frozenset(ref_shortcut(players, set(powers), case.groups).items())
        most = max(len(c & firsts) for c in co)
        assert rec["tied"] == sum(len(c & firsts) == most for c in co)
    facts["value"] = value
    return facts


# --------------------------------------------------------------------------
# Thousands of random cases
# --------------------------------------------------------------------------

CHUNKS = 30
PER_CHUNK = 120


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_method_matches_the_brute_force_reference(chunk):
    rnd = random.Random(20240 + chunk)
    for k in range(PER_CHUNK):
        case = random_case(rnd)
        seed = b"pref-ref" + chunk.to_bytes(2, "big") + k.to_bytes(2, "big")
        rec = run_resolution(case.data(), seed)
        try:
            check_record(case, rec)
        except AssertionError as err:
            raise AssertionError(f"case {case.describe()} seed {seed.hex()}: {err}") from err


def test_the_generator_covers_what_it_should():
    """The random cases reach every kind of situation the rules distinguish."""
    rnd = random.Random(7)
    seen = Counter()
    for k in range(600):
        case = random_case(rnd)
        rec = run_resolution(case.data(), b"cover" + k.to_bytes(2, "big"))
        facts = check_record(case, rec)
        seen["duplex"] += case.players is not None
        seen["fewer players"] += case.players is None and len(case.texts) < len(case.powers)
        seen["shortcut taken"] += any(facts["shortcut"])
        seen["shortcut differs"] += any(facts["differs"])
        seen["random power"] += any(r["random"] for r in rec["rounds"])
        seen["ties"] += rec["tied"] > 1
        seen["several blocks"] += any(len(r["blocks"]) > 1 for r in rec["rounds"])
        seen["rejected"] += bool(rec["rejected"])
        seen["bracket"] += any(len(g) > 1 for gs in case.groups.values() for g in gs)
        seen["partial"] += any(gs and sum(map(len, gs)) < len(case.powers) for gs in case.groups.values())
        seen[f"mode {case.mode}"] += 1
        seen[f"shortcut {case.shortcut}"] += 1
    for what in ["duplex", "fewer players", "shortcut taken", "shortcut differs", "random power", "ties",
                 "several blocks", "rejected", "bracket", "partial", "mode list", "mode both", "mode random",
                 "shortcut True", "shortcut False"]:
        assert seen[what] >= 10, (what, seen)


# --------------------------------------------------------------------------
# Hand-made cases, checked the same way
# --------------------------------------------------------------------------

def test_empty_and_used_up_lists_neither_take_nor_contest():
    # carl does not mind and contests nothing: ann keeps Britain, bob China.
    # Whatever dora's random power is, it is gone before the shortcut: a
    # list it used up (fay's) has no first choice.
    case = Case(["Austria", "Britain", "China", "Denmark", "Egypt", "France"], "both", True)
    add_player(case, "ann", "B", [["Britain"]])
    add_player(case, "bob", "C A", [["China"], ["Austria"]])
    add_player(case, "carl", "", [])
    add_player(case, "dora", "*", star=True)
    add_player(case, "eve", "[DE]", [["Denmark", "Egypt"]])
    add_player(case, "fay", "F", [["France"]])
    for k in range(40):
        rec = run_resolution(case.data(), b"used-up" + bytes([k]))
        check_record(case, rec)
        r = rec["rounds"][0]
        (taken,) = r["random"].values()
        assert "carl" not in r["shortcut"]
        assert ("fay" in r["shortcut"]) == (taken != "France")
        assert ("ann" in r["shortcut"]) == (taken != "Britain")


def test_a_list_used_up_by_earlier_rounds_contests_nothing():
    # Duplex, 2 players, 4 powers: ann lists only Austria; after round 1 her
    # list is used up, so in round 2 bob's uncontested Britain is his.
    case = Case(["Austria", "Britain", "China", "Denmark"], "list", True, players=2)
    add_player(case, "ann", "A", [["Austria"]])
    add_player(case, "bob", "CB", [["China"], ["Britain"]])
    rec = run_resolution(case.data(), b"\x02")
    check_record(case, rec)
    assert rec["rounds"][0]["shortcut"] == {"ann": "Austria", "bob": "China"}
    assert rec["rounds"][1]["shortcut"] == {"bob": "Britain"}
    assert rec["assignment"] == {"ann": ["Austria", "Denmark"], "bob": ["China", "Britain"]}


def test_star_is_refused_under_lists_only():
    case = Case(list(STANDARD_POWERS), "list", False)
    add_player(case, "ann", "*", rejected=True)
    add_player(case, "bob", "E", [["England"]])
    rec = run_resolution(case.data(), b"\x03")
    check_record(case, rec)
    assert rec["rejected"]["ann"].startswith("column 1:")


# --------------------------------------------------------------------------
# Uniformity among co-optimal assignments, through run_resolution
# --------------------------------------------------------------------------

def uniformity(case: Case, per_assignment: int, tag: bytes) -> tuple[Counter, list[frozenset], dict]:
    """Resolve with fixed seeds; the count of each co-optimal assignment."""
    players = canonical(case.texts)
    value = {pl: ref_values(case.groups[pl], case.powers) for pl in players}
    # the co-optimal set of the whole method: shortcut fixed, the rest by brute force
    uncontested = ref_shortcut(players, set(case.powers), case.groups)
    fixed = uncontested if case.shortcut else {}
    rest = [pl for pl in players if pl not in fixed]
    left = [w for w in case.powers if w not in fixed.values()]
    _, _, co = brute(rest, left, value)
    if not case.shortcut:  # the most uncontested first choices among the best
        firsts = {c: len(c & frozenset(uncontested.items())) for c in co}
        co = [c for c in co if firsts[c] == max(firsts.values())]
    full = [c | frozenset(fixed.items()) for c in co]
    counts: Counter = Counter()
    runs = per_assignment * len(full)
    rec = None
    for k in range(runs):
        rec = run_resolution(case.data(), tag + k.to_bytes(4, "big"))
        counts[frozenset((pl, w) for pl, w in rec["assignment"].items() if w is not None)] += 1
    assert set(counts) <= set(full), "an assignment that is not co-optimal"
    check_record(case, rec)
    return counts, full, rec


def assert_uniform(counts: Counter, full: list[frozenset]) -> None:
    observed = [counts[c] for c in full]
    p = chisquare(observed).pvalue
    assert p > 0.001, (p, sorted(observed))


def test_uniform_among_720_ties():
    case = Case(["Austria", "Britain", "China", "Denmark", "Egypt", "France"], "list", True)
    for name in ["ann", "Bob", "carl", "Dora", "eve", "Fay"]:
        add_player(case, name, "", [])
    counts, full, rec = uniformity(case, 12, b"u720")
    assert len(full) == 720 and rec["tied"] == 720
    assert_uniform(counts, full)


def test_uniform_over_two_independent_blocks():
    case = Case(["Austria", "Britain", "China", "Denmark", "Egypt", "France"], "list", True)
    for name in ["ann", "bob", "carl"]:
        add_player(case, name, "[ABC]", [["Austria", "Britain", "China"]])
    for name in ["dora", "eve", "fay"]:
        add_player(case, name, "(Den Egy Fra)", [["Denmark", "Egypt", "France"]])
    counts, full, rec = uniformity(case, 60, b"u2blocks")
    assert len(full) == 36 and rec["tied"] == 36
    assert [b["count"] for b in rec["rounds"][0]["blocks"]] == [6, 6]
    assert_uniform(counts, full)


def test_uniform_with_partial_lists_after_the_shortcut():
    # carl takes Britain by the shortcut; ann and bob contest Austria; the
    # others do not mind: 2 x 4! = 48 co-optimal assignments.
    case = Case(["Austria", "Britain", "China", "Denmark", "Egypt", "France"], "both", True)
    add_player(case, "ann", "A", [["Austria"]])
    add_player(case, "bob", "A", [["Austria"]])
    add_player(case, "carl", "B", [["Britain"]])
    add_player(case, "dora", "", [])
    add_player(case, "eve", "SET PREFERENCE", [])
    add_player(case, "fay", "set pref", [])
    counts, full, rec = uniformity(case, 50, b"upartial")
    assert rec["rounds"][0]["shortcut"] == {"carl": "Britain"}
    assert len(full) == rec["tied"] == 48
    assert_uniform(counts, full)


# --------------------------------------------------------------------------
# When the shortcut changes the optimum
# --------------------------------------------------------------------------

def search_shortcut_case(seed: int, tries: int, n_powers: int, want: str) -> dict | None:
    """Small random 3-player cases (lists over the first n_powers of
    CUSTOM_POOL): the first where the shortcut takes a power and `want` holds:
    "differs" (the optimum without it has another total or sum of squares),
    "total" (another total) or "agrees". Used to find the fixtures below."""
    rnd = random.Random(seed)
    powers = CUSTOM_POOL[:n_powers]
    players = ["ann", "bob", "carl"]
    for _ in range(tries):
        groups = {pl: random_groups(rnd, powers, {w: 0.0 for w in powers}, 1.0, rnd.random() < 0.5)
                  for pl in players}
        value = {pl: ref_values(groups[pl], powers) for pl in players}
        fixed = ref_shortcut(players, set(powers), groups)
        if not fixed:
            continue
        rest = [pl for pl in players if pl not in fixed]
        left = [w for w in powers if w not in fixed.values()]
        t, s, _ = brute(rest, left, value)
        t += sum(doubled(value[pl][w]) for pl, w in fixed.items())
        s += sum(doubled(value[pl][w]) ** 2 for pl, w in fixed.items())
        bt, bs, _ = brute(players, powers, value)
        if {"differs": (t, s) != (bt, bs), "total": t != bt, "agrees": (t, s) == (bt, bs)}[want]:
            return {pl: "".join(g[0][0] if len(g) == 1 else "[" + "".join(x[0] for x in g) + "]" for g in gs)
                    for pl, gs in groups.items()}
    return None


# Found by search_shortcut_case (test_the_search_finds_the_fixtures), powers by initial.
# 3 powers: same total 4, but the shortcut gives ann China (values 2, 2, 0:
# std-dev 0.9428) where the optimum is Austria, Britain, China (1, 2, 1: 0.4714).
# With 3 players on 3 powers no total was lost (20,000 tries); with
# partial lists on 4 powers the total drops: carl's uncontested Austria costs
# 6.5 against 7 (ann Britain, bob Austria, carl Denmark).
SHORTCUT_DIFFERS = {"ann": "CAB", "bob": "BCA", "carl": "BCA"}
SHORTCUT_COSTS_TOTAL = {"ann": "BA", "bob": "BA", "carl": "ADBC"}
SHORTCUT_AGREES = {"ann": "BC", "bob": "CA", "carl": "B"}


def test_the_search_finds_the_fixtures():
    assert search_shortcut_case(1, 2000, 3, "differs") == SHORTCUT_DIFFERS
    assert search_shortcut_case(1, 2000, 3, "agrees") == SHORTCUT_AGREES
    assert search_shortcut_case(1, 20000, 4, "total") == SHORTCUT_COSTS_TOTAL
    assert search_shortcut_case(1, 5000, 3, "total") is None


def three_player_case(lists: dict[str, str], shortcut: bool = True) -> Case:
    full = {w[0]: w for w in CUSTOM_POOL}
    used = sorted({full[ch] for text in lists.values() for ch in text if ch.isalpha()})
    powers = CUSTOM_POOL[:max(3, len(used))]
    case = Case(powers, "list", shortcut)
    for pl, text in lists.items():
        groups, inside = [], None
        for ch in text:
            if ch == "[":
                inside = []
            elif ch == "]":
                groups.append(inside)
                inside = None
            elif inside is not None:
                inside.append(full[ch])
            else:
                groups.append([full[ch]])
        add_player(case, pl, text, groups)
    return case


def resolve_cli(tmp_path: Path, data: dict, fmt: str, seed: str = "00ff", name: str = "prefs.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return subprocess.run([JUDGE, "resolve", str(path), "--seed", seed, "--format", fmt],
                          check=False, capture_output=True, timeout=60)


NOTE = "Note: without the uncontested-first-choice step"


@pytest.mark.parametrize("lists", [SHORTCUT_DIFFERS, SHORTCUT_COSTS_TOTAL])
def test_shortcut_that_changes_the_optimum_is_reported(tmp_path, lists):
    case = three_player_case(lists)
    rec = run_resolution(case.data(), b"\x00\xff")
    facts = check_record(case, rec)
    check = rec["rounds"][0]["shortcut_check"]
    assert facts["differs"] == [True] and check["differs"] is True
    assert (check["with"]["total"], check["with"]["stddev"]) != (check["without"]["total"],
                                                                 check["without"]["stddev"])
    out = resolve_cli(tmp_path, case.data(), "text")
    assert out.returncode == 0, out.stderr
    assert NOTE in out.stdout.decode()
    # and without the shortcut, the optimum itself
    off = three_player_case(lists, shortcut=False)
    rec_off = run_resolution(off.data(), b"\x00\xff")
    check_record(off, rec_off)
    assert (rec_off["total"], rec_off["stddev"]) == (check["without"]["total"], pytest.approx(
        check["without"]["stddev"], abs=1e-9))
    assert NOTE not in resolve_cli(tmp_path, off.data(), "text").stdout.decode()


def test_shortcut_that_agrees_gives_no_note(tmp_path):
    case = three_player_case(SHORTCUT_AGREES)
    rec = run_resolution(case.data(), b"\x00\xff")
    check_record(case, rec)
    check = rec["rounds"][0]["shortcut_check"]
    assert rec["rounds"][0]["shortcut"] and check["differs"] is False
    out = resolve_cli(tmp_path, case.data(), "text")
    assert out.returncode == 0, out.stderr
    assert "Note:" not in out.stdout.decode()


# --------------------------------------------------------------------------
# The offline resolver's command line
# --------------------------------------------------------------------------

STD_LETTERS = {"A": "Austria", "E": "England", "F": "France", "G": "Germany", "I": "Italy", "R": "Russia",
               "T": "Turkey"}


def cli_case() -> Case:
    case = Case(list(STANDARD_POWERS), "both", True)
    add_player(case, "alice", "E[FGR][TAI]",
               [["England"], ["France", "Germany", "Russia"], ["Turkey", "Austria", "Italy"]])
    add_player(case, "bob", "*", star=True)
    add_player(case, "carol", "", [])
    add_player(case, "dave", "FRIGATE", [[STD_LETTERS[c]] for c in "FRIGATE"])
    add_player(case, "erin", "SET PREFERENCE Italy, Turkey", [["Italy"], ["Turkey"]])
    return case


def test_cli_json_is_complete_and_reproducible(tmp_path):
    case = cli_case()
    first = resolve_cli(tmp_path, case.data(), "json", seed="00ff")
    assert first.returncode == 0, first.stderr
    rec = json.loads(first.stdout)
    for key in ["assignment", "values", "total", "stddev", "tied", "seed", "draws", "rejected", "rounds"]:
        assert key in rec, key
    assert rec["seed"] == "00ff" and rec["rejected"] == {}
    check_record(case, rec)
    assert list(rec["rounds"][0]["random"]) == ["bob"]
    assert rec.pop("input") == case.data()  # the output carries its input, for `judge verify`
    assert rec == run_resolution(case.data(), bytes.fromhex("00ff"))
    again = resolve_cli(tmp_path, case.data(), "json", seed="00ff", name="again.json")
    assert again.stdout == first.stdout
    other = resolve_cli(tmp_path, case.data(), "json", seed="0100")
    assert json.loads(other.stdout)["seed"] == "0100"


def test_cli_reports_a_bad_list_with_its_column(tmp_path):
    case = cli_case()
    add_player(case, "fred", "EFX", rejected=True)
    del case.texts["carol"], case.groups["carol"], case.star["carol"]
    out = resolve_cli(tmp_path, case.data(), "json")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert rec["rejected"] == {"fred": rec["rejected"]["fred"]}
    assert rec["rejected"]["fred"].startswith("column 3: 'X' is not a power's letter")
    check_record(case, rec)
    text = resolve_cli(tmp_path, case.data(), "text").stdout.decode()
    assert "list refused: column 3" in text


def test_cli_text_and_bbcode(tmp_path):
    case = cli_case()
    rec = run_resolution(case.data(), bytes.fromhex("00ff"))
    text = resolve_cli(tmp_path, case.data(), "text")
    assert text.returncode == 0, text.stderr
    body = text.stdout.decode()
    assert "Assignment:" in body and "Seed: 00ff" in body and "mode both" in body
    assert "random power (*): " + rec["rounds"][0]["random"]["bob"] + " to bob" in body
    for pl, w in rec["assignment"].items():
        assert any(line.split() == [pl, *w.split()] for line in body.splitlines()), (pl, w)
    bb = resolve_cli(tmp_path, case.data(), "bbcode")
    assert bb.returncode == 0, bb.stderr
    post = bb.stdout.decode()
    assert "[b]Power assignment by preference lists[/b]" in post and "[list]" in post and "[/list]" in post
    assert f"[*]alice: [b]{rec['assignment']['alice']}[/b]" in post
    assert "Seed: [code]00ff[/code]" in post


def thirty_six(objects: bool) -> list:
    names = [f"{c}{x}" for c, x in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", ["land"] * 26)]
    names += [f"Zone{k}" for k in range(10)]
    if not objects:
        return names
    letters = list("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + [f"Q{k}" for k in range(10)]
    return [{"name": n, "letter": l} for n, l in zip(names, letters)]


@pytest.mark.parametrize("objects", [True, False])
def test_cli_thirty_six_powers(tmp_path, objects):
    rnd = random.Random(36 + objects)
    powers = thirty_six(objects)
    names = [p["name"] if isinstance(p, dict) else p for p in powers]
    plist = make_power_list(powers)
    popularity = {w: rnd.gauss(0.0, 1.0) for w in names}
    case = Case(powers, "both", True)
    for k in range(36):
        u = rnd.random()
        if u < 0.05:
            add_player(case, f"player{k:02d}", "*", star=True)
        elif u < 0.08:
            add_player(case, f"player{k:02d}", "", [])
        else:
            groups = random_groups(rnd, names, popularity, 0.8, rnd.random() < 0.3)
            text = " ".join(
                g[0] if len(g) == 1 else "[" + " ".join(g) + "]" for g in groups)
            add_player(case, f"player{k:02d}", text, groups)
    out = resolve_cli(tmp_path, case.data(), "json", seed="36")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert [p["name"] for p in rec["powers"]] == names == plist.names
    assert sorted(rec["assignment"].values()) == sorted(names) and rec["exact"] is True
    assert rec["rejected"] == {}
    # Optimality of the optimized part, by an independent assignment solve on
    # (total, then sum of squares): doubled values, lexicographic integer cost.
    r = rec["rounds"][0]
    value = {pl: ref_values(case.groups[pl], names) for pl in case.texts}
    rest = [pl for pl in canonical(case.texts) if pl not in r["random"] and pl not in r["shortcut"]]
    left = [w for w in names if w not in r["random"].values() and w not in r["shortcut"].values()]
    assert r["shortcut"] == ref_shortcut([pl for pl in canonical(case.texts) if pl not in r["random"]],
                                         set(names) - set(r["random"].values()), case.groups)
    w = np.array([[doubled(value[pl][x]) for x in left] for pl in rest], dtype=np.int64)
    big = len(rest) * int(w.max()) ** 2 + 1
    rows, cols = linear_sum_assignment(-(w * big) + w * w)
    best_total, best_sq = int(w[rows, cols].sum()), int((w[rows, cols] ** 2).sum())
    mine = [doubled(value[pl][x]) for pl, x in r["optimized"].items()]
    assert (sum(mine), sum(v * v for v in mine)) == (best_total, best_sq)
    total = sum(value[pl][rec["assignment"][pl]] for pl in case.texts)
    assert rec["total"] == float(total)
    text = resolve_cli(tmp_path, case.data(), "text", seed="36")
    assert text.returncode == 0 and "Seed: 36" in text.stdout.decode()


def test_duplex_leftover_powers_go_to_random_players_by_chance():
    """PRFRAND, 3 players for 7 powers: who holds the 7th power is drawn, not
    decided by name order (each player about 1/3 of the time)."""
    data = {"method": "preference", "params": {"mode": "random", "players": 3},
            "submissions": {"zed": "", "bob": "", "Amy": ""}}
    three = Counter()
    runs = 600
    for k in range(runs):
        rec = run_resolution(data, b"leftover" + k.to_bytes(2, "big"))
        (holder,) = [pl for pl, ws in rec["assignment"].items() if len(ws) == 3]
        three[holder] += 1
    chi2 = sum((three[pl] - runs / 3) ** 2 / (runs / 3) for pl in ("zed", "bob", "Amy"))
    assert chi2 < 13.82, three  # df = 2, p = 0.001
