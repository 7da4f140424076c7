"""Payola's bribe resolution (issue 14): which order each unit obeys in one
movement phase, and who pays what. Pure: no I/O, no clock; chance only from
the DrawStream it is given. The rules, and every choice made where the
stored copies of them are silent: docs/payola.md.

The seam with the game by mail (payola-game) is /work/notes/payola_api.md:
check_sheet and choose_orders with the dataclasses below.

How a phase is resolved (rule numbers of "Rules to Payola Diplomacy"):
1. every accepted offer is split into bribes in sheet order: the non-direct
   kinds are converted to direct bribes plus a "wildcard" (3.2, as
   DPjudge's PayolaPower.addOffer does it), and a unit whose owner offered
   it no direct bribe gets the owner's "0 : H" after the owner's sheet;
2. the "?" of each owner's acceptance list is drawn once for the phase;
3. a pass: each unit's candidate orders are those with a direct bribe;
   each candidate's total is its direct bribes plus the wildcards it
   meets (5.1); the highest total wins, a tie goes to the order of the
   power listed earliest by the owner (5.2), that power's earliest offer
   (5.3), then the next power down the list (5.4), and only then to a
   draw from the stream;
4. a power whose accepted bribes cost more than its balance less its
   savings has every bribe cut by one (plateaus first kept) and the whole
   board is passed again, until nobody overspends (5.5);
5. each power pays its bribes to the orders issued (5.6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from judge.methods.payola import cuts
from judge.methods.payola import orders as board_mod
from judge.methods.payola.orders import Board, BoardError, OrderError
from judge.methods.payola.rules import NONE, Rules
from judge.methods.payola.sheet import Offer, Piece, Savings, SheetSyntaxError, iter_sheet

KINDS = ":!>@&"  # direct, negative, if it moves, if it does not, gift


class PayolaInputError(ValueError):
    """An input that cannot be resolved at all (unknown power, bad balance,
    bad acceptance list): not a sheet line, which is refused alone."""


@dataclass(frozen=True)
class Rejected:
    """A refused line of a sheet: the rest of the sheet stands."""

    power: str
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class CheckedOffer:
    """An offer line the map and the rules allow, in canonical orders."""

    line: int
    text: str
    kind: str  # one of KINDS
    unit: str  # "A PAR"
    orders: tuple[str, ...]  # canonical, first and alternatives
    pieces: tuple[Piece, ...]


@dataclass(frozen=True)
class SheetCheck:
    lines: tuple[CheckedOffer, ...]  # the accepted offers, in sheet order
    rejected: tuple[Rejected, ...]
    savings: int  # the "25 $" lines' total


# Issue 24: the work of a phase grows with the bribes its sheets make (each
# is converted, cut and passed; docs/payola.md, "Limits"). A sheet's lines
# are read up to this many bribes; the rest are refused before any of that.
# A heavy sheet of a 34-unit board (every own unit with two alternatives,
# wildcards on the neighbours) makes ~150.
MAX_SHEET_BRIBES = 300
# Refused lines cost their reading too (a parse, a map check): past this
# many, a sheet is not read further (its lines taken so far stand).
MAX_REFUSED = 50


def bribe_count(offer: Offer) -> int:
    """The bribes an offer line becomes (_convert): per "+" piece, one per
    order named, plus its wildcard (and a "!"'s hold). A repetition is one
    bribe counted several times, so it costs nothing more."""
    extra = 0 if offer.kind == ":" else 2 if offer.kind == "!" else 1
    return len(offer.pieces) * (len(offer.orders) + extra)


def check_sheet(*, variant: str, units: Mapping[str, str], power: str, text: str, rules: Rules = NONE,
                balance: int | None = None, dummies: Sequence[str] = (), first_line: int = 1) -> SheetCheck:
    """Parse and check one power's sheet against the map and the units on it
    (unit -> owner), under the game's `rules` (rules.py); `balance`: the
    power's, for LIMIT_OFFERS; `dummies`: the powers in civil disorder, for
    PAY_DUMMIES; `first_line`: the number of the text's first line in the
    mail it came in (a refusal names the mail's line, not "line 1")."""
    try:
        position = board_mod.board(variant, units)
    except BoardError as err:
        raise PayolaInputError(str(err)) from err
    return _check(position, _power(variant, power), text, rules, balance, dummies, first_line)


def _check(position: Board, power: str, text: str, rules: Rules = NONE, balance: int | None = None,
           dummies: Sequence[str] = (), first_line: int = 1) -> SheetCheck:
    lines: list[CheckedOffer] = []
    rejected: list[Rejected] = []
    savings = 0
    made = 0  # bribes the lines read so far make (MAX_SHEET_BRIBES)
    offered: set[str] = set()  # units offered to (DIRECT_ONLY, PAY_DUMMIES)
    committed = 0  # AgP the lines taken offer (LIMIT_OFFERS)
    for number, parsed in iter_sheet(text, lambda line: board_mod.dpjudge_form(position.variant, line), first_line):
        if len(rejected) >= MAX_REFUSED:
            rejected.append(Rejected(power, number, "", (
                f"{MAX_REFUSED} lines of this sheet were refused: the lines from here on are not read. Send the "
                "sheet again with those lines mended.")))
            break
        if isinstance(parsed, SheetSyntaxError):
            rejected.append(Rejected(power, number, parsed.text, parsed.render()))
            continue
        try:
            rule_form(parsed, rules)
        except OrderError as err:
            rejected.append(Rejected(power, number, parsed.text, str(err)))
            continue
        if isinstance(parsed, Savings):
            savings += parsed.amount
            continue
        made += bribe_count(parsed)
        if made > MAX_SHEET_BRIBES:
            rejected.append(Rejected(power, number, parsed.text, (
                f"a sheet makes at most {MAX_SHEET_BRIBES} bribes (each order an offer names, for each "
                f"amount joined by +); this line would make it {made}. The lines from here on are not read.")))
            break
        try:
            checked = _check_offer(position, power, parsed, rules, dummies)
            value = sum(piece.repeat * piece.amount for piece in parsed.pieces)
            _rule_sheet(checked, power, position, rules, offered, committed + value, balance, savings)
        except OrderError as err:
            rejected.append(Rejected(power, number, parsed.text, str(err)))
            continue
        offered.add(checked.unit)
        committed += value
        lines.append(checked)
    return SheetCheck(tuple(lines), tuple(rejected), savings)


def rule_form(parsed: Offer | Savings, rules: Rules) -> None:
    """The rules that forbid a form of line (DPjudge's parseOffer)."""
    if not rules.flags:
        return
    if isinstance(parsed, Savings):
        if "NO_SAVINGS" in rules:
            raise OrderError("savings ($) are not allowed in this game (NO_SAVINGS)")
        return
    if "#" in parsed.text and ("NO_PLATEAU" in rules or "NO_SAVINGS" in rules):
        raise OrderError(f"plateaus (#) are not allowed in this game "
                         f"({'NO_PLATEAU' if 'NO_PLATEAU' in rules else 'NO_SAVINGS'})")
    if "DIRECT_ONLY" in rules:
        if parsed.kind != ":" or len(parsed.orders) > 1:
            raise OrderError("only direct offers (:) of one order each are allowed in this game: no wildcards "
                             "(! > @ &) and no alternatives (|) (DIRECT_ONLY)")
        if len(parsed.pieces) > 1 or parsed.pieces[0].repeat > 1:
            raise OrderError("repetition (*) and augmentation (+) are not allowed in this game (DIRECT_ONLY)")


def _rule_sheet(checked: CheckedOffer, power: str, position: Board, rules: Rules, offered: set[str],
                committed: int, balance: int | None, savings: int) -> None:
    """The rules that look at the sheet so far (DPjudge's parseOffer)."""
    if not rules.flags:
        return
    own = position.owner(checked.unit) == power
    if "DIRECT_ONLY" in rules and checked.unit in offered:
        raise OrderError(f"one offer per unit in this game, and this sheet has one for {checked.unit} already "
                         "(DIRECT_ONLY)")
    if "PAY_DUMMIES" in rules and own and checked.unit in offered:
        raise OrderError(f"{checked.unit} is yours: one order for it, a 0 : line (PAY_DUMMIES)")
    if "LIMIT_OFFERS" in rules and balance is not None and committed > max(balance - savings, 0):
        raise OrderError(f"your offers would add up to {committed} AgP, more than the {max(balance - savings, 0)} "
                         f"AgP you hold{' less savings' if savings else ''} (LIMIT_OFFERS)")


def _check_offer(position: Board, power: str, offer: Offer, rules: Rules = NONE,
                 dummies: Sequence[str] = ()) -> CheckedOffer:
    unit = None
    canonical: list[str] = []
    for raw in offer.orders:
        text = position.resolve(raw, unit)
        unit = unit or " ".join(text.split()[:2])
        if text in canonical:
            # DPjudge (parseOffer): the Payola mailing list outlawed it.
            raise OrderError(f"the same order twice in one offer: {text}")
        canonical.append(text)
    assert unit is not None
    owner = position.owner(unit)
    if "PAY_DUMMIES" in rules:
        if owner == power and (offer.kind != ":" or len(canonical) > 1 or any(p.amount for p in offer.pieces)):
            raise OrderError(f"{unit} is yours: you order it with a 0 : line, no bribe (PAY_DUMMIES)")
        if owner != power and owner not in dummies:
            raise OrderError(f"{unit} is {owner}'s, who orders it: only dummies' units are bribed (PAY_DUMMIES)")
    if owner != power and "ZERO_FOREIGN" not in rules and any(p.amount == 0 for p in offer.pieces):
        # Rules 3.1 as DPjudge's pages/Questions quote it; parseOffer refuses it too.
        raise OrderError(f"a zero offer to a foreign unit: {unit} is {owner}'s")
    return CheckedOffer(offer.line, offer.text, offer.kind, unit, tuple(canonical), offer.pieces)


@dataclass(frozen=True)
class BribeResult:
    orders: dict[str, str]  # unit -> the order it obeys
    spent: dict[str, int]  # power -> AgP debited
    balances: dict[str, int]  # power -> balance after the debit
    reductions: dict[str, int]  # power -> how many times its offers were cut
    accepted: dict[str, list[dict]]  # power -> the bribes it paid: {"unit", "order", "amount"}
    rejected: list[Rejected]
    draws: list  # every draw taken from the stream, in order (for the record)
    random_order: dict[str, list[str]]  # the "?" expansions used, per power
    chart: dict = field(default_factory=dict)  # unit -> owner, order, every candidate's total by power
    passes: int = 1  # how often the board was resolved (1 + overspending rounds)
    savings: dict[str, int] = field(default_factory=dict)  # power -> AgP kept back
    profits: dict[str, int] = field(default_factory=dict)  # ZEROSUM: power -> what its units were paid
    dummy_holds: list[str] = field(default_factory=list)  # dummies' units held by the tie rule (DPjudge 3.5)


def _power(variant: str, name: Any) -> str:
    names = {n.upper(): n for n in board_mod.power_names(variant)}
    if not isinstance(name, str) or name.upper() not in names:
        raise PayolaInputError(f"{name!r} is not a power of {variant} ({', '.join(names.values())})")
    return names[name.upper()]


def check_acceptance(variant: str, power: str, text: str | None) -> str:
    """An acceptance list as stored: power initials, "?" for the powers it
    does not name (appended when it names fewer than all; DPjudge's
    checkAccept). None or empty: the power itself, then "?" (initAccept)."""
    letters = board_mod.power_letters(variant)
    if not text:
        return letters[_power(variant, power)] + "?"
    accept = "".join(str(text).split()).upper()
    known = set(letters.values()) | {"?"}
    for ch in accept:
        if ch not in known:
            raise PayolaInputError(f"acceptance list {text!r}: {ch} is no power's initial "
                                   f"({''.join(sorted(letters.values()))}, or ? for the rest)")
        if accept.count(ch) > 1:
            raise PayolaInputError(f"acceptance list {text!r}: {ch} appears more than once")
    if "?" not in accept and len(accept) < len(letters):
        accept += "?"
    return accept


@dataclass
class _Bribe:
    """One bribe after conversion (3.2): a direct bribe for `order`, or a
    wildcard of kind "!", ">", "@" or "&" that adds to the unit's other
    candidate orders. Mutable only inside choose_orders (reductions)."""

    power: str
    seq: int  # place in its power's converted sheet (5.3)
    unit: str
    kind: str  # ":" direct, or the wildcard's kind
    order: str | None  # a direct bribe's order
    excluded: tuple[str, ...]  # a negative bribe's orders
    amount: int  # of each copy
    plateau: int
    line: int  # the sheet line it came from (0: the owner's default hold)
    count: int = 1  # "3*5" is three like bribes, cut alike: kept as one, counted thrice

    @property
    def value(self) -> int:
        return self.amount * self.count


def _is_move(order: str) -> bool:
    return order.split()[2] == "-"


def _meets(bribe: _Bribe, order: str) -> bool:
    """Whether a wildcard's money goes to `order` (DPjudge, bestOffer)."""
    if bribe.kind == "!":
        return order not in bribe.excluded
    if bribe.kind == ">":
        return _is_move(order)
    if bribe.kind == "@":
        return not _is_move(order)
    return True  # "&"


def _convert(power: str, offers: Sequence[CheckedOffer]) -> list[_Bribe]:
    """A power's accepted offers -> its bribes in sheet order (3.2 as
    DPjudge's PayolaPower.addOffer converts them):
    - "!": a direct 0 AgP bribe to hold (unless the offer names the hold
      itself), then the negative bribe;
    - ":", ">", "@", "&": a direct bribe per order named, of the amount when
      the wildcard would not pay that order anyway, else of 0 (so that the
      order is a candidate); then the wildcard itself (not for ":")."""
    out: list[_Bribe] = []

    def add(**kw: Any) -> None:
        out.append(_Bribe(power=power, seq=len(out), **kw))

    for offer in offers:
        hold = f"{offer.unit} H"
        for piece in offer.pieces:
            # The copies of a repetition stand together in the sheet and are
            # cut alike: one bribe counted `repeat` times is the same thing.
            amount, plateau, count = piece.amount, piece.plateau, piece.repeat
            if offer.kind == "!":
                if hold not in offer.orders:
                    add(unit=offer.unit, kind=":", order=hold, excluded=(), amount=0, plateau=0, line=offer.line)
                add(unit=offer.unit, kind="!", order=None, excluded=offer.orders, amount=amount,
                    plateau=plateau, line=offer.line, count=count)
                continue
            for order in offer.orders:
                pays = (offer.kind == ":" or (offer.kind == ">" and not _is_move(order))
                        or (offer.kind == "@" and _is_move(order)))
                add(unit=offer.unit, kind=":", order=order, excluded=(), amount=amount if pays else 0,
                    plateau=plateau if pays else 0, line=offer.line, count=count)
            if offer.kind != ":":
                add(unit=offer.unit, kind=offer.kind, order=None, excluded=offer.orders, amount=amount,
                    plateau=plateau, line=offer.line, count=count)
    return out


@dataclass
class _Candidate:
    order: str
    bribes: list[_Bribe]  # every bribe whose money goes to this order
    key: tuple[int, ...]  # 5.2-5.4: per power of the owner's list, its earliest bribe's seq (or INF)


_INF = 1 << 62


def _full_acceptance(variant: str, owner: str, accept: str, given: Sequence[str] | None, stream: Any,
                     names: list[str]) -> tuple[list[str], list[str] | None]:
    letters = board_mod.power_letters(variant)
    by_letter = {v: k for k, v in letters.items()}
    listed = [by_letter[ch] for ch in accept if ch != "?"]
    rest = [n for n in names if n not in listed]
    if "?" not in accept:
        if given:
            raise PayolaInputError(f"random_order for {owner}: its list {accept} leaves nothing to chance")
        return listed, None
    if given is not None:
        given = [_power(variant, g) for g in given]
        if sorted(given) != sorted(rest):
            raise PayolaInputError(f"random_order for {owner}: {given} is not an order of the powers its list "
                                   f"leaves to chance ({', '.join(rest) or 'none'})")
        drawn = list(given)
    else:
        # Drawn once per phase (issue 14), from the powers in the map's order:
        # a uniform shuffle, one recorded draw per place.
        remaining, drawn = list(rest), []
        while remaining:
            pick = stream.choice(remaining, what="acceptance ?", power=owner, place=len(drawn) + 1)
            drawn.append(pick)
            remaining.remove(pick)
    at = accept.index("?")
    before = [by_letter[ch] for ch in accept[:at]]
    after = [by_letter[ch] for ch in accept[at + 1:]]
    return before + drawn + after, drawn


def choose_orders(*, variant: str, units: Mapping[str, str], balances: Mapping[str, int],
                  acceptance: Mapping[str, str], sheets: Mapping[str, str], stream: Any,
                  random_order: Mapping[str, Sequence[str]] | None = None, rules: Rules = NONE,
                  dummies: Sequence[str] = ()) -> BribeResult:
    """Pure: which order each unit obeys this movement phase, and who pays
    what. `stream` is a judge.rng.DrawStream; the result does not depend on
    the order of any mapping given (powers are taken in the map's order).
    `rules`: the DPjudge rules in force (rules.py); `dummies`: the powers in
    civil disorder (they send no sheet; their acceptance list is "?", and a
    tie for one of their units between different powers holds it)."""
    try:
        position = board_mod.board(variant, units)
    except BoardError as err:
        raise PayolaInputError(str(err)) from err
    texts: dict[str, str] = {}
    for name, text in sheets.items():
        if not isinstance(text, str):
            raise PayolaInputError(f"sheet of {name}: a text, not {text!r}")
        texts[_power(variant, name)] = text
    idle = sorted({_power(variant, d) for d in dummies})
    sending = [d for d in idle if texts.get(d, "").strip()]
    if sending:
        raise PayolaInputError(f"{', '.join(sending)}: a dummy sends no offer sheet")
    balance = {_power(variant, k): v for k, v in balances.items()}
    checks = {name: _check(position, name, texts.get(name, ""), rules, balance.get(name, 0), idle)
              for name in board_mod.power_names(variant)}
    return resolve_checked(position=position, checks=checks, balances=balances, acceptance=acceptance,
                           stream=stream, random_order=random_order, rules=rules, dummies=idle)


def resolve_checked(*, position: Board, checks: Mapping[str, SheetCheck], balances: Mapping[str, int],
                    acceptance: Mapping[str, str], stream: Any,
                    random_order: Mapping[str, Sequence[str]] | None = None,
                    stepwise: bool = False, rules: Rules = NONE, dummies: Sequence[str] = ()) -> BribeResult:
    """choose_orders from sheets already checked against `position` (the
    game by mail checks each sheet as it comes): power -> its SheetCheck.
    `stepwise`: the rules' way to the letter, every unit passed again after
    each single cut (the tests compare the fast way with it)."""
    variant = position.variant
    names = board_mod.power_names(variant)
    first_draw = len(stream.draws)
    balance: dict[str, int] = {n: 0 for n in names}
    for name, value in balances.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PayolaInputError(f"balance of {name}: a whole number of AgP, at least 0, not {value!r}")
        balance[_power(variant, name)] = value
    idle = {_power(variant, d) for d in dummies}
    accepts = {n: check_acceptance(variant, n, None) for n in names}
    for name, text in acceptance.items():
        accepts[_power(variant, name)] = check_acceptance(variant, name, text)
    for name in idle:
        # DPjudge (pages/Rules 3.5, initAccept): a dummy's acceptance list is not used: "?" alone.
        accepts[name] = "?"
    given = {_power(variant, k): v for k, v in (random_order or {}).items()}
    for name, seq in given.items():
        if not isinstance(seq, (list, tuple)):
            raise PayolaInputError(f"random_order for {name}: a list of powers")
    empty = SheetCheck((), (), 0)
    checks = {_power(variant, k): v for k, v in checks.items()}

    # 1. Sheets converted, in the map's order of powers.
    rejected: list[Rejected] = []
    savings: dict[str, int] = {}
    bribes: dict[str, list[_Bribe]] = {}
    for name in names:
        check = checks.get(name, empty)
        rejected.extend(check.rejected)
        savings[name] = check.savings
        bribes[name] = _convert(name, check.lines)
    # The owner's default "0 : H" for a unit it offered no direct bribe (3.2;
    # DPjudge's addDefaults), after its sheet.
    units_of: dict[str, list[str]] = {n: [] for n in names}
    for unit in sorted(position.units):
        units_of[position.owner(unit)].append(unit)
    for name in names:
        direct = {b.unit for b in bribes[name] if b.kind == ":"}
        for unit in units_of[name]:
            if unit not in direct:
                bribes[name].append(_Bribe(name, len(bribes[name]), unit, ":", f"{unit} H", (), 0, 0, 0))

    # 2. Each owner's list, "?" drawn once for the phase (only owners of units need one).
    ranks: dict[str, dict[str, int]] = {}
    used_random: dict[str, list[str]] = {}
    for name in names:
        if not units_of[name] and name not in given:
            continue
        full, drawn = _full_acceptance(variant, name, accepts[name], given.get(name), stream, names)
        ranks[name] = {p: i for i, p in enumerate(full)}
        if drawn is not None:
            used_random[name] = drawn

    # The candidates of each unit and the bribes going to each: fixed for the phase.
    per_unit: dict[str, list[_Bribe]] = {u: [] for u in position.units}
    for name in names:
        for b in bribes[name]:
            per_unit[b.unit].append(b)
    board: list[tuple[str, list[_Candidate]]] = []
    for unit in sorted(position.units):
        owner = position.owner(unit)
        rank = ranks[owner]
        direct_orders = list(dict.fromkeys(b.order for b in per_unit[unit] if b.kind == ":"))
        wild = [b for b in per_unit[unit] if b.kind != ":"]
        candidates = []
        for order in direct_orders:
            going = [b for b in per_unit[unit] if b.kind == ":" and b.order == order]
            going += [b for b in wild if _meets(b, order)]
            key = [_INF] * len(rank)
            for b in going:
                i = rank.get(b.power, len(rank) - 1)
                key[i] = min(key[i], b.seq)
            candidates.append(_Candidate(order, going, tuple(key)))
        # Best tie-break first; equal keys stay together (only a draw parts them).
        candidates.sort(key=lambda c: (c.key, c.order))
        board.append((unit, candidates))

    # 3-4. Passes until nobody overspends.
    liquid = {n: max(balance[n] - savings[n], 0) for n in names}
    tie_choice: dict[tuple[str, tuple[str, ...]], str] = {}
    held: dict[str, bool] = {}  # a dummy's unit held by DPjudge's tie rule (3.5), as the last pass left it
    dummy_units = frozenset(u for u, (unit, _) in enumerate(board) if position.owner(unit) in idle)

    def pick(unit: str, candidates: list[_Candidate], totals: list[int]) -> _Candidate:
        if position.owner(unit) in idle:
            hold = _dummy_hold(unit, candidates, totals)
            held[unit] = hold is not None
            if hold is not None:
                return hold
        return _winner(unit, candidates, totals, stream, tie_choice)

    charge = charge_run = None
    if "EBAYOLA" in rules:
        def charge(unit: str, chosen: _Candidate, totals: list[int], paid: Mapping[str, int],
                   plateau: Mapping[str, int]) -> dict[str, int]:
            if held.get(unit):
                return dict(paid)  # held by the dummy rule: no price was won (docs/payola.md)
            return _ebayola(chosen, totals, paid, {} if "PUBLIC_TOTALS" in rules else plateau,
                            ranks[position.owner(unit)])

        def charge_run(unit: str, chosen: _Candidate, paid: Mapping[str, int], plateau: Mapping[str, int],
                       falls: Mapping[str, int], runner: int | None, runner_fall: int) -> tuple[int, dict[str, int]]:
            if held.get(unit):
                return cuts.INF, dict(falls)
            return _ebayola_run(paid, {} if "PUBLIC_TOTALS" in rules else plateau, falls, runner or 0,
                                runner_fall, ranks[position.owner(unit)])

    if stepwise:
        winners, reductions, passes, paid_by = _one_cut_at_a_time(board, bribes, names, liquid, pick, charge)
    else:
        winners, reductions, passes, paid_by = cuts.passes(board, bribes, names, liquid, pick, charge=charge,
                                                           dummies=dummy_units, charge_run=charge_run)

    # 5. The debit: what each power's bribes to the issued orders come to
    # (under EBAYOLA, as rebated).
    accepted: dict[str, list[dict]] = {n: [] for n in names}
    profits: dict[str, int] = {n: 0 for n in names}
    chart: dict[str, Any] = {}
    for unit, candidates in board:
        best = winners[unit]
        paid = paid_by[unit]
        for name in names:
            if name in paid:
                accepted[name].append({"unit": unit, "order": best.order, "amount": paid[name]})
        owner = position.owner(unit)
        if owner not in idle:
            profits[owner] += sum(paid.values())  # ZEROSUM: what a unit is paid goes to its owner
        chart[unit] = {
            "owner": owner,
            "order": best.order,
            "paid": sum(paid.values()),
            "offers": [{"order": c.order, "total": sum(b.value for b in c.bribes),
                        "by": _by_power(c.bribes, names)} for c in candidates],
        }
        if held.get(unit):
            chart[unit]["held"] = True  # a tie between different powers for a dummy's unit (DPjudge 3.5)
    spent = {n: sum(paid_by[u].get(n, 0) for u, _ in board) for n in names}
    return BribeResult(
        orders={u: winners[u].order for u, _ in board},
        spent=spent,
        balances={n: balance[n] - spent[n] for n in names},
        reductions=reductions,
        accepted=accepted,
        rejected=rejected,
        draws=stream.records()[first_draw:],
        random_order=used_random,
        chart=chart,
        passes=passes,
        savings=savings,
        profits=profits if "ZEROSUM" in rules else {},
        dummy_holds=sorted(u for u, h in held.items() if h),
    )


def _by_power(bribes: list[_Bribe], names: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for b in bribes:
        out[b.power] = out.get(b.power, 0) + b.value
    return {n: out[n] for n in names if n in out}


def _winner(unit: str, candidates: list[_Candidate], totals: list[int], stream: Any,
            tie_choice: dict[tuple[str, tuple[str, ...]], str]) -> _Candidate:
    """5.1-5.4 over candidates sorted by tie-break key, with their totals; a
    tie that no rule breaks (equal keys) is drawn from the stream, once per
    phase for the same unit and the same tied orders."""
    top = max(totals)
    best = [c for c, total in zip(candidates, totals) if total == top]
    tied = [c for c in best if c.key == best[0].key]
    if len(tied) == 1:
        return tied[0]
    options = tuple(c.order for c in tied)  # sorted by order text: canonical
    memo = (unit, options)
    if memo not in tie_choice:
        tie_choice[memo] = stream.choice(list(options), what="unbroken tie", unit=unit)
    return next(c for c in tied if c.order == tie_choice[memo])


def _dummy_hold(unit: str, candidates: list[_Candidate], totals: list[int]) -> _Candidate | None:
    """DPjudge's rule for a dummy's unit (pages/Rules 3.5, "even in games
    that do not use the PAY_DUMMIES rule"; bestOffer): a tie at the top
    between orders offered for by different powers, or different sets of
    powers, is decided by holding the unit. The hold is the unit's hold
    order, paid by whoever offered for it (its owner's default 0 : H at
    least). None: no such tie, the usual rules decide."""
    top = max(totals)
    best = [c for c, total in zip(candidates, totals) if total == top]
    if len(best) < 2:
        return None
    payers = {frozenset(i for i, seq in enumerate(c.key) if seq != _INF) for c in best}
    if len(payers) < 2:
        return None
    return next(c for c in candidates if c.order == f"{unit} H")


def _ebayola(chosen: _Candidate, totals: list[int], paid: Mapping[str, int], plateau: Mapping[str, int],
             rank: Mapping[str, int]) -> dict[str, int]:
    """EBAYOLA (DPjudge's bestOffer): the winning bribe costs one AgP more
    than the best losing one; the saving goes to its payers in the order of
    the unit owner's acceptance list, each paying no less than its plateau
    (no plateau under PUBLIC_TOTALS). Never more than offered: DPjudge's
    arithmetic would charge a tie's winner one AgP more than its offer
    (docs/payola.md)."""
    total = sum(paid.values())
    others = sorted(totals, reverse=True)[1:]
    over = max(total - 1 - max(others[0] if others else 0, 0), 0)
    out = dict(paid)
    for payer in sorted((p for p, a in paid.items() if a), key=lambda p: rank.get(p, len(rank))):
        rebate = min(out[payer] - plateau.get(payer, 0), over)
        if rebate > 0:
            out[payer] -= rebate
            over -= rebate
    return out


def _ebayola_run(paid: Mapping[str, int], plateau: Mapping[str, int], falls: Mapping[str, int], runner: int,
                 runner_fall: int, rank: Mapping[str, int]) -> tuple[int, dict[str, int]]:
    """_ebayola's price as the cuts go on: each power's part of it falls by
    a fixed amount a cut (returned) for as many cuts as no branch of its
    arithmetic changes (the saving stays above 0 or at 0, each payer's
    rebate stays its room above its plateau or what is left of the saving):
    (that many cuts, the falls). `falls`: what each power's offer loses a
    cut; `runner`, `runner_fall`: the best losing total and its fall."""
    inf = cuts.INF
    out = dict(falls)
    total, d_total = sum(paid.values()), sum(falls.values())
    rem, d_rem = total - 1 - runner, d_total - runner_fall  # the saving: rem - d_rem * j after j cuts
    if rem <= 0:
        # No saving: nothing is rebated while the winner stays within one AgP of the best losing offer.
        return (-rem // -d_rem + 1 if d_rem < 0 else inf), out
    k = -(-rem // d_rem) if d_rem > 0 else inf  # the cut at which the saving is gone
    for payer in sorted((p for p, a in paid.items() if a), key=lambda p: rank.get(p, len(rank))):
        if rem == d_rem == 0:
            break  # nothing left to rebate, for the whole run: the others pay their offers
        room, d_room = paid[payer] - plateau.get(payer, 0), falls.get(payer, 0)
        if room < rem:
            # It pays its plateau (no fall) while its room stays at most the saving left.
            out[payer] = 0
            if d_rem - d_room > 0:
                k = min(k, (rem - room) // (d_rem - d_room) + 1)
            rem, d_rem = rem - room, d_rem - d_room
        else:
            # It takes what is left of the saving while its room stays at least that.
            out[payer] = d_room - d_rem
            if d_room - d_rem > 0:
                k = min(k, (room - rem) // (d_room - d_rem) + 1)
            rem = d_rem = 0
    return k, out


def _one_cut_at_a_time(board: list[tuple[str, list[_Candidate]]], bribes: Mapping[str, list[_Bribe]],
                       names: list[str], liquid: Mapping[str, int], pick: Any, charge: Any = None
                       ) -> tuple[dict[str, _Candidate], dict[str, int], int, dict[str, dict[str, int]]]:
    """The rules' way to the letter (DPjudge's determineOrders): every unit
    chooses, every overspending power is cut once, again. What cuts.passes
    must equal (tests/test_payola_property.py)."""
    reductions = {n: 0 for n in names}
    passes = 0
    while True:
        passes += 1
        winners: dict[str, _Candidate] = {}
        paid_by: dict[str, dict[str, int]] = {}
        for unit, candidates in board:
            totals = [sum(b.value for b in c.bribes) for c in candidates]
            best = winners[unit] = pick(unit, candidates, totals)
            paid = _by_power(best.bribes, names)
            if charge is not None:
                plateau: dict[str, int] = {}
                for b in best.bribes:
                    plateau[b.power] = plateau.get(b.power, 0) + b.plateau * b.count
                paid = charge(unit, best, totals, paid, plateau)
            paid_by[unit] = paid
        cost = {n: 0 for n in names}
        for paid in paid_by.values():
            for name, amount in paid.items():
                cost[name] += amount
        over = [n for n in names if cost[n] > liquid[n]]
        if not over:
            return winners, reductions, passes, paid_by
        for name in over:
            reductions[name] += 1
            _reduce(bribes[name])


def _reduce(bribes: list[_Bribe]) -> None:
    """One cut of every bribe of an overspending power (5.5, DPjudge's
    PayolaPower.reduce): each bribe above its plateau loses one AgP; when
    all are at their plateaus, the plateaus are forgotten and all lose one."""
    above = [b for b in bribes if b.amount > b.plateau]
    if above:
        for b in above:
            b.amount -= 1
        return
    for b in bribes:
        b.plateau = 0
        if b.amount > 0:
            b.amount -= 1
