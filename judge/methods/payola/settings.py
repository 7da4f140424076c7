"""A Payola game's settings (games.params), the method's ENGINE for the
shell (default_params, params_from, check_params, ParamError). Pure.

- start_balance: every power's balance before Spring 1901; None (the
  default) gives each power the income of its home centres (ledger.income:
  48 AgP for three, 62 for Russia's four), as DPjudge does;
- movement_hours, retreat_hours, adjustment_hours: each phase's deadline,
  counted from the end of the phase before;
- powers: the GM's SET POWER choices, address -> power (the others are
  drawn at START from the game's committed stream);
- rules, tax, taxes, cap: the DPjudge rules in force (rules.py; the GM's
  SET RULE, SET TAX, SET CAP);
- dummies: powers the GM leaves unplayed (DPjudge's DUMMY powers; SET
  DUMMY): in civil disorder from the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from judge.methods.payola.rules import NONE, RuleError, Rules, rules_from


NAME = "payola"


class ParamError(ValueError):
    """Settings a Payola game cannot be played with."""


@dataclass(frozen=True)
class Params:
    start_balance: int | None = None
    movement_hours: float = 72.0
    retreat_hours: float = 24.0
    adjustment_hours: float = 24.0
    powers: tuple[tuple[str, str], ...] = ()  # (address, power) the GM chose
    rules: Rules = field(default=NONE)
    dummies: tuple[str, ...] = ()  # powers nobody plays (civil disorder from the start)

    def as_dict(self) -> dict[str, Any]:
        return {"start_balance": self.start_balance, "movement_hours": self.movement_hours,
                "retreat_hours": self.retreat_hours, "adjustment_hours": self.adjustment_hours,
                "powers": dict(self.powers), **self.rules.as_dict(), "dummies": list(self.dummies)}

    def hours(self, phase_type: str) -> float:
        """The deadline of a phase of type M, R or A."""
        return {"M": self.movement_hours, "R": self.retreat_hours}.get(phase_type, self.adjustment_hours)


_KNOWN = {"start_balance", "movement_hours", "retreat_hours", "adjustment_hours", "powers", "rules", "tax", "taxes",
          "cap", "dummies"}


def default_params(U: int) -> Params:
    return Params()


def params_from(raw: Mapping[str, Any] | None, U: int) -> Params:
    raw = dict(raw or {})
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise ParamError(f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    start = raw.get("start_balance")
    if start is not None and (not isinstance(start, int) or isinstance(start, bool) or start < 0):
        raise ParamError(f"the starting balance must be a whole number of AgP, 0 or more, not {start!r}")
    hours = {}
    for key in ("movement_hours", "retreat_hours", "adjustment_hours"):
        v = raw.get(key, getattr(Params, key))
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= 24 * 60:
            raise ParamError(f"{key.replace('_', ' ')} must be a number of hours above 0 (at most 60 days), "
                             f"not {v!r}")
        hours[key] = float(v)
    powers = raw.get("powers") or {}
    if not isinstance(powers, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                  for k, v in powers.items()):
        raise ParamError("powers maps a player's address to the power the GM gave them")
    if len(set(p.casefold() for p in powers.values())) != len(powers):
        raise ParamError("the GM gave one power to two players")
    try:
        rules = rules_from({k: raw[k] for k in ("rules", "tax", "taxes", "cap") if k in raw})
    except RuleError as err:
        raise ParamError(str(err)) from err
    dummies = raw.get("dummies") or []
    if not isinstance(dummies, (list, tuple)) or not all(isinstance(d, str) for d in dummies):
        raise ParamError("dummies: a list of powers nobody plays")
    dummies = sorted({d.title() for d in dummies})
    if set(dummies) & {p.title() for p in powers.values()}:
        raise ParamError("a power the GM gave a player cannot be a dummy")
    return Params(start_balance=start, powers=tuple(sorted(powers.items())), rules=rules, dummies=tuple(dummies),
                  **hours)


def check_params(U: int, params: Params) -> list[str]:
    return []


def with_setting(raw: Mapping[str, Any], command: Any) -> tuple[dict[str, Any], str]:
    """The GM's SET RULE, SET TAX, SET CAP or SET DUMMY (commands.py) on the
    game's settings `raw` before START: (the new settings, what the GM's
    reply says was set). ParamError when the result cannot be played
    (an unknown rule: the reply names the rules the judge plays)."""
    from judge.methods.payola import commands as cmd
    from judge.methods.payola.rules import flags_from

    out = dict(raw)
    if isinstance(command, cmd.SetRules):
        try:
            added, removed = flags_from(command.add), flags_from(command.remove)
        except RuleError as err:
            raise ParamError(str(err)) from err
        flags = set() if command.clear else set(out.get("rules") or ())
        out["rules"] = sorted((flags | added) - removed)
        what = f"the rules in force: {', '.join(out['rules']) or 'none'}"
    elif isinstance(command, cmd.SetTax):
        if command.centre is not None:
            out["taxes"] = {**(out.get("taxes") or {}), command.centre: command.amount}
            what = f"{command.centre} is worth {command.amount} AgP a year"
        elif command.amount is None:
            out.pop("tax", None)
            out.pop("taxes", None)
            what = "no TAX: the income is the rules' table"
        else:
            out["tax"] = command.amount
            what = f"every centre is worth {command.amount} AgP a year"
    elif isinstance(command, cmd.SetCap):
        if command.amount is None:
            out.pop("cap", None)
        else:
            out["cap"] = command.amount
        what = "no CAP on the income" if command.amount is None else f"a year's income is at most {command.amount} AgP"
    elif isinstance(command, cmd.SetDummies):
        out["dummies"] = list(command.powers)
        what = (f"nobody plays {', '.join(command.powers)} (civil disorder from the start)" if command.powers
                else "every power is played")
    else:
        raise ParamError(f"not a setting of DPjudge's rules: {command!r}")
    params_from(out, 0)  # refused as a whole, with the reason
    return out, what
