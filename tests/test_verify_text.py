"""`judge verify` on a mail checks its text as well as its record.

A results mail whose resolution.json is intact but whose text was altered
(a power swapped, a player's line removed, another seed shown, "you play"
changed) must not pass: the text is what people read. Real results mails of
the judge are altered here and checked through the real `judge` command;
then judge.verify_text is tested alone on small texts, including the record
a blind game's player gets.
"""

from __future__ import annotations

import email
import email.policy
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.verify import load
from judge.verify_text import check_text, text_difference
from tests.test_verify import GM, PLAYERS, play_auction

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
OTHER = "0123456789abcdef" * 4  # a 64-hex-digit value no record here holds


@pytest.fixture
def judge_h(tmp_path):
    """A judge on SQLite: what is checked is the mail, not the store."""
    from tests.harness import Harness

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'judge.sqlite3'}")
    yield h
    h.close()


def result_mail(h, address: str) -> bytes:
    (msg,) = h.sent_to_kind(address, "result")
    return msg.as_bytes()


def text_of(raw: bytes) -> str:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    return msg.get_body(preferencelist=("plain",)).get_content()


def with_text(raw: bytes, change, cte: str = "quoted-printable") -> bytes:
    """The same mail, its attachment untouched, its text changed by `change(text)`."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    body = msg.get_body(preferencelist=("plain",))
    body.set_content(change(body.get_content()), cte=cte)
    out = msg.as_bytes()
    assert load(out) == load(raw)  # the record is the same: only the text differs
    return out


def judge_verify(tmp_path: Path, raw: bytes) -> subprocess.CompletedProcess:
    path = tmp_path / "mail.eml"
    path.write_bytes(raw)
    return subprocess.run([JUDGE_BIN, "verify", str(path)], capture_output=True, text=True)


def line_with(text: str, needle: str) -> str:
    (line,) = [ln for ln in text.splitlines() if needle in ln]
    return line


def drop_statements(text: str, name: str, power: str) -> str:
    """The text without every line that names both `name` and `power`."""
    return "\n".join(ln for ln in text.split("\n")
                     if not (re.search(rf"(?<![\w@.]){re.escape(name)}(?![\w@])", ln) and power in ln))


def other_power(power: str) -> str:
    return "Turkey" if power != "Turkey" else "Austria"


def expect_differs(tmp_path, raw: bytes, *expected: str) -> str:
    """`judge verify` on the altered mail, in this process (the command
    itself, through click: a new process for each would only be slower)."""
    path = tmp_path / "altered.eml"
    path.write_bytes(raw)
    run = CliRunner().invoke(main, ["verify", str(path)])
    assert run.exit_code == 1, run.output
    (differs,) = [ln for ln in run.output.splitlines() if ln.startswith("DIFFERS: ")]
    assert differs.startswith("DIFFERS: the mail's text: "), differs
    for part in expected:
        assert part in differs, (part, differs)
    # The record itself checked out before the text was read.
    assert "ok: the outcome (assignment and every other field) re-runs identically" in run.output
    return differs


# --- the Blind Auction -----------------------------------------------------

def test_auction_mails_agree_and_every_alteration_of_the_text_is_named(judge_h, tmp_path):
    h = judge_h
    play_auction(h)
    master, mine = result_mail(h, GM), result_mail(h, PLAYERS[2])
    record = load(master)["result"]
    assignment = record["assignment"]

    # (a) Unaltered, the master's and a player's mail verify, text included.
    for raw in (master, mine):
        run = judge_verify(tmp_path, raw)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "ok: the mail's text agrees with the record: it states the power of 7 of 7 players" in run.stdout
        assert "OK: the resolution checks out" in run.stdout
    # The same text sent as base64 is read the same way.
    assert judge_verify(tmp_path, with_text(mine, lambda t: t, cte="base64")).returncode == 0

    # (b) A power swapped in one line of the assignment.
    p0 = PLAYERS[0]
    line = line_with(text_of(master), f"<{p0}>")
    wrong = other_power(assignment[p0])
    expect_differs(tmp_path, with_text(master, lambda t: t.replace(line, line.replace(assignment[p0], wrong))),
                   f'("{line.replace(assignment[p0], wrong).strip()}")', f"gives {p0} {wrong}",
                   f"the record gives them {assignment[p0]}")
    # ... and in the forum post at the end of the master's mail.
    post = line_with(text_of(master), f"[b]{assignment[p0]}[/b]: ")
    expect_differs(tmp_path, with_text(master, lambda t: t.replace(post, post.replace(assignment[p0], wrong))),
                   f"gives {p0} {wrong}")

    # A player's lines removed: every line that states p3's power (the
    # assignment, the step that gave it). The chart still names p3.
    p3 = PLAYERS[3]
    expect_differs(tmp_path, with_text(mine, lambda t: drop_statements(t, "p3", assignment[p3])),
                   f"names {p3} but no line of it states their power", f"the record gives them {assignment[p3]}")

    # "You, p2, play X" changed.
    mine_power = assignment[PLAYERS[2]]
    said = f"You, p2, play {mine_power}."
    assert said in text_of(mine)
    wrong = other_power(mine_power)
    expect_differs(tmp_path, with_text(mine, lambda t: t.replace(said, f"You, p2, play {wrong}.")),
                   f'line 1 ("The Blind Auction of ?vgame is resolved. You, p2, play {wrong}.")',
                   f"says you play {wrong}, but the record gives you ({PLAYERS[2]}) {mine_power}")

    # The seed changed where the text reveals it; a value the record never held.
    seed = record["seed"]
    seed_line = line_with(text_of(mine), f"seed        {seed}")
    expect_differs(tmp_path, with_text(mine, lambda t: t.replace(seed_line, seed_line.replace(seed, OTHER))),
                   f'("seed        {OTHER}")', f"gives the seed as {OTHER}", f"the record's seed is {seed}")
    commitment = load(mine)["commitment"]
    expect_differs(tmp_path, with_text(mine, lambda t: t.replace(f"Seed: {seed}", f"Seed: {commitment}")),
                   f"gives the seed as {commitment}")
    expect_differs(tmp_path, with_text(mine, lambda t: t + f"\nThe real draws: {OTHER}\n"),
                   f"shows {OTHER}, which is none of the record's values")
    # Altered and sent as base64: still read and caught.
    expect_differs(tmp_path, with_text(mine, lambda t: t.replace(seed, OTHER), cte="base64"),
                   f"gives the seed as {OTHER}")


# --- preference lists, with players' own names -----------------------------

LISTS = {"Ann Smith <ann@example.test>": "RFIGATE", "bob@example.test": "E[FGR][TAI]",
         "cat@example.test": "F[RG]", "dan@example.test": "*", "eve@example.test": "",
         "fay@example.test": "Italy, Turkey, [Austria Russia]", "gus@example.test": "GA"}


def play_preference(h) -> None:
    h.mail(GM, "create ?prefs gmpw preference standard\nset prfboth\nset manual start\nsignoff")
    for sender, text in LISTS.items():
        address = sender.split("<")[-1].rstrip(">")
        # ENTROPY naming a power and an address: the players' own words, no claim.
        h.send(sender, f"signon ?prefs pass\nENTROPY France is mine {address}\nset preference {text}\nsignoff")
    h.run()
    h.mail(GM, "signon Mprefs gmpw\nstart")


def test_preference_mails_agree_and_alterations_are_named(judge_h, tmp_path):
    h = judge_h
    play_preference(h)
    ann = "ann@example.test"
    master, anns, cats = result_mail(h, GM), result_mail(h, ann), result_mail(h, "cat@example.test")
    assignment = load(master)["result"]["assignment"]

    # (a) Ann signed on as "Ann Smith": the record's names tie that name to
    # her address, so every mail checks all seven players.
    assert load(master)["names"][ann] == "Ann Smith"
    run = judge_verify(tmp_path, master)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok: the mail's text agrees with the record: it states the power of 7 of 7 players\n" in run.stdout
    for raw, stated in ((anns, "7 of 7 players\n"), (cats, "7 of 7 players\n")):
        run = judge_verify(tmp_path, raw)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "ok: the mail's text agrees with the record: it states the power of " + stated in run.stdout

    # (b) A power swapped in the assignment, by default name and by Ann's own.
    cat_power = assignment["cat@example.test"]
    cat_line = f"  cat{' ' * 22}{cat_power}"
    assert cat_line in text_of(master).split("\n") and cat_line in text_of(cats).split("\n")
    wrong = other_power(cat_power)
    expect_differs(tmp_path, with_text(master, lambda t: t.replace(cat_line, cat_line.replace(cat_power, wrong))),
                   f'("cat{" " * 22}{wrong}")', f"gives cat@example.test {wrong}")
    ann_line = f"  Ann Smith{' ' * 16}{assignment[ann]}"
    assert ann_line in text_of(anns).split("\n")
    wrong = other_power(assignment[ann])
    expect_differs(tmp_path, with_text(anns, lambda t: t.replace(ann_line, ann_line.replace(assignment[ann], wrong))),
                   f"gives {ann} {wrong}", f"the record gives them {assignment[ann]}")

    # "you play" changed, with and without the name.
    said = f"You, Ann Smith, play {assignment[ann]}."
    expect_differs(tmp_path, with_text(anns, lambda t: t.replace(said, f"You play {wrong}.")),
                   f"says you play {wrong}, but the record gives you ({ann}) {assignment[ann]}")

    # A player's lines removed: cat's own mail, without every line that
    # states cat's power ("You, cat, play", the assignment, maybe a step).
    expect_differs(tmp_path, with_text(cats, lambda t: drop_statements(t, "cat", cat_power)),
                   "names cat@example.test but no line of it states their power")

    # The commitment and the secret changed.
    rec = load(anns)
    for label, value in (("commitment  SHA-256", rec["commitment"]), ("secret     ", rec["secret"])):
        expect_differs(tmp_path, with_text(anns, lambda t: t.replace(f"{label} {value}", f"{label} {OTHER}")),
                       f"gives the {label.split()[0]} as {OTHER}")


def test_a_json_record_has_no_text_to_check(judge_h, tmp_path):
    h = judge_h
    play_auction(h)
    msg = email.message_from_bytes(result_mail(h, GM), policy=email.policy.default)
    (part,) = [p for p in msg.walk() if p.get_filename() == "resolution.json"]
    path = tmp_path / "record.json"
    path.write_bytes(part.get_payload(decode=True))
    run = subprocess.run([JUDGE_BIN, "verify", str(path)], capture_output=True, text=True)
    assert run.returncode == 0 and "OK: the resolution checks out" in run.stdout
    assert "mail's text" not in run.stdout


# --- text_difference alone -------------------------------------------------

POWERS7 = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
SEED, COMMIT, SECRET = "aa" * 32, "bb" * 32, "cc" * 32


def results_record(assignment: dict, **extra) -> dict:
    return {"format": "pbem-judge/resolution-1", "game": "g", "method": "preference",
            "input": {"submissions": {p: "" for p in assignment}}, "commitment": COMMIT, "secret": SECRET,
            "entropy": extra.pop("entropy", []),
            "result": {"seed": SEED, "powers": [{"name": w, "letter": w[0]} for w in POWERS7],
                       "assignment": assignment, **extra}}


def player_record(player: str, power: str | None) -> dict:
    """A blind-random game's record for one player: their own power only."""
    return {"format": "pbem-judge/resolution-1", "game": "bg", "method": "blind-random", "role": "player",
            "input": {"player": player, "powers": POWERS7, "blinds": ["12345678"]},
            "commitment": COMMIT, "secret": SECRET, "entropy": [],
            "result": {"seed": SEED, "power": power, "format": "1234x678", "gm_blind": "87654321"}}


