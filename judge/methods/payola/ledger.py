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
from typing import Any, Mapping


class LedgerError(ValueError):
    """A change the accounts refuse (more than the balance, a negative or
    zero amount, an unknown power): nothing was changed."""


@dataclass(frozen=True)
class Line:
    phase: str  # the game phase it belongs to (S1901M...)
    power: str
    kind: str  # "start", "income", "bribes", "transfer out", "transfer in"
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


def income(centres: int, win: int = 18) -> int:
    """A year's income from `centres` supply centres (module docstring)."""
    return sum(max(0, win - n) for n in range(1, max(0, centres) + 1))


def open_accounts(start: Mapping[str, int], phase: str) -> Ledger:
    """Every power's account with its starting balance."""
    for power, amount in start.items():
        if not isinstance(amount, int) or amount < 0:
            raise LedgerError(f"{power}'s starting balance must be whole AgP, 0 or more, not {amount!r}")
    return Ledger(tuple(start.items()), tuple(Line(phase, p, "start", a, a) for p, a in start.items()))


def credit_income(ledger: Ledger, centres: Mapping[str, int], phase: str, win: int = 18) -> Ledger:
    """Before a Spring movement phase: each power's taxes from the centres it
    owns (a power without an account, or without centres, gets nothing)."""
    changes = [(p, "income", income(n, win), f"{n} centre{'s' if n != 1 else ''}")
               for p, n in centres.items() if p in dict(ledger.balances) and income(n, win) > 0]
    return ledger._with(changes, phase)


def debit_bribes(ledger: Ledger, spent: Mapping[str, int], phase: str) -> Ledger:
    """The accepted bribes of a movement phase, one line per power that paid."""
    for p, amount in spent.items():
        if not isinstance(amount, int) or amount < 0:
            raise LedgerError(f"{p} cannot pay {amount!r} AgP")
    return ledger._with([(p, "bribes", -a, "") for p, a in spent.items() if a], phase)


def transfer(ledger: Ledger, giver: str, receiver: str, amount: int, phase: str) -> Ledger:
    """`giver` sends `amount` AgP to `receiver`: at least 1, at most the
    giver's balance, to another power."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise LedgerError(f"a transfer is a whole number of AgP, at least 1, not {amount!r}")
    if giver == receiver:
        raise LedgerError("a transfer goes to another power")
    bal = dict(ledger.balances)
    if receiver not in bal:
        raise LedgerError(f"{receiver} has no account")
    if giver in bal and bal[giver] < amount:
        raise LedgerError(f"you have {bal[giver]} AgP: you cannot send {amount}")
    return ledger._with([(giver, "transfer out", -amount, receiver), (receiver, "transfer in", amount, giver)],
                        phase)


def to_json(ledger: Ledger) -> dict[str, Any]:
    return {"balances": dict(ledger.balances), "lines": [asdict(x) for x in ledger.lines]}


def from_json(data: Mapping[str, Any]) -> Ledger:
    return Ledger(tuple((p, int(a)) for p, a in data["balances"].items()),
                  tuple(Line(**x) for x in data["lines"]))
