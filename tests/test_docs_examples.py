"""Every example in docs/*.md and README.md runs as shown (issue 11).

- a `judge resolve FILE` command runs through the real CLI on the doc's
  ```json example of FILE, in every --format the doc names;
- the ```python script of docs/randomness.md runs with the arguments the
  doc shows, and prints what the doc shows;
- every other ```sh block either runs in a temporary directory or is
  marked `<!-- not run: why -->` on the line before it, with a reason;
- docs/preference.md's example mail runs through a real judge and is done;
  every other ```mail block of docs/ (commands.md apart) runs, or says why not;
- every example mail of a HELP page is done as the page says, and the forms
  HELP shows of bids and lists as forums post them read as it says (issue 27).

docs/commands.md's example mails are checked against the grammar by
tests/test_grammar.py, and run through a judge, their replies checked, by
tests/test_docs_commands.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    body: str
    marker: str  # the HTML comment on the line before the block, if any
    after: str  # the doc's text after the block

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text()
    out = []
    for m in _FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append(Block(doc, text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2),
                         before if before.lstrip().startswith("<!--") else "", text[m.end():]))
    return out


ALL = [b for doc in DOCS for b in blocks(doc)]
SH = [b for b in ALL if b.lang == "sh"]


def _resolve_lines(block: Block) -> list[str]:
    return [line for line in block.body.splitlines() if re.match(r"^(\.venv/bin/)?judge resolve \S+\.json", line)]


def _commands(line: str) -> list[list[str]]:
    """A documented command line as argv lists: `--format json|text|bbcode` is three runs."""
    words = shlex.split(line.split("  #")[0])
    words[0] = str(BIN / "judge")
    runs = [[]]
    for w in words:
        options = w.split("|") if "|" in w and not w.startswith("|") else [w]
        runs = [r + [o] for r in runs for o in options]
    return runs


@pytest.mark.parametrize("block", [b for b in SH if _resolve_lines(b)], ids=str)
def test_a_documented_offline_resolution_runs_as_shown(block, tmp_path):
    examples = {b.body for b in blocks(block.doc) if b.lang == "json"}
    for line in _resolve_lines(block):
        name = re.search(r"(\S+\.json)", line).group(1)
        # The doc's ```json example is the file the command names.
        assert len(examples) == 1, f"{block}: which ```json block is {name}?"
        (tmp_path / name).write_text(next(iter(examples)))
        for argv in _commands(line):
            run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, f"{block}: {' '.join(argv[1:])} failed:\n{run.stdout}{run.stderr}"
            assert run.stdout.strip(), f"{block}: {' '.join(argv[1:])} printed nothing"
            # As shown: every example list is taken (an example that is refused
            # teaches the wrong syntax).
            if "json" in argv[argv.index("--format") + 1:argv.index("--format") + 2] or "--format" not in argv:
                import json

                assert not json.loads(run.stdout).get("rejected"), f"{block}: a list is refused:\n{run.stdout}"
            assert "refused" not in run.stdout.casefold(), f"{block}: {' '.join(argv[1:])}:\n{run.stdout}"


def test_the_replay_script_of_randomness_md_prints_what_the_doc_shows(tmp_path):
    (block,) = [b for b in blocks(ROOT / "docs" / "randomness.md") if b.lang == "python"]
    shown = re.search(r"^    \$ python3 (\S+) (.*)\n((?:    \S.*\n)+)", block.after, re.M)
    assert shown, "docs/randomness.md: no `$ python3 replay.py ...` run after the script"
    script, args, output = shown.group(1), shown.group(2).split(), shown.group(3)
    (tmp_path / script).write_text(block.body)
    run = subprocess.run([sys.executable, script, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [line[4:] for line in output.splitlines()]


@pytest.mark.parametrize("block", [b for b in SH if not _resolve_lines(b)], ids=str)
def test_a_shell_example_runs_or_says_why_not(block, tmp_path):
    marked = _NOT_RUN.search(block.marker)
    if marked:
        assert len(marked.group(1)) >= 10, f"{block}: `not run` needs a reason a reader understands"
        return
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", "-e", "-c", block.body.replace(".venv/bin/", f"{BIN}/")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (f"{block} does not run as shown (or mark it <!-- not run: why -->):\n"
                                 f"{run.stdout}{run.stderr}")


def test_the_preference_example_mail_runs(harness):
    """docs/preference.md's mail, as a player of a preference game ?game
    whose password is `password` sends it."""
    (mail,) = [b for b in blocks(ROOT / "docs" / "preference.md")
               if b.lang in ("", "mail") and b.body.startswith("SIGNON ")]
    h = harness
    h.mail("gm@example.test", "CREATE ?game gmpw preference standard\nSET MANUAL START")
    h.mail("ann@example.test", mail.body)
    reply = h.body(h.last_to("ann@example.test"))
    assert "Rejected" not in reply and "Not done" not in reply, reply
    assert reply.count("Done:") == len([line for line in mail.body.splitlines() if line.strip()]), reply


# --------------------------------------------------------------------------
# HELP's examples (issue 27): every example mail of a HELP page is sent, as a
# player of a game in the state the page speaks of, and is done as the page
# says; the forms HELP shows as forums post them read as it says.
# --------------------------------------------------------------------------

_EXAMPLE_MAIL = re.compile(r"^  SIGNON \?game password\n(?:  \S.*\n)*", re.M)


def _help(h, topic: str) -> str:
    h.mail("reader@example.test", f"HELP {topic}".strip())
    reply = h.body(h.last_to("reader@example.test"))
    assert "Done: " in reply, reply
    return reply.split("Done: ", 1)[1].split("\n-- \n")[0] + "\n"


def _auction_open(h) -> None:
    """?game, a Blind Auction of the standard variant (T = 140, M = 70), open;
    the sender plays in it with the password `password`."""
    h.mail("gm@example.test", "CREATE ?game gmpw blind-auction standard\nSET DEADLINE +48h")
    h.mail("ann@example.test", "SIGNON ?game password")
    for k in range(6):
        h.mail(f"p{k}@example.test", "SIGNON ?game pw")
    h.mail("gm@example.test", "SIGNON Mgame gmpw\nSTART")


def _forming_preference(h) -> None:
    h.mail("gm@example.test", "CREATE ?game gmpw preference standard\nSET MANUAL START")
    h.mail("ann@example.test", "SIGNON ?game password")


# The state each method's HELP page speaks of in its example mail.
HELP_STATES = {"blind-auction": _auction_open, "preference": _forming_preference}


@pytest.mark.parametrize("topic", ["blind-auction", "preference", "random", "blind-random"])
def test_every_example_mail_of_help_is_done_as_the_page_says(topic, tmp_path):
    from tests.harness import Harness

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}", default_method="preference")
    try:
        page = _help(h, topic)
        mails = [re.sub(r"^  ", "", m.group(0), flags=re.M) for m in _EXAMPLE_MAIL.finditer(page)]
        if not mails:
            assert topic not in HELP_STATES, f"HELP {topic} shows no example mail any more"
            return
        assert topic in HELP_STATES, f"HELP {topic} shows an example mail: give its state in HELP_STATES"
        HELP_STATES[topic](h)
        for mail in mails:
            h.mail("ann@example.test", mail)
            reply = h.body(h.last_to("ann@example.test"))
            assert "Rejected" not in reply and "Not done" not in reply, f"HELP {topic}'s example:\n{mail}\n{reply}"
            assert reply.count("Done:") >= 2, reply
    finally:
        h.close()


def test_the_forum_forms_help_shows_read_as_it_says(harness):
    from judge.methods.preference.engine import read_preference
    from judge.syntax import nodes, parse_line
    from judge.variants import variant_powers

    index, page = _help(harness, ""), _help(harness, "blind-auction")
    shown = re.search(r"as posted\s+on forums too: (.*?)\)", " ".join(index.split())).group(1).split(", ")
    shown += re.search(r"as forums post them are read too \((.*?)\);", " ".join(page.split())).group(1).split(", ")
    bids = [s for s in shown if not s.startswith("a list inside")]
    assert len(bids) >= 6
    for form in bids:
        node = parse_line(form)
        assert isinstance(node, nodes.Bids) and len(node.entries) == 1, form
    lists = re.search(r"names: (.*?)\);", " ".join(index.split())).group(1).split(", ")
    for form in lists:
        assert read_preference(form, variant_powers("standard")).groups, form


MAILS = [b for b in ALL if b.lang == "mail" and b.doc.name != "commands.md"]  # commands.md: test_docs_commands.py


@pytest.mark.parametrize("block", MAILS, ids=str)
def test_an_example_mail_of_the_docs_runs_or_says_why_not(block, tmp_path):
    """A ```mail block of docs/ (besides commands.md, whose every mail runs in
    tests/test_docs_commands.py): a master's mail that creates a game runs
    through a real judge and every line is done; a player's mail runs where
    a test gives its game (docs/preference.md's, above); any other is marked
    <!-- not run: why -->."""
    from tests.harness import Harness

    marked = _NOT_RUN.search(block.marker)
    if marked:
        assert len(marked.group(1)) >= 10, f"{block}: `not run` needs a reason a reader understands"
        return
    if block.body.startswith("SIGNON ") and block.doc.name == "preference.md":
        return  # test_the_preference_example_mail_runs
    assert block.body.startswith("CREATE "), f"{block}: run it in a test, or mark it <!-- not run: why -->"
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        h.mail("gm@example.test", block.body)
        reply = h.body(h.last_to("gm@example.test"))
        assert "Rejected" not in reply and "Not done" not in reply, f"{block}:\n{reply}"
        lines = [line for line in block.body.splitlines() if line.strip()]
        assert reply.count("Done:") == len(lines), f"{block}:\n{reply}"
    finally:
        h.close()