TWO = {"ann@x.test": "France", "bob@x.test": "Russia"}
AGREES = f"""Assignment:
  ann                      France
  bob                      Russia
Seed: {SEED}
  commitment  SHA-256 {COMMIT}
  secret      {SECRET}
"""


def test_a_text_that_agrees():
    assert text_difference(AGREES, results_record(TWO)) is None
    check = check_text(AGREES, results_record(TWO))
    assert check.stated == ["ann@x.test", "bob@x.test"] and check.unchecked == []
    # By address, in any case, or as "Name <address>".
    assert text_difference("Ann <ANN@x.test>: France\nRussia: bob@x.test\n", results_record(TWO)) is None


@pytest.mark.parametrize("change, expected", [
    (("bob                      Russia", "bob                      France"),
     'line 3 ("bob                      France") gives bob@x.test France, but the record gives them Russia'),
    (("  bob                      Russia\n", "  bob\n"),
     "the text names bob@x.test but no line of it states their power (the record gives them Russia)"),
    (("  bob                      Russia\n", ""), "the text never names Russia, which the record gives to bob@x.test"),
    ((f"Seed: {SEED}", f"Seed: {OTHER}"),
     f'line 4 ("Seed: {OTHER}") gives the seed as {OTHER}, but the record\'s seed is {SEED}'),
    ((f"Seed: {SEED}", f"Seed: {COMMIT}"), f"gives the seed as {COMMIT}"),
    ((f"SHA-256 {COMMIT}", f"SHA-256 {SEED}"), f"gives the commitment as {SEED}"),
    ((f"secret      {SECRET}", f"secret      {SECRET.upper()[:-1]}D"), "gives the secret as cccc"),
    ((f"Seed: {SEED}", f"Draws: {OTHER}"), f"shows {OTHER}, which is none of the record's values"),
])
def test_each_difference_is_named(change, expected):
    text = AGREES.replace(*change)
    assert text != AGREES
    diff = text_difference(text, results_record(TWO))
    assert diff is not None and expected in diff, diff


