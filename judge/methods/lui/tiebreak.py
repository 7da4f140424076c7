"""The MM2 priority tiebreak, as a pure function.

The seed's words: "If there are multiple players with the same priority, all
tied players except the single player who gained the most priority from this
tiebreak gain 1 priority. If there is no such player, all tied players
except the player who had the lowest priority in the previous round gain 1
priority. Repeat the above two steps until all ties are broken."

A tiebreak orders the players who are tied: a player with strictly more
priority always stays ahead of one with less (issue 26; the seed: "the
submission of the player with highest priority will always go through").
Read here as:
- the steps run within a level: each group of players sharing a priority
  is broken on its own, by the seed's rounds among its members only (the
  players above it never join it), which orders the group;
- in each round of a group one player stays: the member with the lowest
  priority in the previous round (of the season: the standings this game
  started from); everyone else in the group gains 1. (Members tied in a
  round have gained alike, so the seed's first step, "the single player
  who gained the most", never decides within a level: it is the seed's
  way of keeping a player bumped onto a higher level below the player who
  was there, which the next point does for every level.) Where the
  previous round is tied too, the round before it decides,
  and so on through the standings given; where all of them are tied, the
  seed has no rule: the member listed first in `order` (the game's roster)
  stays and the group is reported in `Tiebreak.fallback`, so that the GM is
  told. Without an order, UnbreakableTie is raised. Nothing is drawn at
  random;
- the priorities after it are the players in that order, lowest first,
  each at its own priority or one above the player below, whichever is
  higher: a group of k at p takes p .. p+k-1, and a player above it that
  the group reached is lifted just over it (the seed's "gain 1" when a
  bumped player lands on a level above, with the player who had more
  staying ahead). Nobody loses priority, and the order of unequal
  priorities never changes.

It always ends: within a group the lowest priority at which a tie remains
rises by at least 1 every round (one member stays there, nobody moves onto
it), and no value passes the highest priority plus the number of players.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence


class UnbreakableTie(ValueError):
    """Players tied in every standing given, and no order to fall back on."""


@dataclass(frozen=True)
class Step:
    """One round of one group's tiebreak: at `priority` (within the group's
    own run), `stayed` stayed, the rest of `group` gained 1."""

    round: int
    priority: int
    group: tuple[str, ...]
    stayed: str
    reason: str  # "lowest-previous" (with `depth`), or "order"
    depth: int = 0  # which earlier standing decided (0: the previous round)


@dataclass(frozen=True)
class Tiebreak:
    priority: tuple[tuple[str, int], ...]  # after the tiebreak, in the input's order
    gains: tuple[tuple[str, int], ...]
    steps: tuple[Step, ...]
    fallback: tuple[tuple[str, ...], ...]  # groups only `order` could break

    def as_dict(self) -> dict[str, int]:
        return dict(self.priority)

    def ranking(self) -> list[str]:
        """Players from the highest priority down (all distinct now)."""
        return [p for p, _ in sorted(self.priority, key=lambda kv: -kv[1])]


def break_ties(priority: Mapping[str, int], previous: Sequence[Mapping[str, int]] = (),
               order: Sequence[str] | None = None) -> Tiebreak:
    """Break every tie in `priority`. `previous`: earlier standings, the
    previous round first; a standing that lacks one of a group's players is
    skipped for that group. `order`: the last resort, earliest = stays."""
    current = dict(priority)
    rank = {p: k for k, p in enumerate(order)} if order is not None else None
    levels: dict[int, list[str]] = {}
    for p, v in current.items():
        levels.setdefault(v, []).append(p)
    steps: list[Step] = []
    fallback: list[tuple[str, ...]] = []
    ordered: list[str] = []  # every player, lowest first
    for value in sorted(levels):
        ordered += _order_level(levels[value], value, previous, rank, steps, fallback)
    final: dict[str, int] = {}
    below: int | None = None
    for p in ordered:
        below = current[p] if below is None else max(current[p], below + 1)
        final[p] = below
    return Tiebreak(tuple((p, final[p]) for p in current), tuple((p, final[p] - current[p]) for p in current),
                    tuple(steps), tuple(fallback))


def _order_level(group: list[str], value: int, previous: Sequence[Mapping[str, int]],
                 rank: Mapping[str, int] | None, steps: list[Step], fallback: list[tuple[str, ...]]) -> list[str]:
    """The seed's rounds among one level's players alone: their order, lowest first."""
    local = dict.fromkeys(group, value)
    rnd = 0
    while True:
        tied: dict[int, list[str]] = {}
        for p in group:
            tied.setdefault(local[p], []).append(p)
        tied = {v: g for v, g in tied.items() if len(g) > 1}
        if not tied:
            return sorted(group, key=local.__getitem__)
        rnd += 1
        bumped: list[str] = []
        for v in sorted(tied):
            members = tied[v]
            stay, reason, depth = _who_stays(members, previous, rank)
            if reason == "order":
                fallback.append(tuple(members))
            steps.append(Step(rnd, v, tuple(members), stay, reason, depth))
            bumped.extend(p for p in members if p != stay)
        for p in bumped:
            local[p] += 1


def _who_stays(group: list[str], previous: Sequence[Mapping[str, int]],
               rank: Mapping[str, int] | None) -> tuple[str, str, int]:
    candidates = group
    for depth, standing in enumerate(previous):
        if not all(p in standing for p in candidates):
            continue
        low = min(standing[p] for p in candidates)
        candidates = [p for p in candidates if standing[p] == low]
        if len(candidates) == 1:
            return candidates[0], "lowest-previous", depth
    if rank is None or not all(p in rank for p in candidates):
        raise UnbreakableTie(f"{', '.join(sorted(group))} are tied, and so are {', '.join(sorted(candidates))} in "
                             "every earlier standing given: the seed has no rule for this")
    return min(candidates, key=rank.__getitem__), "order", len(previous)
