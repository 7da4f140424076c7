"""Adversarial preference profiles (issue 12), shared by
tests/test_adversarial_preference.py and bench/bench_preference.py
(--pathological): the shapes whose tied blocks no counting method handles
at large sizes, written as the lists players send.

A profile is a genome: for each player, the groups of their list, best
first, each a tuple of power indices (a bracket when it holds several);
powers a list leaves out share the last positions, as the method values
them. `texts` writes a genome in the judge's syntax (letters when every
power has one, else names set apart by spaces), so the tests read it back
with read_preference and resolve it as a game would.

The shapes:
* anything_but: player i brackets every power except a different one,
  P_i (`[all but P_i]`): the tied block is every derangement of the
  excluded powers, no two power types alike, so counting explodes.
* random_brackets: each player brackets a random set of powers, of a
  density drawn per profile.
* two_power: each player brackets two powers (`[AB]`), optionally followed
  by the rest in pairs (`[AB][CD][EF]...`).
* mixed: players of all the shapes above and realistic lists (common
  popularity plus noise, a bracket, a partial list) in one game.
`mutate` changes one thing of a genome (the bench's hill-climb): flip a
power into or out of a player's first bracket, swap two powers in one
list (which power is excluded), merge two groups or split one, or copy a
list to another player.
"""

from __future__ import annotations

import random
from typing import Callable

from judge.variants import STANDARD_POWERS, make_power_list

Genome = list[tuple[tuple[int, ...], ...]]  # per player: groups of power indices

# Eight powers with distinct first letters, so that small games are written
# as nJudge players write them: "[EFGRIT]".
SMALL_POWERS = [*STANDARD_POWERS, "Spain"]


def power_names(n: int) -> list[str]:
    """Names of n powers: letters up to 8, else names read as words."""
    if n <= len(SMALL_POWERS):
        return SMALL_POWERS[:n]
    return [f"Power{k:02d}" for k in range(n)]


def powers_of(n: int):
    return make_power_list(power_names(n))


def texts(genome: Genome, names: list[str] | None = None) -> dict[str, str]:
    """Player -> list text, in the judge's syntax."""
    n = 1 + max((x for groups in genome for g in groups for x in g), default=0)
    names = names or power_names(max(n, len(genome)))
    plist = make_power_list(names)
    letters = all(p.letter for p in plist)
    short = [p.letter if letters else p.name for p in plist]
    sep = "" if letters else " "
    out = {}
    for i, groups in enumerate(genome):
        parts = []
        for g in groups:
            inner = sep.join(short[x] for x in g)
            parts.append(f"[{inner}]" if len(g) > 1 else inner)
        out[f"p{i:02d}"] = sep.join(parts)
    return out


# --------------------------------------------------------------------------
# The shapes
# --------------------------------------------------------------------------


def anything_but(n: int, excluded: list[int] | None = None, rnd: random.Random | None = None) -> Genome:
    """Player i: one bracket of every power but excluded[i] (by default a
    random permutation: every player excludes a different power)."""
    if excluded is None:
        excluded = list(range(n))
        (rnd or random.Random(n)).shuffle(excluded)
    return [(tuple(j for j in range(n) if j != x),) for x in excluded]


def random_brackets(n: int, rnd: random.Random, density: float | None = None) -> Genome:
    """Player i: one bracket of a random set of powers (each kept with
    probability `density`, at least one)."""
    d = rnd.uniform(0.2, 0.9) if density is None else density
    out: Genome = []
    for _ in range(n):
        s = tuple(j for j in range(n) if rnd.random() < d) or (rnd.randrange(n),)
        out.append((s,))
    return out


def two_power(n: int, rnd: random.Random, full: bool = False) -> Genome:
    """Player i: a bracket of two powers; with `full`, all powers in pairs."""
    out: Genome = []
    for _ in range(n):
        order = rnd.sample(range(n), n)
        pairs = [tuple(sorted(order[k:k + 2])) for k in range(0, n, 2)]
        out.append(tuple(pairs) if full else (pairs[0],))
    return out