def test_lines_about_several_players_or_powers_claim_nothing():
    text = AGREES + "3 players tied at 40 for France: ann, bob\nDraw 1: random for ann: France of France, Russia\n"
    assert text_difference(text, results_record(TWO)) is None
    # A game's name is not a power, nor part of an address or a longer name.
    text = AGREES + "?Russia: ann is done\nannabel Russia\nann.other@x.test Russia\n"
    assert text_difference(text, results_record(TWO)) is None


def test_the_players_own_words_are_no_claim():
    record = results_record(TWO, entropy=[["ann@x.test", "Russia is mine, says ann@x.test"]],
                            rejected={"bob@x.test": "column 2: 'Q' is not a power; Germany listed twice"})
    text = AGREES + "  ann: Russia is mine, says ann@x.test\n  bob: column 2: 'Q' is not a power; Germany listed twice\n"
    assert text_difference(text, record) is None
    # Outside her own words, "Russia" beside ann is a claim again.
    assert "gives ann@x.test Russia" in text_difference(AGREES + "  ann got Russia\n", record)


def test_a_text_that_is_one_power_is_masked_only_beside_its_writer():
    record = results_record(TWO, entropy=[["ann@x.test", "Russia"]])
    assert text_difference(AGREES + "  ann: Russia\n", record) is None
    # Elsewhere, "Russia" is no longer ann's own word: bob's line is checked.
    text = AGREES.replace("bob                      Russia", "bob                      France")
    assert "gives bob@x.test France" in text_difference(text, record)
    # The limit: beside ann's name her own word is hers, whatever the line
    # looks like (her power is still checked on her other lines).
    assert text_difference(AGREES + "  ann   Russia\n", record) is None
    assert "no line of it states their power" in text_difference(
        AGREES.replace("ann                      France", "ann                      Russia"), record)


