"""The DPjudge rules a Payola game may use (issue 26), as the GM sets them
(`SET RULE EBAYOLA`, `SET TAX 3`, `SET CAP 40`) and `judge resolve` reads
them ("rules": [...]). Pure: which rules exist, what each implies, and
which cannot go together. What each does, with its DPjudge source, is in
docs/payola.md; the code that honours each names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

# name -> what it does, in a few words (the GM's reply says it; docs/payola.md has the source)
RULES: dict[str, str] = {
    "ANON_TRANSFER": "the receiver of a transfer is not told who sent it",
    "DIRECT_ONLY": "one offer per unit, direct (:) only: no wildcards, alternatives, repetition or augmentation",
    "EBAYOLA": "a winning bribe costs one AgP more than the best losing one",
    "FLAT_TAX": "income: each centre is worth as many AgP as the map has powers",
    "HIDE_COST": "results do not say what each of a player's units was paid",
    "HIDE_OFFERS": "results give a player only their units' orders, what they were paid and the new balance",
    "LIMIT_OFFERS": "a sheet's offers may not add up to more than the balance (less savings)",
    "NO_HOARDING": "unspent money is lost: each balance is set to 0 before the year's income",
    "NO_PLATEAU": "no plateaus (#)",
    "NO_SAVINGS": "no savings ($) and no plateaus (#)",
    "NO_TRANSFER": "no transfers",
    "ONE_TRANSFER": "each power transfers to each other power at most once a phase",
    "PAY_DUMMIES": "only dummies' units are bribed; each power orders its own units with 0 : lines",
    "PUBLIC_TOTALS": "the total paid to each unit is public",
    "ZEROSUM": "no tax: 10 AgP a home centre to start, bribes paid to a unit go to its owner, captured centres "
               "take a share of the loser's money",
    "ZERO_FOREIGN": "0 AgP offers to foreign units are allowed",
}
# DPjudge's pages/Rules: PAYOLA_CLASSIC "includes all of the following".
BUNDLES = {"PAYOLA_CLASSIC": ("NO_SAVINGS", "DIRECT_ONLY", "FLAT_TAX", "ZERO_FOREIGN")}
MAX_TAX = 9999  # an amount of the sheet's size (DPjudge's largest offer)


class RuleError(ValueError):
    """A rule the judge does not know, or rules that cannot go together."""


@dataclass(frozen=True)
class Rules:
    """The rules in force: DPjudge's flags, and its TAX and CAP values."""

    flags: frozenset[str] = frozenset()
    tax: int | None = None  # TAX n: every centre is worth n AgP
    taxes: tuple[tuple[str, int], ...] = ()  # TAX centre n: that centre is worth n AgP
    cap: int | None = None  # CAP n: a year's income is at most n

    def __contains__(self, name: object) -> bool:
        return name in self.flags

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rules": sorted(self.flags)}
        if self.tax is not None:
            out["tax"] = self.tax
        if self.taxes:
            out["taxes"] = dict(self.taxes)
        if self.cap is not None:
            out["cap"] = self.cap
        return out

    def describe(self) -> list[str]:
        """Each rule in words, for the GM's reply and the results."""
        out = [f"{name}: {RULES[name]}" for name in sorted(self.flags)]
        if self.tax is not None:
            out.append(f"TAX {self.tax}: every centre is worth {self.tax} AgP a year")
        out += [f"TAX {c} {n}: {c} is worth {n} AgP a year" for c, n in self.taxes]
        if self.cap is not None:
            out.append(f"CAP {self.cap}: a year's income is at most {self.cap} AgP")
        return out


NONE = Rules()


def flags_from(names: Iterable[Any]) -> frozenset[str]:
    """Rule names (any case; a bundle brings its rules) -> the flags; RuleError
    for a name the judge does not know."""
    out: set[str] = set()
    for raw in names:
        if not isinstance(raw, str):
            raise RuleError(f"a rule is a name, like EBAYOLA, not {raw!r}")
        name = raw.strip().upper()
        if name in BUNDLES:
            out.update(BUNDLES[name])
        elif name in RULES:
            out.add(name)
        else:
            raise RuleError(f"{raw!r} is no Payola rule the judge plays; it plays {', '.join(sorted(RULES))} "
                            f"and {', '.join(BUNDLES)} (docs/payola.md)")
    return frozenset(out)


def rules_from(raw: Mapping[str, Any] | None) -> Rules:
    """{"rules": [...], "tax": n, "taxes": {centre: n}, "cap": n} (each
    optional) -> Rules; RuleError when one is wrong."""
    raw = dict(raw or {})
    flags = flags_from(raw.get("rules") or ())
    tax = _amount(raw.get("tax"), "TAX")
    cap = _amount(raw.get("cap"), "CAP", least=1)
    taxes = raw.get("taxes") or {}
    if not isinstance(taxes, Mapping):
        raise RuleError("taxes: an object {centre: AgP}")
    per_centre = tuple(sorted((str(c).upper(), _amount(n, f"TAX {c}")) for c, n in taxes.items()))
    # Several income rules may stand together: the income is the first of
    # ZEROSUM, TAX n, FLAT_TAX, TAX per centre that is set (DPjudge's
    # PayolaPower.income), so none is refused.
    return Rules(flags, tax, per_centre, cap)  # type: ignore[arg-type]


def _amount(value: Any, what: str, least: int = 0) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_TAX:
        raise RuleError(f"{what}: a whole number of AgP, {least} to {MAX_TAX}, not {value!r}")
    return value
