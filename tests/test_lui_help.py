"""HELP and HELP LUI list Lowest Unique Integer's commands, one line each,
from one template (templates/help/lui_commands.txt.j2): every keyword of
grammars/lui.lark and every GM setting live.py takes; the other methods'
sections of HELP stay as they were."""

from __future__ import annotations

import re
from pathlib import Path

from judge.methods.lui.live import _SETTINGS
from judge.templating import render

ROOT = Path(__file__).resolve().parent.parent
ANN = "ann@example.test"


def help_text(h, topic: str = "") -> str:
    h.mail(ANN, f"HELP {topic}".strip())
    return h.body(h.last_to(ANN))


def lui_keywords() -> set[str]:
    text = (ROOT / "grammars" / "lui.lark").read_text()
    return set(re.findall(r'"([A-Z]+)"i', text))


def command_lines() -> list[str]:
    return [line for line in render("help/lui_commands.txt.j2").splitlines() if line.strip()]


def test_the_commands_are_one_line_each_with_what_they_do():
    lines = command_lines()
    commands = [line for line in lines if not line.rstrip().endswith(":")]
    for line in commands:
        # The command, then at column 45 what it does.
        assert re.match(r"^  \S.{0,40}\S +\S", line) and line[44] != " " and line[43] == " ", line
    firsts = [line.split("  ")[1].split(" / ")[0].strip() for line in commands]
    for expected in ("BID Z 5", "BUY [n]", "BOARD", "SET BOARD MAIL OFF", "SET BOARD MAIL ON", "EC name",
                     "GIVE TOL name", "SET PRIZE seat garnets priority", "SET EC DEADLINE hours",
                     "SET GIFT DEADLINE hours", "EJECT player", "REPLACE player new@address"):
        assert expected in firsts, expected


def test_help_lui_and_the_index_list_every_command_of_the_game(harness):
    page = help_text(harness, "LUI")
    index = help_text(harness)
    lines = command_lines()
    section = index[index.index("\nLowest Unique Integer (HELP lui"):].split("\n\n")[0]
    assert section.strip("\n").splitlines()[1:] == lines  # the index entry: the same lines, in the same order
    assert "\n".join(lines) in page
    words = set(re.findall(r"[A-Z]+", "\n".join(lines)))
    assert lui_keywords() <= words, lui_keywords() - words
    assert _SETTINGS - {"GIFTS"} <= words, _SETTINGS - words  # SET GIFTS DEADLINE: a spelling also taken
    assert "/bid" in page and "/buy" in page


def test_the_other_methods_sections_are_unchanged(harness):
    """The index without LUI's section is the index as it was: each other
    method's heading and lines, in their order, and the end of the page."""
    index = help_text(harness)
    section = index[index.index("\nLowest Unique Integer (HELP lui"):].split("\n\n")[0]
    before = index[:index.index(section)]
    for heading in ("Blind Auction (HELP blind-auction):", "Preference (HELP preference):",
                    "Random (HELP random): no commands of its own; START draws every power.",
                    "Blind-random (HELP blind-random;"):
        assert heading in before
    assert "BUY [n]" not in before and "GIVE TOL" not in before  # LUI's lines only in its own section
    # The end of the page: the docs' link (where docs_url is set), then the judge's address.
    assert index[index.index(section) + len(section):].lstrip("\n").startswith(
        ("Every command, with an example mail:", "Mail your commands to"))