def test_a_hex_value_from_the_record_needs_no_label():
    record = results_record(TWO, entropy=[["ann@x.test", OTHER]])
    assert text_difference(AGREES + f"  ann: {OTHER}\n", record) is None


def test_you_play_is_the_readers_power():
    text = "The powers are assigned. You, Ann Smith, play France.\n" + AGREES.replace(
        "  ann                      France", "  Ann Smith                France")
    assert "Ann Smith                France" in text
    record = results_record(TWO)
    assert text_difference(text, record, reader="ann@x.test") is None
    assert "says you play Russia, but the record gives you (ann@x.test) France" in text_difference(
        text.replace("play France", "play Russia"), record, reader="ann@x.test")
    # "You, Ann Smith, play" ties the name to the reader: her assignment line is checked too.
    shown = text.replace("Ann Smith                France", "Ann Smith                Italy")
    assert "gives ann@x.test Italy, but the record gives them France" in text_difference(
        shown, record, reader="ann@x.test")
    # Without a reader nothing ties "Ann Smith" to an address: not checked, and said so.
    check = check_text(shown, record)
    assert check.difference is None and check.unchecked == ["ann@x.test"]


def test_a_blind_players_own_mail():
    record = player_record("p0@x.test", "France")
    text = (f"By the GM's record, you play France in ?bg.\n    seed {SEED}\n    commitment {COMMIT}\n"
            "The published blind 12345678 turns it into France.\n")
    assert text_difference(text, record) is None
    # Only the player's own power: no whole assignment is asked for.
    assert check_text(text, record).unchecked == []
    assert text_difference(text.replace("you play France", "you play Russia"), record) == (
        'line 1 ("By the GM\'s record, you play Russia in ?bg.") says you play Russia, but the record gives '
        "you (p0@x.test) France")
    assert "says you play Italy" in text_difference("Your power is Italy.\n", record)
    assert "gives the seed as" in text_difference(text.replace(f"seed {SEED}", f"seed {OTHER}"), record)
    assert "gives the commitment as" in text_difference(text.replace(COMMIT, SEED), record)
    assert "gives p0@x.test Germany" in text_difference(text + "p0@x.test: Germany\n", record)
    # Another field of the record named for a commitment may be shown as one; the seed may not.
    record["input"]["final_key_commitment"] = "dd" * 32
    assert text_difference(text + f"The final key's commitment: {'dd' * 32}\n", record) is None
    assert "gives the seed as dddd" in text_difference(text + f"seed {'dd' * 32}\n", record)
    # A record without the role, as the first player records were: recognised by its shape.
    del record["role"]
    assert "says you play Russia" in text_difference(text.replace("play France", "play Russia"), record)


