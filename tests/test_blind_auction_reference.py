"""An independent, exhaustive reference for the Blind Auction resolution.

The rule (PlayDiplomacy PbF Blind Auction v2.0.a, as the judge states it):
at each step take the highest remaining bid; draw uniformly among the powers
tied for it, then uniformly among that power's tied bidders. Bid order in the
list never matters. No Preference is D points on every power. There may be
fewer players than powers (the other powers stay unassigned).

`reference_distribution` below is written from that rule alone (no code of
judge.methods.blind_auction is reused): a memoised recursion over the sets of
remaining players and powers that returns the exact probability of every
final assignment as a Fraction. The method's own distribution is made exact by
running `resolve` with a scripted stream and enumerating every branch.
"""

from __future__ import annotations

import hashlib
import random
from fractions import Fraction
from functools import lru_cache
from math import ceil

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from judge.methods.blind_auction.engine import (
    NO_PREFERENCE,
    BidEntry,
    BidList,
    ParamError,
    Params,
    check_params,
    resolve,
    validate,
)
from judge.rng import DrawStream, word
from judge.variants import make_power_list

POWER_NAMES = ["Austria", "England", "France", "Germany", "Italy", "Russia"]
PLAYER_NAMES = ["dirk", "Bea", "carl", "Ann", "ann", "Fay"]  # mixed case on purpose, two differ only in case

Assignment = frozenset  # of (player, power) pairs


# --------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------

def effective_chart(powers: list[str], D: int, lists: dict[str, dict[str, int] | None]) -> dict:
    """player -> power -> points, No Preference (None) standing for D everywhere."""
    return {pl: ({w: D for w in powers} if b is None else dict(b)) for pl, b in lists.items()}


def reference_distribution(chart: dict[str, dict[str, int]], powers: list[str]) -> dict[Assignment, Fraction]:
    """Exact distribution over final assignments, straight from the rule."""

    @lru_cache(maxsize=None)
    def dist(players: frozenset, open_powers: frozenset) -> tuple:
        if not players:
            return ((frozenset(), Fraction(1)),)
        top = max(chart[pl][w] for pl in players for w in open_powers)
        tied_powers = {w for w in open_powers if any(chart[pl][w] == top for pl in players)}
        out: dict[frozenset, Fraction] = {}
        for w in tied_powers:
            bidders = {pl for pl in players if chart[pl][w] == top}
            for pl in bidders:
                p = Fraction(1, len(tied_powers)) * Fraction(1, len(bidders))
                for rest, q in dist(players - {pl}, open_powers - {w}):
                    key = rest | {(pl, w)}
                    out[key] = out.get(key, Fraction(0)) + p * q
        return tuple(out.items())

    return dict(dist(frozenset(chart), frozenset(powers)))


def reference_path_count(chart: dict[str, dict[str, int]], powers: list[str]) -> int:
    """How many distinct draw sequences the rule allows (the size of the DFS)."""

    @lru_cache(maxsize=None)
    def count(players: frozenset, open_powers: frozenset) -> int:
        if not players:
            return 1
        top = max(chart[pl][w] for pl in players for w in open_powers)
        total = 0
        for w in open_powers:
            for pl in players:
                if chart[pl][w] == top:
                    total += count(players - {pl}, open_powers - {w})
        return total

    return count(frozenset(chart), frozenset(powers))


# --------------------------------------------------------------------------
# The method's distribution, made exact with a scripted stream
# --------------------------------------------------------------------------

class ScriptedStream:
    """Duck-types DrawStream.choice: follows a given sequence of indices and
    records the number of options at every choice point (index 0 past the end
    of the script)."""

    def __init__(self, script: list[int]) -> None:
        self.script = list(script)
        self.taken: list[tuple[int, int]] = []  # (index, n) per choice point

    def choice(self, options, *, what, **context):
        options = list(options)
        assert options, "choice from no options"
        assert len(set(options)) == len(options), f"repeated options {options}"
        assert what in ("power", "player")
        k = len(self.taken)
        index = self.script[k] if k < len(self.script) else 0
        assert 0 <= index < len(options)
        self.taken.append((index, len(options)))
        return options[index]

    def records(self):
        return []