def realistic(n: int, rnd: random.Random, popularity: list[float], noise: float) -> tuple[tuple[int, ...], ...]:
    """One realistic list (as bench_preference's profiles): popularity plus
    noise, 30% with a bracket of 2-4 powers, 30% a partial list."""
    order = sorted(range(n), key=lambda j: popularity[j] + rnd.gauss(0.0, noise))
    groups = [(j,) for j in order]
    u = rnd.random()
    if u < 0.3:
        size = min(n, rnd.randint(2, 4))
        start = rnd.randint(0, n - size)
        groups[start:start + size] = [tuple(sorted(order[start:start + size]))]
    elif u < 0.6:
        groups = groups[:rnd.randint(1, n - 1)]
    return tuple(groups)


def mixed(n: int, rnd: random.Random) -> Genome:
    """Players of every shape in one game: anything-but-X, random brackets,
    two-power brackets and realistic lists."""
    popularity = [rnd.gauss(0.0, 1.0) for _ in range(n)]
    noise = rnd.uniform(0.3, 1.5)
    excluded = rnd.sample(range(n), n)
    density = rnd.uniform(0.3, 0.9)
    out: Genome = []
    for i in range(n):
        kind = rnd.randrange(4)
        if kind == 0:
            out.append(anything_but(n, [excluded[i]])[0])
        elif kind == 1:
            out.append((tuple(j for j in range(n) if rnd.random() < density) or (excluded[i],),))
        elif kind == 2:
            out.append((tuple(sorted(rnd.sample(range(n), 2))),))
        else:
            out.append(realistic(n, rnd, popularity, noise))
    return out


SHAPES: dict[str, Callable[[int, random.Random], Genome]] = {
    "anything-but-X": lambda n, rnd: anything_but(n, rnd=rnd),
    "anything-but-X, some alike": lambda n, rnd: anything_but(n, [rnd.randrange(n) for _ in range(n)]),
    "random brackets": random_brackets,
    "sparse brackets": lambda n, rnd: random_brackets(n, rnd, rnd.uniform(0.05, 0.25)),
    "dense brackets": lambda n, rnd: random_brackets(n, rnd, rnd.uniform(0.8, 0.97)),
    "two-power brackets": two_power,
    "lists of pairs": lambda n, rnd: two_power(n, rnd, full=True),
    "mixed": mixed,
}


# --------------------------------------------------------------------------
# Mutations (bench/bench_preference.py --pathological)
# --------------------------------------------------------------------------


def _normal(groups: list[list[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(g)) for g in groups if g)


def mutate(genome: Genome, n: int, rnd: random.Random) -> Genome:
    """A copy of the genome with one change (see the module docstring)."""
    out = list(genome)
    i = rnd.randrange(len(out))
    groups = [list(g) for g in out[i]]
    kind = rnd.randrange(5)
    if kind == 0:  # flip one power into or out of the first bracket
        x = rnd.randrange(n)
        for g in groups:
            if x in g:
                g.remove(x)
                break
        else:
            if groups:
                groups[0].append(x)
            else:
                groups = [[x]]
    elif kind == 1:  # swap two powers in the list (e.g. which one is excluded)
        a, b = rnd.sample(range(n), 2)
        groups = [[b if x == a else a if x == b else x for x in g] for g in groups]
    elif kind == 2 and len(groups) >= 2:  # merge two adjacent groups
        k = rnd.randrange(len(groups) - 1)
        groups[k:k + 2] = [groups[k] + groups[k + 1]]
    elif kind == 3 and groups and max(len(g) for g in groups) >= 2:  # split a bracket
        k = rnd.choice([k for k, g in enumerate(groups) if len(g) >= 2])
        g = groups[k][:]
        rnd.shuffle(g)
        cut = rnd.randint(1, len(g) - 1)
        groups[k:k + 1] = [g[:cut], g[cut:]]
    else:  # copy another player's list
        groups = [list(g) for g in out[rnd.randrange(len(out))]]
    new = _normal(groups)
    out[i] = new if new else out[i]
    return out