def test_the_masters_record_of_a_blind_game():
    record = {"method": "blind-random", "commitment": COMMIT, "secret": SECRET, "entropy": [],
              "input": {"players": list(TWO), "powers": POWERS7},
              "result": {"seed": SEED, "assignment": dict(TWO), "corrections": [
                  {"player": "bob@x.test", "message": "1", "power": "Russia", "reason": "decodes to Italy"}]}}
    text = ("  ann <ann@x.test>      France\n  bob <bob@x.test>      Russia\n"
            "  Corrected: bob@x.test's message 1 was damaged; decodes to Italy\n")
    assert text_difference(text, record) is None
    assert "gives ann@x.test Turkey" in text_difference(text.replace("France", "Turkey"), record)


def test_duplex_and_no_power():
    record = results_record({"ann@x.test": ["Austria", "England"], "bob@x.test": None})
    text = "  ann   Austria, England\n  bob   no power\nuncontested first choice: England to ann\n"
    assert text_difference(text, record) is None
    assert "gives ann@x.test France, but the record gives them Austria and England" in text_difference(
        text + "random power (*): France to ann\n", record)
    assert "gives bob@x.test Italy, but the record gives them no power" in text_difference(
        text.replace("bob   no power", "bob   Italy"), record)


def test_a_name_the_record_holds():
    record = results_record({"frank@x.test": "France", "g@x.test": "Germany"})
    record["names"] = {"frank@x.test": "Frank Germany", "g@x.test": "G"}
    text = "  Frank Germany   France\n  G   Germany\n"
    assert text_difference(text, record) is None
    assert "gives frank@x.test Italy" in text_difference(text.replace("France", "Italy"), record)


def test_a_long_text_is_read_in_one_pass():
    """A long mail (and a long run of hex digits) takes no more than a
    pass per pattern: 6 MB in well under the bound."""
    record = results_record(TWO)
    big = AGREES + ("ann bob France Russia 0123 " * 40 + "\n") * 5000 + "f" * 1_000_000 + "\n"
    start = time.thread_time()
    check_text(big, record)
    assert time.thread_time() - start < 10


def test_the_default_name_is_nobodys_when_two_players_share_it():
    record = results_record({"ann@x.test": "France", "ann@y.test": "Russia"})
    text = "  ann <ann@x.test>   France\n  ann <ann@y.test>   Russia\n  ann   Italy\n"
    assert text_difference(text, record) is None
    assert re.search("gives ann@y.test France", text_difference(text.replace("Russia", "France"), record))