def method_distribution(powers_pl, params, submissions) -> tuple[dict[Assignment, Fraction], int]:
    """Every branch of `resolve` by DFS over choice sequences (odometer order);
    each choice point with n options has probability 1/n."""
    out: dict[Assignment, Fraction] = {}
    script: list[int] = []
    paths = 0
    while True:
        stream = ScriptedStream(script)
        outcome = resolve(powers_pl, params, submissions, stream)
        paths += 1
        p = Fraction(1)
        for _, n in stream.taken:
            p /= n
        key = frozenset(outcome.assignment.items())
        out[key] = out.get(key, Fraction(0)) + p
        # next branch: bump the deepest choice that still has a sibling
        taken = stream.taken
        k = len(taken) - 1
        while k >= 0 and taken[k][0] == taken[k][1] - 1:
            k -= 1
        if k < 0:
            return out, paths
        script = [i for i, _ in taken[:k]] + [taken[k][0] + 1]


# --------------------------------------------------------------------------
# Generated cases
# --------------------------------------------------------------------------

def case_params(U: int, d_is_t_over_u: bool) -> Params:
    """Parameters under which every generated bid list is valid: bids are
    distinct values from 1..U+2 at most (M = U+2), T is the smallest multiple of U
    that covers the largest such list, D is 1 or T/U."""
    M = U + 2
    T = U * ceil(sum(range(3, U + 3)) / U)
    return Params(T=T, M=M, D=T // U if d_is_t_over_u else 1)


@st.composite
def auctions(draw, max_paths: int = 1500):
    U = draw(st.integers(1, 6))
    n_players = draw(st.integers(1, U))
    params = case_params(U, draw(st.booleans()))
    powers = POWER_NAMES[:U]
    players = draw(st.permutations(PLAYER_NAMES))[:n_players]
    # bids are distinct values from 1..U+extra: with extra = 0 every list is a
    # permutation of 1..U and ties between players are everywhere
    values = list(range(1, U + 1 + draw(st.integers(0, 2))))
    lists: dict[str, dict[str, int] | None] = {}
    for pl in players:
        if draw(st.integers(0, 3)) == 0:
            lists[pl] = None  # No Preference
        else:
            picked = draw(st.permutations(values))[:U]
            lists[pl] = dict(zip(powers, picked))
    chart = effective_chart(powers, params.D, lists)
    assume(reference_path_count(chart, powers) <= max_paths)
    return U, params, powers, lists


def to_submissions(lists):
    return {pl: (NO_PREFERENCE if b is None else BidList(dict(b))) for pl, b in lists.items()}


def assert_valid_case(U, params, powers, lists):
    """The generated lists are valid bid lists and the parameters are usable."""
    check_params(U, params)
    pl_list = make_power_list(powers)
    for b in lists.values():
        if b is not None:
            entries = [BidEntry(power=w, amount=str(a)) for w, a in b.items()]
            assert validate(pl_list, params, entries).ok


# --------------------------------------------------------------------------
# 1. Exact distribution
# --------------------------------------------------------------------------

@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(auctions())
def test_exact_distribution_equals_reference(case):
    U, params, powers, lists = case
    assert_valid_case(U, params, powers, lists)
    chart = effective_chart(powers, params.D, lists)
    ref = reference_distribution(chart, powers)
    got, paths = method_distribution(make_power_list(powers), params, to_submissions(lists))
    assert sum(ref.values()) == 1
    assert sum(got.values()) == 1
    assert got == ref
    assert paths == reference_path_count(chart, powers)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_all_no_preference_is_uniform_over_assignments(n):
    """n No Preference players on n powers: every bijection with probability 1/n!."""
    powers = POWER_NAMES[:n]
    lists = {pl: None for pl in PLAYER_NAMES[:n]}
    params = Params(T=20 * n, M=10 * n, D=1)
    got, _ = method_distribution(make_power_list(powers), params, to_submissions(lists))
    fact = 1
    for k in range(2, n + 1):
        fact *= k
    assert len(got) == fact
    assert set(got.values()) == {Fraction(1, fact)}
    assert got == reference_distribution(effective_chart(powers, 1, lists), powers)


def test_power_tie_order_can_matter_with_no_preference():
    """Two powers tied at the top: which one is drawn first decides the odds.

    U = 2, T = 4, D = T/U = 2. Ann bids Austria 2, England 1; Cy bids No
    Preference (2 on both). Worked by hand from the rule: the top bid 2 is on
    Austria (Ann, Cy) and England (Cy). Austria drawn first (1/2): Ann or Cy
    wins it (1/4 each). England drawn first (1/2): Cy is its only bidder at 2,
    Ann then gets Austria. So Ann gets Austria with 3/4, England with 1/4.
    """
    powers = POWER_NAMES[:2]
    params = Params(T=4, M=2, D=2)
    check_params(2, params)
    lists = {"Ann": {"Austria": 2, "England": 1}, "Cy": None}
    ann_aus = frozenset({("Ann", "Austria"), ("Cy", "England")})
    ann_eng = frozenset({("Ann", "England"), ("Cy", "Austria")})
    expected = {ann_aus: Fraction(3, 4), ann_eng: Fraction(1, 4)}
    assert reference_distribution(effective_chart(powers, 2, lists), powers) == expected
    got, paths = method_distribution(make_power_list(powers), params, to_submissions(lists))
    assert got == expected
    assert paths == 3


def test_a_player_tied_on_several_powers():
    """Equal bids of one player on several powers (here an invalid list fed to
    resolve directly) are drawn like any other tie; worked by hand: every one
    of the three bijections that the rule allows has probability 1/3."""
    powers = POWER_NAMES[:3]
    lists = {"A": {"Austria": 5, "England": 5, "France": 1}, "B": {"Austria": 5, "England": 1, "France": 5}}
    ref = reference_distribution(effective_chart(powers, 1, lists), powers)
    assert ref == {
        frozenset({("A", "Austria"), ("B", "France")}): Fraction(1, 3),
        frozenset({("B", "Austria"), ("A", "England")}): Fraction(1, 3),
        frozenset({("A", "England"), ("B", "France")}): Fraction(1, 3),
    }
    got, paths = method_distribution(make_power_list(powers), Params(T=11, M=5, D=1), to_submissions(lists))
    assert got == ref
    assert paths == 6


def test_fewer_players_than_powers_leave_powers_unassigned():
    powers = POWER_NAMES[:5]
    lists = {"ann": {"Austria": 3, "England": 2, "France": 1, "Germany": 5, "Italy": 4}, "bob": None}
    params = Params(T=100, M=50, D=1)
    got, _ = method_distribution(make_power_list(powers), params, to_submissions(lists))
    ref = reference_distribution(effective_chart(powers, 1, lists), powers)
    assert got == ref
    # ann takes Germany; bob's 1s tie on the four others
    assert ref == {frozenset({("ann", "Germany"), ("bob", w)}): Fraction(1, 4)
                   for w in ("Austria", "England", "France", "Italy")}


# --------------------------------------------------------------------------
# 2. The real DrawStream, many seeds
# --------------------------------------------------------------------------

seeds = st.binary(min_size=1, max_size=16)


def shuffled_submissions(lists, rnd: random.Random):
    players = list(lists)
    rnd.shuffle(players)
    subs = {}
    for pl in players:
        b = lists[pl]
        if b is None:
            subs[pl] = NO_PREFERENCE
        else:
            items = list(b.items())
            rnd.shuffle(items)
            subs[pl] = BidList(dict(items))
    return subs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(auctions(max_paths=20000), seeds, st.integers(0, 2**32))
def test_real_stream_outcome_supported_deterministic_and_order_free(case, seed, shuffle_seed):
    U, params, powers, lists = case
    pl_list = make_power_list(powers)
    chart = effective_chart(powers, params.D, lists)
    ref = reference_distribution(chart, powers)

    first = resolve(pl_list, params, to_submissions(lists), DrawStream(seed))
    assert ref.get(frozenset(first.assignment.items()), 0) > 0
    assert set(first.unassigned) == set(powers) - set(first.assignment.values())

    again = resolve(pl_list, params, to_submissions(lists), DrawStream(seed))
    assert again.assignment == first.assignment
    assert [s.as_dict() for s in again.steps] == [s.as_dict() for s in first.steps]
    assert again.draws == first.draws

    rnd = random.Random(shuffle_seed)
    for _ in range(3):
        other = resolve(pl_list, params, shuffled_submissions(lists, rnd), DrawStream(seed))
        assert other.assignment == first.assignment
        assert [s.as_dict() for s in other.steps] == [s.as_dict() for s in first.steps]
        assert other.draws == first.draws
        assert other.chart == first.chart


def test_many_seeds_reach_every_outcome_of_a_tied_case():
    """All No Preference on 3 powers: 300 seeds hit all 6 bijections, none else."""
    powers = POWER_NAMES[:3]
    lists = {pl: None for pl in PLAYER_NAMES[:3]}
    ref = reference_distribution(effective_chart(powers, 1, lists), powers)
    seen = set()
    for k in range(300):
        out = resolve(make_power_list(powers), Params(T=60, M=30, D=1), to_submissions(lists),
                      DrawStream(k.to_bytes(4, "big")))
        key = frozenset(out.assignment.items())
        assert key in ref
        seen.add(key)
    assert seen == set(ref)


# --------------------------------------------------------------------------
# 3. Recorded draws
# --------------------------------------------------------------------------

def own_word(seed: bytes, counter: int) -> int:
    return int.from_bytes(hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()[:8], "big")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(auctions(max_paths=20000), seeds)
def test_recorded_draws_match_steps_and_replay(case, seed):
    U, params, powers, lists = case
    chart = effective_chart(powers, params.D, lists)
    out = resolve(make_power_list(powers), params, to_submissions(lists), DrawStream(seed))
    canonical_players = sorted(lists, key=lambda s: (s.casefold(), s))

    # Recompute every step's tied sets independently from the chart.
    players_left = set(lists)
    powers_left = set(powers)
    expected_draws = []
    assert len(out.steps) == len(lists)
    for number, step in enumerate(out.steps, start=1):
        assert step.number == number
        top = max(chart[pl][w] for pl in players_left for w in powers_left)
        assert step.bid == top
        tied_powers = [w for w in powers if w in powers_left and any(chart[pl][w] == top for pl in players_left)]
        assert step.tied_powers == tied_powers
        assert step.power in tied_powers
        tied_players = [pl for pl in canonical_players if pl in players_left and chart[pl][step.power] == top]
        assert step.tied_players == tied_players
        assert step.player in tied_players
        assert out.assignment[step.player] == step.power
        if len(tied_powers) > 1:
            expected_draws.append(("power", tied_powers, step.power, {"step": number, "bid": top}))
        if len(tied_players) > 1:
            expected_draws.append(("player", tied_players, step.player,
                                   {"step": number, "bid": top, "power": step.power}))
        players_left.discard(step.player)
        powers_left.discard(step.power)

    assert len(out.draws) == len(expected_draws)
    counter = 0
    for d, (what, options, chosen, context) in zip(out.draws, expected_draws):
        assert d["what"] == what
        assert d["options"] == options
        assert d["n"] == len(options)
        assert d["chosen"] == chosen
        assert d["context"] == context
        assert d["options"][d["index"]] == d["chosen"]
        # replay with judge.rng.word and the documented rejection rule
        n = len(options)
        limit = 2**64 - (2**64 % n)
        rejected = 0
        while word(seed, counter) >= limit:
            rejected += 1
            counter += 1
        assert word(seed, counter) == own_word(seed, counter)
        assert d["counter"] == counter
        assert d["rejected"] == rejected
        assert d["index"] == word(seed, counter) % n
        counter += 1


def test_no_players_and_too_many_players():
    powers = make_power_list(POWER_NAMES[:2])
    params = Params(T=10, M=5, D=1)
    out = resolve(powers, params, {}, DrawStream(b"s"))
    assert out.assignment == {} and out.unassigned == POWER_NAMES[:2] and out.draws == []
    assert reference_distribution({}, POWER_NAMES[:2]) == {frozenset(): 1}
    with pytest.raises(ParamError):
        resolve(powers, params, {pl: NO_PREFERENCE for pl in PLAYER_NAMES[:3]}, DrawStream(b"s"))
