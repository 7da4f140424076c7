"""Payola's bank accounts (rules section 2): pure, every change a line.

A Ledger is the balances and every line that made them, in order; nothing
changes a balance without a line, so a player's statement is the lines
with their power, and the store keeps the ledger whole (game.py keeps it in
games.method_state). Balances are whole AgP and never negative: a debit or
transfer beyond the balance raises LedgerError and changes nothing.

Income (rules 2.1 and DPjudge's PayolaPower.income by default): the n-th
centre a power owns is worth (victory centres - n) AgP, never less than 0.
On the standard map (18 to win) that is 17 for the first, 16 for the
second...: 17, 33, 48, 62, 75, 87, 98, 108, 117, 125, 132, 138, 143, 147,
150, 152, 153 for 1 to 17 centres, the table of the formal rules.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Mapping, Sequence

from judge.methods.payola.rules import NONE, Rules


class LedgerError(ValueError):
    """A change the accounts refuse (more than the balance, a negative or
    zero amount, an unknown power): nothing was changed."""


@dataclass(frozen=True)
class Line:
    phase: str  # the game phase it belongs to (S1901M...)
    power: str
    kind: str  # "start", "income", "bribes", "transfer out", "transfer in"; and by the rules:
    # "no hoarding" (NO_HOARDING), "bribe profits", "capture", "loss" (ZEROSUM)
    amount: int  # signed: what it added to the balance
    balance: int  # the balance after it
    note: str = ""  # the other power of a transfer, the centres of an income


@dataclass(frozen=True)
class Ledger:
    balances: tuple[tuple[str, int], ...]
    lines: tuple[Line, ...] = ()

    def balance(self, power: str) -> int:
        return dict(self.balances)[power]

    def as_dict(self) -> dict[str, int]:
        return dict(self.balances)

    def lines_of(self, power: str) -> list[Line]:
        return [x for x in self.lines if x.power == power]

    def _with(self, changes: list[tuple[str, str, int, str]], phase: str) -> Ledger:
        """Apply (power, kind, amount, note) changes all or none."""
        bal = dict(self.balances)
        lines = list(self.lines)
        for power, kind, amount, note in changes:
            if power not in bal:
                raise LedgerError(f"{power} has no account")
            if bal[power] + amount < 0:
                raise LedgerError(f"{power} has {bal[power]} AgP, not {-amount}")
            bal[power] += amount
            lines.append(Line(phase, power, kind, amount, bal[power], note))
        return replace(self, balances=tuple(bal.items()), lines=tuple(lines))


def income(centres: int, win: int = 18, *, rules: Rules = NONE, owned: Sequence[str] = (), powers: int = 7) -> int:
    """A year's tax income from `centres` supply centres (module docstring),
    or as the rules have it (DPjudge's PayolaPower.income, the first that
    applies): ZEROSUM, none (its money comes from bribes and captures:
    credit_income); TAX n, n a centre; FLAT_TAX, as many AgP a centre as
    the map has powers; TAX per centre, the `owned` centres' values. CAP n
    caps it."""
    count = max(0, centres)
    if "ZEROSUM" in rules:
        bux = 0
    elif rules.tax is not None:
        bux = count * rules.tax
    elif "FLAT_TAX" in rules:
        bux = count * powers
    elif rules.taxes:
        values = dict(rules.taxes)
        bux = sum(values.get(c.upper(), 0) for c in owned)
    else:
        bux = sum(max(0, win - n) for n in range(1, count + 1))
    return bux if rules.cap is None else min(rules.cap, bux)


def open_accounts(start: Mapping[str, int], phase: str) -> Ledger:
    """Every power's account with its starting balance."""
    for power, amount in start.items():
        if not isinstance(amount, int) or amount < 0:
            raise LedgerError(f"{power}'s starting balance must be whole AgP, 0 or more, not {amount!r}")
    return Ledger(tuple(start.items()), tuple(Line(phase, p, "start", a, a) for p, a in start.items()))


