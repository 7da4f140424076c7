"""HELP (issue 11): every command of the grammar, under the right heading,
whole in the reply; a page per method and for checking the draws; the
reply's bound never cuts the judge's own texts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.methods import ALIASES, METHODS

GRAMMAR = Path(__file__).resolve().parent.parent / "grammars" / "commands.lark"
ANN = "ann@example.test"


def grammar_keywords() -> set[str]:
    """Every keyword a person or a judge writes: the grammar's "WORD"i
    strings and its /MANUAL\\s*START/-style terminals (with the methods'
    grammars that extend it: blind-random's)."""
    text = "\n".join([GRAMMAR.read_text(), *((GRAMMAR.parent / METHODS[m].GRAMMAR).read_text()
                                             for m in METHODS if METHODS[m].GRAMMAR)])
    words = set(re.findall(r'"([A-Z]+)"i', text))
    for pattern in re.findall(r"^[A-Z_]+START: /(.*)/i$", text, re.M):
        words.update(w for w in re.split(r"\\s\*", pattern) if w)
    return words


def help_text(h, topic: str = "") -> str:
    h.mail(ANN, f"HELP {topic}".strip())
    return h.body(h.last_to(ANN))


def test_help_names_every_keyword_of_the_grammar_and_is_not_cut(harness):
    text = help_text(harness)
    words = set(re.findall(r"[A-Z]+", text))
    keywords = grammar_keywords()
    assert {"SIGNON", "SIGN", "ON", "REMINDERS", "MANUAL", "AUTO", "CLOSEROUND", "PROCESS"} <= keywords
    assert not keywords - words, f"HELP does not name {sorted(keywords - words)}"
    assert "more characters" not in text and "more line" not in text
    # The whole page, to its last line.
    assert text.rstrip().endswith("-- \nSend HELP for the commands.")
    assert "Mail your commands to judge@example.test." in text
    for topic in (*METHODS, "randomness"):
        assert topic in text.split("HELP topic gives a page of its own:")[1].split("\n")[0]


def section(text: str, heading: str) -> str:
    """The lines under a heading of HELP, up to the next heading."""
    start = text.index(f"\n{heading}")
    end = text.find("\n\n", start + 1)
    return text[start:end]


def test_start_is_for_every_method_and_process_for_the_blind_auction(harness):
    text = help_text(harness)
    everyone = section(text, "Masters, in every game")
    assert re.search(r"^  START .*blind-auction.*\n.*blind-random", everyone, re.M)
    assert "PROCESS" not in everyone
    auction = section(text, "Blind Auction (HELP blind-auction)")
    assert re.search(r"^  PROCESS .*resolve it now", auction, re.M)
    assert "START" not in section(text, "Preference (HELP preference)").replace("before START", "")
    assert "SET PREFERENCE E[FGR][TAI]" in section(text, "Preference (HELP preference)")
    assert "RERUN" in section(text, "Blind-random (HELP blind-random")


@pytest.mark.parametrize("topic, says", [
    ("blind-auction", "The Blind Auction (method blind-auction)"),
    ("preference", "Preference lists (method preference)"),
    ("random", "Random assignment (method random)"),
    ("blind-random", "Blind random assignment (method blind-random)"),
    ("Randomness", "How the judge's random draws are made"),
    ("pref", "Preference lists (method preference)"),
    ("BA", "The Blind Auction (method blind-auction)"),
])
def test_a_topic_has_its_own_page(tmp_path, topic, says):
    from tests.harness import Harness

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}",
                docs_url="https://docs.example.test/judge/")
    try:
        text = help_text(h, topic)
    finally:
        h.close()
    assert f"> HELP {topic}\nDone: {says}" in text
    assert "more characters" not in text
    # Links go to the configured public docs, never to a path in the repository.
    assert "https://docs.example.test/judge/" in text and "judge//" not in text
    assert not re.search(r"(?<![/\w])docs/\w", text)


def test_every_alias_of_a_method_has_the_methods_page():
    from judge.commands.eml_help import page

    for alias, name in ALIASES.items():
        assert page(alias) == page(name) == f"help/{name}.txt.j2"


def test_an_unknown_topic_is_refused_naming_the_topics(harness):
    text = help_text(harness, "chess")
    assert "Rejected: there is no help on 'chess'" in text
    assert all(t in text for t in ("blind-auction, preference, random, blind-random, lui, pt3, payola, randomness",))


def test_help_and_help_of_a_topic_in_one_mail_both_run(harness):
    h = harness
    h.mail(ANN, "HELP\nHELP preference\nHELP")
    text = h.body(h.last_to(ANN))
    assert "Done: The commands of" in text and "Done: Preference lists" in text
    assert "Ignored: the same as line 1" in text


def test_a_list_of_many_games_is_whole_or_cut_between_lines(harness):
    """LIST is the judge's own text: a line of it is never cut; what would
    pass the reply's bound goes by whole lines, and the reply says so."""
    from judge.mailrunner import MAX_REPLY_CHARS

    h = harness
    count = MAX_REPLY_CHARS // 40  # a LIST about twice as long as a reply may be
    with h.judge.sessions() as s:
        from judge.store.models import Game

        for i in range(count):
            s.add(Game(name=f"game{i:05d}", gm_address="gm@example.test", gm_password="x",
                       method="random", variant="standard",
                       powers=[{"name": "Austria", "letter": "A"}, {"name": "England", "letter": "E"}],
                       params={}, state="forming", created_at=h.clock.now()))
        s.commit()
    h.mail(ANN, "LIST")
    text = h.body(h.last_to(ANN))
    assert "more characters" not in text
    listed = re.findall(r"^  \?(game\d{5}) +random +forming +0/2 players, deadline .+$", text, re.M)
    assert listed and listed == [f"game{i:05d}" for i in range(len(listed))]
    hidden = count - len(listed)
    assert hidden > count // 3 and f"\n... and {hidden} more lines, not shown" in text
