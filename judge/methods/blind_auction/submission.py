"""A player's submission (bid lines or No Preference), however it arrived:
in a mail among other commands, or as text in a `judge resolve` file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.methods.blind_auction import engine as ba
from judge.syntax import CommandSyntaxError, parse_line
from judge.syntax import nodes
from judge.variants import PowerList


@dataclass
class SubmissionParts:
    entries: list[ba.BidEntry] = field(default_factory=list)
    no_preference_lines: list[int] = field(default_factory=list)
    problems: list[ba.Violation] = field(default_factory=list)
    # How lines posted the forums' way were read ("line 4 read as Germany 20").
    readings: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.entries or self.no_preference_lines or self.problems)


def check(parts: SubmissionParts, powers: PowerList, params: ba.Params) -> ba.Checked:
    """Every rule at once; No Preference may not be mixed with bids (seed)."""
    if parts.no_preference_lines and parts.entries:
        mixed = ba.Violation(
            "no-preference-mixed",
            f"line {parts.no_preference_lines[0]}: No Preference applies to all powers; "
            "it cannot be combined with bids. Send either a full bid list or No Preference",
            parts.no_preference_lines[0],
        )
        checked = ba.validate(powers, params, parts.entries)
        return ba.Checked(None, (mixed, *parts.problems, *checked.violations))
    if parts.no_preference_lines and not parts.problems:
        return ba.Checked(ba.NO_PREFERENCE)
    if parts.problems:
        checked = ba.validate(powers, params, parts.entries) if parts.entries else ba.Checked(None)
        return ba.Checked(None, (*parts.problems, *checked.violations))
    return ba.validate(powers, params, parts.entries)


def parse_text(text: str) -> SubmissionParts:
    """Read a submission written as a player would mail it."""
    parts = SubmissionParts()
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not line.strip() or line.lstrip().startswith(">"):
            continue
        try:
            node = parse_line(line, number)
        except CommandSyntaxError as err:
            parts.problems.append(ba.Violation("syntax", err.render(), number))
            continue
        if isinstance(node, nodes.Bids):
            parts.entries.extend(node.entries)
        elif isinstance(node, nodes.NoPreference) and node.player is None:
            parts.no_preference_lines.append(number)
        elif isinstance(node, (nodes.Entropy, nodes.Markup)):
            continue  # mixed into the seed by the daemon, or forum markup; no part of the bids
        else:
            parts.problems.append(ba.Violation(
                "not-a-bid", f"line {number}: only bids or No Preference belong in a submission", number))
    return parts