def credit_income(ledger: Ledger, centres: Mapping[str, int], phase: str, win: int = 18, *, rules: Rules = NONE,
                  owned: Mapping[str, Sequence[str]] | None = None, profits: Mapping[str, int] | None = None,
                  before: Mapping[str, Sequence[str]] | None = None) -> Ledger:
    """Before a Spring movement phase: each power's taxes from the centres it
    owns (a power without an account, or without centres, gets nothing), as
    `rules` have it (income()). And by the rules, as DPjudge's
    parseSupplyCount does it: NO_HOARDING sets every balance to 0 first;
    ZEROSUM credits what the year's bribes paid to a power's units
    (`profits`, CAP'd like an income) and moves money with every centre
    that changed hands since `before` (each power's centres at the last
    income): the gainer of a power's centre takes that power's balance and
    profits divided by the centres it held then, a neutral centre is worth
    10 AgP (PayolaGame.transferCenter); a loser never goes below 0."""
    owned = owned or {}
    bal = dict(ledger.balances)
    changes: list[tuple[str, str, int, str]] = []
    if "NO_HOARDING" in rules:
        changes += [(p, "no hoarding", -b, "unspent money is lost") for p, b in bal.items() if b > 0]
    powers = len(bal)
    for p, n in centres.items():
        if p not in bal:
            continue
        if "ZEROSUM" in rules:
            gain = (profits or {}).get(p, 0)
            gain = gain if rules.cap is None else min(rules.cap, gain)
            if gain > 0:
                changes.append((p, "bribe profits", gain, "what your units were paid this year"))
            continue
        tax = income(n, win, rules=rules, owned=owned.get(p, ()), powers=powers)
        if tax > 0:
            changes.append((p, "income", tax, f"{n} centre{'s' if n != 1 else ''}"))
    if "ZEROSUM" in rules and before is not None:
        changes += _captures(bal, owned, before, profits or {}, rules)
    return ledger._with(_never_below_zero(bal, changes), phase)


def _captures(bal: Mapping[str, int], owned: Mapping[str, Sequence[str]], before: Mapping[str, Sequence[str]],
              profits: Mapping[str, int], rules: Rules) -> list[tuple[str, str, int, str]]:
    was = {c: p for p, cs in before.items() for c in cs}
    now = {c: p for p, cs in owned.items() for c in cs}
    out = []
    for centre in sorted(now):
        gainer, loser = now[centre], was.get(centre)
        if gainer == loser or gainer not in bal:
            continue
        if loser is None or loser not in bal:
            out.append((gainer, "capture", 10, f"{centre}, neutral"))
            continue
        # The loser's money before this income (and its hoarding), as DPjudge's transferCenter reads it.
        share = (bal[loser] + profits.get(loser, 0)) // max(len(before.get(loser, ())), 1)
        out += [(gainer, "capture", share, f"{centre} from {loser}"), (loser, "loss", -share, f"{centre} to {gainer}")]
    return out


def _never_below_zero(bal: Mapping[str, int], changes: list[tuple[str, str, int, str]]
                      ) -> list[tuple[str, str, int, str]]:
    """Losses cut to what the power holds when they come (the rules may
    take more than is left, as NO_HOARDING with ZEROSUM's losses)."""
    left = dict(bal)
    out = []
    for power, kind, amount, note in changes:
        amount = max(amount, -left[power])
        if amount:
            left[power] += amount
            out.append((power, kind, amount, note))
    return out


def debit_bribes(ledger: Ledger, spent: Mapping[str, int], phase: str) -> Ledger:
    """The accepted bribes of a movement phase, one line per power that paid."""
    for p, amount in spent.items():
        if not isinstance(amount, int) or amount < 0:
            raise LedgerError(f"{p} cannot pay {amount!r} AgP")
    return ledger._with([(p, "bribes", -a, "") for p, a in spent.items() if a], phase)


def transfer(ledger: Ledger, giver: str, receiver: str, amount: int, phase: str, *, rules: Rules = NONE) -> Ledger:
    """`giver` sends `amount` AgP to `receiver`: at least 1, at most the
    giver's balance, to another power. By the rules (pages/Rules 3.2):
    NO_TRANSFER refuses it; ONE_TRANSFER refuses a second one to the same
    power in a phase; ANON_TRANSFER leaves the giver out of the receiver's
    line (the giver's own line names the receiver, for the GM's log)."""
    if "NO_TRANSFER" in rules:
        raise LedgerError("transfers are not allowed in this game (NO_TRANSFER)")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise LedgerError(f"a transfer is a whole number of AgP, at least 1, not {amount!r}")
    if giver == receiver:
        raise LedgerError("a transfer goes to another power")
    bal = dict(ledger.balances)
    if receiver not in bal:
        raise LedgerError(f"{receiver} has no account")
    if giver in bal and bal[giver] < amount:
        raise LedgerError(f"you have {bal[giver]} AgP: you cannot send {amount}")
    if "ONE_TRANSFER" in rules and any(x.phase == phase and x.power == giver and x.kind == "transfer out"
                                       and x.note == receiver for x in ledger.lines):
        raise LedgerError(f"you sent {receiver} a transfer in {phase} already: one a phase to each power "
                          "(ONE_TRANSFER)")
    source = "someone" if "ANON_TRANSFER" in rules else giver
    return ledger._with([(giver, "transfer out", -amount, receiver), (receiver, "transfer in", amount, source)],
                        phase)


def to_json(ledger: Ledger) -> dict[str, Any]:
    return {"balances": dict(ledger.balances), "lines": [asdict(x) for x in ledger.lines]}


def from_json(data: Mapping[str, Any]) -> Ledger:
    return Ledger(tuple((p, int(a)) for p, a in data["balances"].items()),
                  tuple(Line(**x) for x in data["lines"]))
