"""The MM2 priority tiebreak, as a pure function.

The seed's words: "If there are multiple players with the same priority, all
tied players except the single player who gained the most priority from this
tiebreak gain 1 priority. If there is no such player, all tied players
except the player who had the lowest priority in the previous round gain 1
priority. Repeat the above two steps until all ties are broken."

Read here as:
- a round looks at every group of players sharing a priority, all groups at
  once (on the priorities as they stood when the round began), so the order
  in which groups are looked at cannot matter;
- in each group one player stays: the single player with the largest gain so
  far in this tiebreak if there is one, else the player with the lowest
  priority in the previous round (of the season: the standings this game
  started from); everyone else in the group gains 1;
- where the previous round is tied too, the round before it decides, and so
  on through the standings given; where all of them are tied, the seed has
  no rule. Then the player listed first in `order` (the game's roster) stays
  and the group is reported in `Tiebreak.fallback`, so that the GM is told.
  Without an order, UnbreakableTie is raised. Nothing is drawn at random.

It always ends: the lowest priority at which a tie remains rises by at least
1 every round (one player stays there, nobody moves onto it), and no value
passes the highest priority plus the number of players.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence


class UnbreakableTie(ValueError):
    """Players tied in every standing given, and no order to fall back on."""


@dataclass(frozen=True)
class Step:
    """One group of one round: at `priority`, `stayed` stayed, the rest gained 1."""

    round: int
    priority: int
    group: tuple[str, ...]
    stayed: str
    reason: str  # "most-gained", "lowest-previous" (with `depth`), or "order"
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
    gains = dict.fromkeys(current, 0)
    rank = {p: k for k, p in enumerate(order)} if order is not None else None
    steps: list[Step] = []
    fallback: list[tuple[str, ...]] = []
    rnd = 0
    while True:
        groups: dict[int, list[str]] = {}
        for p, v in current.items():
            groups.setdefault(v, []).append(p)
        tied = {v: g for v, g in groups.items() if len(g) > 1}
        if not tied:
            break
        rnd += 1
        bumped: list[str] = []
        for value in sorted(tied):
            group = tied[value]
            stay, reason, depth = _who_stays(group, gains, previous, rank)
            if reason == "order":
                fallback.append(tuple(group))
            steps.append(Step(rnd, value, tuple(group), stay, reason, depth))
            bumped.extend(p for p in group if p != stay)
        for p in bumped:
            current[p] += 1
            gains[p] += 1
    return Tiebreak(tuple(current.items()), tuple(gains.items()), tuple(steps), tuple(fallback))


def _who_stays(group: list[str], gains: Mapping[str, int], previous: Sequence[Mapping[str, int]],
               rank: Mapping[str, int] | None) -> tuple[str, str, int]:
    most = max(gains[p] for p in group)
    top = [p for p in group if gains[p] == most]
    if len(top) == 1:
        return top[0], "most-gained", 0
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
