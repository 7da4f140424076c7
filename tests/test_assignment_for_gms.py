"""Power assignment as a new GM meets it (issue 27): bids and lists as
forums post them, by `judge resolve` and by mail (a FOR paste, every line
shown with its fate); players named as the judge shows them; texts that
agree with each other; what a GM expects to see; a 36-power variant built
in. (The REPLACE after a deadline: tests/test_e2e_replace_after_deadline.py;
every example of HELP and docs/: tests/test_docs_examples.py; the master's
digest: tests/test_replies.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Resolution

GM = "gm@example.test"
JUDGE = str(Path(sys.executable).parent / "judge")
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]

FORUM_BIDS = ("[code]\n1. Austria: 40 points\n2. England - 30\n3. France 25pts\n[b]Germany[/b] 20\n"
              "Italy 12, Russia 8\n- Turkey 5.\n[/code]")


def _resolve(tmp_path: Path, data: dict, fmt: str = "json") -> str:
    (tmp_path / "in.json").write_text(json.dumps(data))
    run = subprocess.run([JUDGE, "resolve", "in.json", "--seed", "00ff", "--format", fmt], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


# -- 3. Bids and lists as players post them ---------------------------------

def test_forum_bids_are_read_by_judge_resolve(tmp_path):
    out = json.loads(_resolve(tmp_path, {"method": "blind-auction", "submissions": {
        "alice": FORUM_BIDS, "bob": "Austria 1\nEngland 2\nFrance 3\nGermany 4\nItaly 5\nRussia 6\nTurkey 7"}}))
    assert not out["rejected"]
    assert out["chart"]["alice"] == dict(zip(POWERS, [40, 30, 25, 20, 12, 8, 5]))
    assert out["assignment"]["alice"] == "Austria" and out["assignment"]["bob"] == "Turkey"


def test_a_line_that_reads_as_two_bids_is_refused_with_the_line(tmp_path):
    bids = FORUM_BIDS.replace("3. France 25pts", "3. France 25 26")
    out = json.loads(_resolve(tmp_path, {"method": "blind-auction", "submissions": {"alice": bids}}))
    reason = out["rejected"]["alice"]
    assert "3. France 25 26" in reason and "2 numbers for France: which is the bid?" in reason


def test_forum_lists_are_read_by_judge_resolve(tmp_path):
    out = json.loads(_resolve(tmp_path, {"method": "preference", "submissions": {
        "a": "1. France 2. England 3. Russia", "b": "England > Russia > France", "c": "Russia, France, England",
        "d": "[b]Germany[/b], Italy"}}))
    assert not out["rejected"]
    assert out["preferences"]["a"]["groups"] == [["France"], ["England"], ["Russia"]]
    assert out["preferences"]["b"]["groups"] == [["England"], ["Russia"], ["France"]]
    assert out["preferences"]["c"]["groups"] == [["Russia"], ["France"], ["England"]]
    assert out["preferences"]["d"]["groups"] == [["Germany"], ["Italy"]]


def _auction(h, names: list[str], **kw) -> None:
    h.mail(GM, "CREATE ?s gmpw blind-auction standard\nSET DEADLINE +48h")
    for n in names:
        h.mail(f"{n} <{n.split()[0].lower()}@example.test>", "SIGNON ?s pw")
    h.mail(GM, "SIGNON Ms gmpw\nSTART")


NAMES = ["Alice Player", "Bob Smith", "Cat", "Dan", "Eve", "Fay", "Gus"]


def test_a_for_paste_shows_the_master_every_line_and_its_fate(harness):
    h = harness
    _auction(h, NAMES)
    h.mail(GM, f"SIGNON Ms gmpw\nFOR Alice Player\nHere are my bids, good luck all!\n{FORUM_BIDS}\n"
               "FOR Bob Smith\nAustria 40 30\nSIGNOFF")
    reply = h.body(h.last_to(GM))
    assert "> Here are my bids, good luck all!\nIgnored: no bid, list or command: left out" in reply
    assert "> [code]\nIgnored: forum markup: skipped" in reply and "> [/code]\nIgnored: forum markup" in reply
    block = reply.split("> 1. Austria: 40 points")[1].split("\n\n")[0]
    assert "Done: bid list accepted: Austria 40, England 30, France 25, Germany 20, Italy 12, Russia 8, " \
           "Turkey 5" in block
    assert "  - as posted: line 5 read as Austria 40" in block and "line 8 read as Germany 20" in block
    assert re.search(r"line \d+: Austria 40 30", reply) and "2 numbers for Austria: which is the bid?" in reply
    told = h.body(h.last_to("alice@example.test"))
    assert "> Here are my bids, good luck all!\nIgnored:" in told and "Done: bid list accepted" in told


def test_a_for_paste_of_a_preference_list_over_several_lines(harness):
    h = harness
    h.mail(GM, "CREATE ?p gmpw preference standard\nSET MANUAL START")
    h.mail("Alice Player <alice@example.test>", "SIGNON ?p pw")
    h.mail(GM, "SIGNON Mp gmpw\nFOR Alice Player\nMy list:\n1. France\n2. England\n3. [Russia Germany]\nSIGNOFF")
    reply = h.body(h.last_to(GM))
    assert "> My list:\nIgnored: no bid, list or command: left out" in reply
    assert ("> 1. France\n> 2. England\n> 3. [Russia Germany]\nDone: read as one list (the lines in order), as "
            "SET PREFERENCE 1. France 2. England 3. [Russia Germany]: preference list for ?p: France, then "
            "England, then [Russia, Germany]") in reply
    h.mail("alice@example.test", "SIGNON ?p pw")
    assert "Your preference list: France, then England, then [Russia, Germany]" in h.body(
        h.last_to("alice@example.test"))


# -- 4. Names with spaces ---------------------------------------------------

def test_players_are_named_as_the_judge_shows_them(harness):
    h = harness
    _auction(h, NAMES)
    h.mail(GM, "SIGNON Ms gmpw\nFOR Bob Smith\nNo Preference\nSIGNOFF")
    assert "count as Bob Smith <bob@example.test>'s" in h.body(h.last_to(GM))
    h.mail(GM, "SIGNON Ms gmpw\nREPLACE Alice Player Olga Petrova <olga@example.net>")
    assert "Alice Player <alice@example.test> replaced by olga@example.net (Olga Petrova)" in h.body(
        h.last_to(GM))
    h.mail(GM, "SIGNON Ms gmpw\nEJECT Cat\nEJECT Ali")
    reply = _flat(h.body(h.last_to(GM)))
    assert "Cat <cat@example.test> ejected" in reply
    assert "no player 'Ali' in ?s" in reply
    h.mail(GM, "SIGNON Ms gmpw\nEJECT Olga")
    assert "did you mean Olga Petrova <olga@example.net>?" in _flat(h.body(h.last_to(GM)))


def test_a_name_that_is_another_players_address_is_refused_saying_which():
    from judge.commands.base import CommandRejected
    from judge.commands.eml_eject import named_player
    from judge.store.models import Game, Player

    game = Game(name="s", players=[Player(address="ann@example.test", name="bob@example.test", status="active"),
                                   Player(address="bob@example.test", name="Bob", status="active")])
    with pytest.raises(CommandRejected) as caught:
        named_player(None, game, "BOB@example.test")
    assert "'BOB@example.test' names two players of ?s: Bob <bob@example.test> (by address) and " \
           "bob@example.test <ann@example.test> (by name)" in str(caught.value)
    assert named_player(None, game, "bob").address == "bob@example.test"


def test_a_third_party_with_a_name(harness):
    h = harness
    h.mail(GM, "CREATE ?bg gmpw blind-random\nSET THIRDPARTY Tess Third <tess@example.org>")
    assert "the third party of ?bg is tess@example.org" in h.body(h.last_to(GM))


# -- 5. Texts that agree ----------------------------------------------------

def test_help_says_a_person_may_be_the_third_party(harness):
    h = harness
    h.mail("ann@example.test", "HELP\nHELP blind-random")
    text = _flat(h.body(h.last_to("ann@example.test")))
    assert "never by a person" not in text and "a person never" not in text
    assert "the protocol's third party: a person, or another judge" in text
    assert "a third party (a person, or another judge" in text


def test_list_inside_for_shows_the_lines_above_it_and_stays_out_of_the_players_notice(harness):
    h = harness
    _auction(h, NAMES)
    h.mail(GM, "SIGNON Ms gmpw\nFOR dan@example.test\nNo Preference\nLIST\nSIGNOFF")
    reply = h.body(h.last_to(GM))
    assert "Dan <dan@example.test>: bids in" in reply
    assert "LIST" not in h.body(h.last_to("dan@example.test"))


def test_a_duplex_game_shows_its_seats_everywhere(harness, tmp_path):
    h = harness
    h.mail(GM, "CREATE ?d gmpw preference standard\nSET PLAYERS 3")
    h.mail("ann@example.test", "SIGNON ?d pw")
    h.mail("ann@example.test", "LIST\nLIST ?d")
    text = h.body(h.last_to("ann@example.test"))
    assert re.search(r"\?d +preference +forming +1/3 players", text)
    assert "Players (1 of 3)" in text
    from judge.games import overview  # what `judge games` and the console print

    with h.judge.sessions() as s:
        (row,) = [r for r in overview(s) if r["game"] == "d"]
    assert (row["players"], row["seats"]) == (1, 3)


def test_prfboth_results_say_what_the_totals_count(tmp_path):
    # "Total value 33", then "the best assignment gives 30": the 3 of bob's random power are not in the note's.
    text = _flat(_resolve(tmp_path, {"method": "preference", "params": {"mode": "both"}, "submissions": {
        "ann": "FTR", "bob": "*", "cat": "EIRA", "dan": "AGEI", "eve": "AIRE", "fay": "FTI", "gus": "G"}}, "text"))
    assert "Total value 33," in text and "the best assignment gives 30 " in text
    assert "(these totals count the players assigned by their lists, not the random powers of the * players)" \
        in text


def test_ties_are_told_without_contested_and_draws_count_from_1(tmp_path):
    text = _resolve(tmp_path, {"method": "preference", "submissions": {
        "ann": "E", "bob": "E", "cat": "", "dan": "T", "eve": "A", "fay": "I", "gus": "R"}}, "text")
    assert "contested" not in text.replace("uncontested", "")
    assert re.search(r"ann, bob, cat tied for England, France, Germany: \d+ equally good ways, way \d+ drawn "
                     r"\(cat: no list, so any of these\)", text), text
    assert "way 0 " not in text and "of 0" not in text
    ways = int(re.search(r"Draw 1: co-optimal: way (\d+) of", text).group(1))
    assert ways >= 1


def test_a_player_with_only_a_refused_list_is_told_so(harness):
    h = harness
    _auction(h, NAMES)
    h.mail("dan@example.test", "SIGNON ?s pw\nAustria 90")
    h.mail("dan@example.test", "SIGNON ?s pw")
    assert "Your bids: only a refused list (it stands as No Preference)" in h.body(h.last_to("dan@example.test"))
    h.clock.advance(hours=24)
    h.run()
    reminder = [m for m in h.sent_to("dan@example.test") if "reminder" in str(m["Subject"])][-1]
    assert reminder["Subject"] == "?s: reminder, only a refused list from you"


def test_help_names_every_method_at_create_and_set_method(harness):
    from judge.methods import METHODS

    h = harness
    h.mail("ann@example.test", "HELP")
    text = h.body(h.last_to("ann@example.test"))
    line = re.search(r"^  SET METHOD name .*the methods \(also at CREATE\):\n +(.*)$", text, re.M).group(1)
    assert set(line.split(", ")) == set(METHODS)


# -- 6. What a GM expects to see ----------------------------------------------

def test_a_total_under_t_is_accepted_with_a_warning(harness):
    h = harness
    _auction(h, NAMES)
    h.mail("eve@example.test", "SIGNON ?s pw\nA 7, E 6, F 5, G 4, I 3, R 2, T 1")
    reply = _flat(h.body(h.last_to("eve@example.test")))
    assert "Done: bid list accepted" in reply
    assert "your bids add up to 28, 112 under T = 140: allowed, but not recommended" in reply


def test_36_players_in_natural_order_in_the_mails_and_on_the_web(tmp_path):
    subs = {f"Player {k}": "" for k in range(1, 37)}
    text = _resolve(tmp_path, {"method": "preference", "powers": [f"Power{k:02d}" for k in range(36)],
                               "submissions": subs}, "text")
    shown = re.findall(r"^  (Player \d+) ", text.split("Assignment:")[1].split("\n\n")[0], re.M)
    assert shown == [f"Player {k}" for k in range(1, 37)]


def test_the_web_lists_players_in_the_mails_order(harness):
    from judge.web.queries import game_page

    h = harness
    h.mail(GM, "CREATE ?r gmpw random standard")
    for k in (10, 2, 1):
        h.mail(f"Player {k} <p{k}@example.test>", "SIGNON ?r pw")
    with h.judge.sessions() as s:
        page = game_page(s, find_game(s, "r"))
    assert [p["name"] for p in page["players"]] == ["Player 1", "Player 2", "Player 10"]


def test_the_page_of_a_forming_game_says_how_to_join(harness):
    from judge.web.app import templates_environment
    from judge.web.queries import game_page

    h = harness
    h.mail(GM, "CREATE ?r gmpw random standard")
    with h.judge.sessions() as s:
        page = {**game_page(s, find_game(s, "r")), "board": None, "results_text": None}
    html = templates_environment(h.config).get_template("web/public/live.html.j2").render(game=page)
    assert "How to join" in html and "SIGNON ?r yourpassword" in html
    assert "judge&#64;example.test" in html  # the judge's address (its @ an entity, for harvesters)


def test_create_says_how_each_method_starts(harness):
    h = harness
    h.mail(GM, "CREATE ?r gmpw random\nCREATE ?p gmpw preference\nCREATE ?b gmpw blind-auction")
    reply = _flat(h.body(h.last_to(GM)))
    assert "?r created" in reply and "It does not start by itself when the last player is in: you send START" \
        in reply
    assert "It starts by itself when the last player has signed on" in reply
    assert "your START opens the auction" in reply


def test_results_link_no_docs_until_the_operator_sets_docs_url(harness):
    h = harness
    h.mail(GM, "CREATE ?r gmpw random standard")
    for k in range(7):
        h.mail(f"p{k}@example.test", "SIGNON ?r pw")
    h.mail(GM, "SIGNON Mr gmpw\nSTART")
    body = h.body(h.sent_to_kind("p0@example.test", "result")[0])
    assert "github.com" not in body and "http" not in body
    assert "HELP RANDOMNESS" in body


# -- 7. A 36-power variant ----------------------------------------------------

def test_void_is_built_in_with_36_powers_and_a_game_of_it_resolves(harness):
    h = harness
    h.mail(GM, "CREATE ?v gmpw preference void\nSET MANUAL START")
    assert "variant void" in h.body(h.last_to(GM))
    for k in range(36):
        h.send(f"Player {k + 1} <p{k + 1}@example.test>", "SIGNON ?v pw" + (
            "\nSET PREFERENCE Adriatic Sea > Gulf of Lyon > North Sea" if k % 3 == 0 else ""))
    h.run()
    h.mail(GM, "SIGNON Mv gmpw\nSTART")
    assert "?v starts now: its powers are drawn as a job of their own" in h.body(h.sent_to_kind(GM, "reply")[-1])
    with h.judge.sessions() as s:
        record = s.scalars(select(Resolution).where(Resolution.game_id == find_game(s, "v").id)).one().result
    assert len(set(record["assignment"].values())) == 36
