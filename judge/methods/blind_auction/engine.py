"""PlayDiplomacy's Blind Auction (PbF procedure v2.0.a), as pure functions.

Rules: ../shared/seeds/blind-auction-playdip.txt. Every player bids on every
power; the highest remaining bid wins its power, step by step. Ties are broken
by the injected DrawStream: first uniformly among the powers tied for the
highest bid, then uniformly among that power's tied bidders. Nothing here does
I/O, reads a clock or uses global randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from judge.rng import DrawStream
from judge.syntax.nodes import BidEntry
from judge.variants import PowerList

NAME = "blind-auction"


class ParamError(ValueError):
    """Parameters with which no auction can be run."""


@dataclass(frozen=True)
class Params:
    T: int  # total points a player may bid
    M: int  # maximum bid on one power
    D: int  # default bid on every power for "No Preference"

    def as_dict(self) -> dict[str, int]:
        return {"T": self.T, "M": self.M, "D": self.D}


def default_params(U: int) -> Params:
    """The seed's customary values: T = 20U for up to 10 powers, else a round
    number above 2U^2; M = T/2; D = 1."""
    if U <= 10 and 20 * U > 2 * U * U:
        T = 20 * U
    else:
        T = (2 * U * U // 100 + 1) * 100
    return Params(T=T, M=T // 2, D=1)


def check_params(U: int, params: Params) -> list[str]:
    """Refuse impossible parameters (ParamError); return warnings where the
    parameters break the seed's recommendations."""
    T, M, D = params.T, params.M, params.D
    for label, v in (("T", T), ("M", M), ("D", D)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ParamError(f"{label} must be a positive whole number, not {v!r}")
    if U < 1:
        raise ParamError("the auction needs at least one power")
    if not (D == 1 or (T % U == 0 and D == T // U)):
        hint = f" or T/U = {T // U}" if T % U == 0 else " (T/U is not a whole number here)"
        raise ParamError(f"D must be 1{hint}, not {D}")
    if M < U:
        raise ParamError(f"M = {M} is below U = {U}: nobody could bid {U} different amounts")
    least = U * (U + 1) // 2
    if T < least:
        raise ParamError(f"T = {T} is below 1+2+...+U = {least}: no valid bid list exists")
    if M > T:
        raise ParamError(f"M = {M} is above T = {T}")
    warnings = []
    if T <= 2 * U * U:
        warnings.append(f"T should be a round number greater than 2*U^2 = {2 * U * U}; it is {T}.")
    if abs(2 * M - T) > T // 5:
        warnings.append(f"M should be about half of T (T/2 = {T / 2:g}); it is {M}.")
    room = T - (U * U - U) // 2
    if 4 * M > 3 * room:
        warnings.append(
            f"M should be well under T-(U^2-U)/2 = {room} (at most 3/4 of it, {3 * room // 4}); it is {M}."
        )
    return warnings


@dataclass(frozen=True)
class Violation:
    rule: str  # short id: unknown-power, missing-power, duplicate-power, whole-number, ...
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "line": self.line}


@dataclass(frozen=True)
class BidList:
    """A valid bid list (power name -> points), or No Preference (bids None)."""

    bids: Mapping[str, int] | None

    @property
    def no_preference(self) -> bool:
        return self.bids is None

    def as_json(self) -> dict[str, int] | None:
        return None if self.bids is None else dict(self.bids)


NO_PREFERENCE = BidList(None)


@dataclass(frozen=True)
class Checked:
    bids: BidList | None
    violations: tuple[Violation, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations


def _where(e: BidEntry) -> str:
    return f"line {e.line}: " if e.line is not None else ""


def validate(powers: PowerList, params: Params, entries: Sequence[BidEntry]) -> Checked:
    """Check a bid list against every rule of the seed at once."""
    v: list[Violation] = []
    seen: dict[str, BidEntry] = {}
    amounts: dict[str, int] = {}
    for e in entries:
        p = powers.lookup(e.power)
        if p is None:
            v.append(Violation(
                "unknown-power",
                f"{_where(e)}{e.power!r} is not a power of this game; the powers are {powers.describe()}",
                e.line,
            ))
            continue
        if p.name in seen:
            v.append(Violation(
                "duplicate-power",
                f"{_where(e)}{p.name} has a bid already (line {seen[p.name].line}); bid once on each power",
                e.line,
            ))
            continue
        seen[p.name] = e
        try:
            amount = int(e.amount, 10)
        except ValueError:
            v.append(Violation(
                "whole-number", f"{_where(e)}the bid on {p.name}, {e.amount!r}, is not a whole number", e.line
            ))
            continue
        if amount < 1:
            v.append(Violation(
                "at-least-one", f"{_where(e)}the bid on {p.name} is {amount}; bid at least 1 point on every power",
                e.line,
            ))
        elif amount > params.M:
            v.append(Violation(
                "max-bid", f"{_where(e)}the bid on {p.name} is {amount}; no bid may exceed M = {params.M}", e.line
            ))
        amounts[p.name] = amount
    missing = [p.name for p in powers if p.name not in seen]
    if missing:
        v.append(Violation("missing-power", f"no bid on {', '.join(missing)}; bid on every one of the {len(powers)} powers"))
    total = sum(amounts.values())
    if total > params.T:
        v.append(Violation("total", f"the bids add up to {total}; the total must not exceed T = {params.T}"))
    by_amount: dict[int, list[str]] = {}
    for name, a in amounts.items():
        by_amount.setdefault(a, []).append(name)
    for a, names in sorted(by_amount.items(), reverse=True):
        if len(names) > 1:
            v.append(Violation(
                "unique",
                f"{' and '.join(names)} {'both' if len(names) == 2 else 'all'} have {a} points; "
                "each bid must be a different number",
            ))
    if v:
        return Checked(None, tuple(v))
    ordered = {p.name: amounts[p.name] for p in powers}
    return Checked(BidList(ordered))


def effective_bids(bids: BidList, powers: PowerList, params: Params) -> dict[str, int]:
    """The bids a list stands for: No Preference is D on every power."""
    if bids.bids is None:
        return {p.name: params.D for p in powers}
    return {p.name: bids.bids[p.name] for p in powers}


def player_order(players: Sequence[str]) -> list[str]:
    """The canonical order of players in draws and charts (never input order)."""
    return sorted(players, key=lambda s: (s.casefold(), s))


@dataclass
class Step:
    number: int
    bid: int
    power: str
    player: str
    tied_powers: list[str]
    tied_players: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.number,
            "bid": self.bid,
            "power": self.power,
            "player": self.player,
            "tied_powers": self.tied_powers,
            "tied_players": self.tied_players,
        }


@dataclass
class Outcome:
    assignment: dict[str, str]  # player -> power
    unassigned: list[str]  # powers nobody got (fewer players than powers)
    chart: dict[str, dict[str, int]]  # player -> power -> bid actually used
    no_preference: list[str]  # players who stood as No Preference
    steps: list[Step] = field(default_factory=list)
    draws: list[dict[str, Any]] = field(default_factory=list)


def resolve(
    powers: PowerList,
    params: Params,
    submissions: Mapping[str, BidList],
    stream: DrawStream,
) -> Outcome:
    """Resolve the auction. `submissions` holds one BidList per player (a
    player who sent nothing must be decided by the GM before this is called)."""
    if len(submissions) > len(powers):
        raise ParamError(f"{len(submissions)} players for {len(powers)} powers")
    names = [p.name for p in powers]
    players = player_order(list(submissions))
    chart = {pl: effective_bids(submissions[pl], powers, params) for pl in players}
    # All bids, highest first; power and player order within a value is the
    # canonical one, so the tied sets drawn from never depend on the input.
    triples = sorted(
        ((chart[pl][w], wi, pi) for pi, pl in enumerate(players) for wi, w in enumerate(names)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    power_index = {w: k for k, w in enumerate(names)}
    player_index = {pl: k for k, pl in enumerate(players)}
    power_taken = [False] * len(names)
    player_done = [False] * len(players)
    assignment: dict[str, str] = {}
    steps: list[Step] = []
    i = 0
    n = len(triples)
    while len(assignment) < len(players):
        while i < n and (power_taken[triples[i][1]] or player_done[triples[i][2]]):
            i += 1
        bid = triples[i][0]
        group = []
        j = i
        while j < n and triples[j][0] == bid:
            _, wi, pi = triples[j]
            if not power_taken[wi] and not player_done[pi]:
                group.append((wi, pi))
            j += 1
        tied_powers = [names[w] for w in sorted({wi for wi, _ in group})]
        step_no = len(steps) + 1
        power = stream.choice(tied_powers, what="power", step=step_no, bid=bid)
        wi = power_index[power]
        tied_players = [players[p] for p in sorted(pi for w, pi in group if w == wi)]
        player = stream.choice(tied_players, what="player", step=step_no, bid=bid, power=power)
        power_taken[wi] = True
        player_done[player_index[player]] = True
        assignment[player] = power
        steps.append(Step(step_no, bid, power, player, tied_powers, tied_players))
    return Outcome(
        assignment={pl: assignment[pl] for pl in players},
        unassigned=[w for k, w in enumerate(names) if not power_taken[k]],
        chart=chart,
        no_preference=[pl for pl in players if submissions[pl].no_preference],
        steps=steps,
        draws=stream.records(),
    )
