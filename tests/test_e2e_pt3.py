"""Payola Tic-Tac-Toe by mail, end to end on SQLite and PostgreSQL (issue
15): the GM's settings, START, sealed bids (replaced, refused with where
and why), a season closed by its deadline while the daemon was down (fired
with its own time), the season results to both players and an observer
(the grid, the PNG read pixel by pixel, BBCode), ADVICE refused and then
allowed (private, the solver's answer), X's line ending the game, the final
results, and the game's log replayed by `judge resolve` to the same state."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from click.testing import CliRunner

from judge.games import find_game
from judge.methods.pt3 import render
from judge.methods.pt3.persist import from_json
from tests.harness import Harness

Image = pytest.importorskip("PIL.Image")

GM = "gm@example.test"
ANN, BOB, EVE = "ann@example.test", "bob@example.test", "eve@example.test"


def state(h: Harness, name: str = "pt"):
    with h.judge.sessions() as s:
        g = find_game(s, name)
        return from_json(g.method_state["state"]), g.next_tick, g.state


def say(h: Harness, who: str, text: str, game: str = "pt") -> str:
    """`who` mails `text` after SIGNON (the GM: game="Mpt"); the reply, its blanks collapsed."""
    h.mail(who, f"SIGNON {game if game.startswith('M') else '?' + game} {'gmpw' if who == GM else 'pw'}\n{text}")
    return " ".join(h.body(h.last_to(who)).split())


def png_of(msg) -> Image.Image:
    parts = [p for p in msg.iter_attachments() if p.get_content_type() == "image/png"]
    assert len(parts) == 1
    img = Image.open(io.BytesIO(parts[0].get_content()))
    img.load()
    return img.convert("RGB")


def mails(h: Harness, who: str, part: str) -> list:
    return [m for m in h.sent_to(who) if part in str(m["Subject"])]


def test_a_whole_pt3_game_by_mail(harness):
    h = harness
    h.mail(GM, "CREATE ?pt gmpw pt3")
    assert "game ?pt created (pt3" in h.body(h.last_to(GM))
    h.send(ANN, "SIGNON ?pt pw")
    h.send(BOB, "SIGNON ?pt pw")
    h.send(EVE, "SIGNON Opt pw")
    h.run()
    # The GM's settings; bob is made X although ann signed on first.
    reply = say(h, GM, "SET BALANCE X 60\nSET BALANCE O 100.005\nSET BALANCE O 100\nSET X bob\n"
                "SET SEASON 24\nSET ADVICE OFF\nSTART", game="Mpt")
    assert "X's starting balance 60" in reply and "X is bob@example.test" in reply
    assert "O's balance 100.005 has more than 2 decimal places" in reply
    assert "?pt started: X is bob <bob@example.test>, O is ann <ann@example.test>" in reply
    s, next_tick, game_state = state(h)
    assert game_state == "bidding" and s.names == ("bob", "ann") and str(s.balances[1]) == "100"
    assert next_tick == h.clock.now() + timedelta(hours=24)
    start = h.last_to(BOB)
    assert "you are X" in str(start["Subject"]) and png_of(start).size == (render.WIDTH, render.HEIGHT)
    assert "has started" in str(h.last_to(EVE)["Subject"])

    # Season 1 (X's mark): refusals say where and why; a bid is replaced.
    reply = say(h, BOB, "BID 61 B2\nBID 3.255 B2\nBID 3.25 D2\nADVICE")
    assert "line 2, column 5: your bid of 61.00 is more than your balance, 60.00. Bid at most 60.00" in reply
    assert "line 3, column 5: 3.255 has more than 2 decimal places. Write it like 3.25" in reply
    assert "column 10: expected a square (A1..C3, or 1..9)" in reply
    assert "has not allowed ADVICE" in reply
    h.mail(EVE, "SIGNON Opt pw\nBID 1 A1")
    assert "Rejected: only a player of ?pt (or its GM) sends this" in h.body(h.last_to(EVE))
    assert "Rejected: only the GM of ?pt changes its settings" in say(h, ANN, "SET BALANCE O 1000")
    assert "Rejected: line 2, column 1: the GM does not bid" in say(h, GM, "BID 1 A1", game="Mpt")
    reply = say(h, BOB, "BID 3.25 B2\nBID B2 4")
    assert "replacing 3.25 on B2" in reply
    assert "signed on to ?pt as bob. You are X, with 60.00; season 1 closes at" in reply
    assert "your sealed bid: 4.00 on B2" in say(h, BOB, "")
    assert state(h)[0].board == "." * 9  # sealed: nothing placed yet
    reply = say(h, ANN, "BID 4 1")  # a tie: O chooses, and puts X on A1
    assert "completed season 1: X went on A1, chosen by O for 4.00" in reply
    s, *_ = state(h)
    assert s.board == "X........" and [str(b) for b in s.balances] == ["60", "96"]  # only O paid

    # Every player, the observer and the GM get the season's results.
    for who in (ANN, BOB, EVE, GM):
        (m,) = mails(h, who, "season 1, X on A1")
        body = h.body(m)
        assert "Season 1: X on A1, chosen by O, who paid 4.00." in body
        assert "Balances: X (bob) 60.00, O (ann) 96.00." in body
        assert "A   X | . | ." in body and "[color=#c81e1e][b]X[/b][/color]" in body
        img = png_of(m)
        assert img.getpixel(render.centre(0)) == render.X_INK  # the X's strokes cross there
        assert img.getpixel(render.centre(4)) == render.WHITE

    # Season 2 (O's mark): only bob bids; the deadline runs out while the
    # daemon is down, and fires with its own time.
    deadline = state(h)[1]
    say(h, BOB, "BID 0 C3")
    h.clock.advance(hours=30)
    h.run()
    s, next_tick, _ = state(h)
    assert s.board == "X.......O" and s.seasons[-1].at == deadline and s.seasons[-1].missing == ("O",)
    assert next_tick == deadline + timedelta(hours=24)
    (m,) = mails(h, ANN, "season 2, O on C3")
    assert "(O sent no bid)" in h.body(m)
    img = png_of(m)
    x0, y0, x1, y1 = render.cell_box(8)
    ring = (x1 - render.CELL // 4 - render.STROKE // 2, (y0 + y1) // 2)  # on O's ring, right of its centre
    assert img.getpixel(ring) == render.O_INK and img.getpixel(render.centre(8)) == render.WHITE
    assert img.getpixel(render.centre(0)) == render.X_INK

    # ADVICE once the GM allows it: private, the solver's answer.
    assert "ADVICE is now allowed" in say(h, GM, "SET ADVICE ON", game="Mpt")
    assert "ADVICE allowed" in say(h, GM, "LIST", game="Mpt")
    assert "the solver's advice is in a private mail" in say(h, BOB, "ADVICE")
    (advice,) = mails(h, BOB, "the solver's advice")
    assert advice["X-Judge-Private"] == "yes" and not mails(h, ANN, "the solver's advice")
    from fractions import Fraction

    from judge.methods.pt3 import solver

    expected = solver.advise("X.......O", Fraction(60), Fraction(96))
    text = " ".join(h.body(advice).split())
    assert f"at these balances, {expected.winner} wins" in text
    assert f"The solver's bid: {solver.decimal_text(expected.bid)}" in text

    # O plays badly from here: X takes B2 (season 3) and C1 (season 5),
    # outbids O to put O's mark on C2 (season 6) and completes A1-B1-C1.
    say(h, BOB, "BID 10 B2")
    say(h, ANN, "BID 9.99 A2")
    say(h, ANN, "BID 1 A3")
    say(h, BOB, "BID 0.5 B1")
    assert state(h)[0].board == "X.O.X...O"
    say(h, BOB, "BID 20 C1")
    say(h, ANN, "BID 19 B1")
    say(h, BOB, "BID 6 C2")
    say(h, ANN, "BID 5 B1")
    assert state(h)[0].board == "X.O.X.XOO"
    reply = say(h, ANN, "BID 5 B2\nBID 2 A2")
    assert "line 2, column 7: B2 is taken (X is on it). Choose an empty square: A2, B1, B3. Nothing changed." in reply
    say(h, BOB, "BID 3 b1")
    s, next_tick, game_state = state(h)
    assert s.over and s.winner == "X" and s.board == "X.OXX.XOO" and game_state == "resolved" and next_tick is None
    assert [str(b) for b in s.balances] == ["21", "95"]
    for who in (ANN, BOB, EVE, GM):
        (m,) = mails(h, who, "is over, X wins")
        body = h.body(m)
        assert "X (bob) wins with the line A1-B1-C1" in body
        img = png_of(m)
        assert img.getpixel(render.centre(6)) != render.WHITE  # X on C1, struck through
    assert "is over (X won)" in say(h, ANN, "BID 1 C2")

    # The record in `resolutions`: the log and its replay, which judge verify re-runs.
    from sqlalchemy import select

    from judge import record as sealed_record
    from judge.store.models import Resolution
    from judge.verify import verify

    with h.judge.sessions() as session:
        g = find_game(session, "pt")
        (row,) = session.scalars(select(Resolution).where(Resolution.game_id == g.id)).all()
        rec = sealed_record.sealed(g.name, row.method, row.input, None, row.result)
    assert row.method == "pt3" and row.result["board"] == s.board and row.result["winner"] == "X"
    assert verify(rec).ok
    rec["result"]["balances"]["X"] = "22"
    verdict = verify(rec)
    assert not verdict.ok and "balances" in verdict.difference

    # The log replays to the same final state.
    from judge.cli import main
    from judge.methods.pt3.live import log_file

    from judge.driver.view import game_view

    with h.judge.sessions() as session:
        data = log_file(game_view(find_game(session, "pt")))
    path = h.config.data_dir / "pt.json"
    path.write_text(json.dumps(data))
    run = CliRunner().invoke(main, ["resolve", str(path), "--format", "json"])
    assert run.exit_code == 0, run.output
    out = json.loads(run.output)
    assert out["board"] == s.board and out["winner"] == "X" and out["balances"] == {"X": "21", "O": "95"}
    assert [x["at"] for x in out["seasons"]] == [x.at.isoformat() for x in s.seasons]
    run = CliRunner().invoke(main, ["resolve", str(path), "--format", "text"])
    assert run.exit_code == 0 and "X wins with the line A1-B1-C1" in run.output


def test_judge_pt3_advise_and_log_read_the_store(harness, tmp_path):
    """`judge pt3 advise GAME` says what ADVICE says, from the store;
    `judge pt3 log GAME` prints the file `judge resolve` replays."""
    from fractions import Fraction

    from judge.cli import main
    from judge.methods.pt3 import solver

    h = harness
    h.mail(GM, "CREATE ?pt gmpw pt3\nSET BALANCE X 7\nSET BALANCE O 10")
    h.send(ANN, "SIGNON ?pt pw")
    h.send(BOB, "SIGNON ?pt pw")
    h.run()
    runner = CliRunner()
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{h.config.database_url}"\n')
    args = ["--config", str(config), "--data-dir", str(h.config.data_dir)]
    run = runner.invoke(main, [*args, "pt3", "advise", "pt"])
    assert run.exit_code != 0 and "?pt has not started" in run.output
    say(h, GM, "START", game="Mpt")
    say(h, ANN, "BID 1 B2")  # ann signed on first: X
    say(h, BOB, "BID 1.5 A2")  # O wins and puts X on A2
    run = runner.invoke(main, [*args, "pt3", "advise", "?pt", "--format", "json"])
    assert run.exit_code == 0, run.output
    out = json.loads(run.output)
    expected = solver.as_json(solver.advise(".X.......", Fraction(7), Fraction("8.5")))
    assert out["season"] == 2 and out["names"] == {"X": "ann", "O": "bob"}
    assert {k: out[k] for k in expected} == expected
    run = runner.invoke(main, [*args, "pt3", "advise", "pt"])
    assert run.exit_code == 0 and f"{expected['winner']} wins with best play" in run.output
    run = runner.invoke(main, [*args, "pt3", "log", "pt"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert [e["text"] for e in data["events"]] == ["BID 1 B2", "BID 1.5 A2"]
    path = tmp_path / "pt.json"
    path.write_text(run.output)
    run = runner.invoke(main, ["resolve", str(path), "--format", "json"])
    assert json.loads(run.output)["board"] == ".X......."
    run = runner.invoke(main, [*args, "pt3", "advise", "nosuch"])
    assert run.exit_code != 0 and "no game 'nosuch'" in run.output


def test_replace_hands_the_side_over_and_list_shows_the_board(harness):
    """The GM's REPLACE in a running game: the replacement plays the old
    player's side (its balance, its sealed bid); LIST shows the board."""
    import re

    h = harness
    h.mail(GM, "CREATE ?pt gmpw pt3")
    h.send(ANN, "SIGNON ?pt pw")
    h.send(BOB, "SIGNON ?pt pw")
    h.run()
    say(h, GM, "START", game="Mpt")
    say(h, ANN, "BID 2 B2")  # ann: X
    say(h, BOB, "BID 1 A1")
    say(h, BOB, "BID 3 C3")  # bob's sealed bid for season 2
    h.mail(GM, "SIGNON Mpt gmpw\nREPLACE bob Zed <zed@example.test>")
    assert "zed@example.test plays O from now on" in h.body(h.last_to(GM))
    (asked,) = [m for m in h.sent_to("zed@example.test") if "as a replacement" in str(m["Subject"])]
    token = re.search(r"^    ([A-Z0-9]{10})$", h.body(asked), re.M).group(1)
    assert "Rejected" in say(h, BOB, "BID 4 C3")
    h.mail("zed@example.test", f"SIGNON ?pt {token}\nSET PASSWORD zedpw\nBID 5 C2")
    assert "Done: your sealed bid of 5.00 for season 2 (square C2) is in, replacing 3.00 on C3" in \
        " ".join(h.body(h.last_to("zed@example.test")).split())
    say(h, ANN, "BID 1 A1")
    s, *_ = state(h)
    assert s.board == "....X..O." and [str(b) for b in s.balances] == ["98", "95"]
    assert mails(h, "zed@example.test", "season 2, O on C2") and not mails(h, BOB, "season 2")
    h.mail(ANN, "SIGNON ?pt pw\nLIST ?pt")
    text = h.body(h.last_to(ANN))
    assert "B   . | X | ." in text and "C   . | O | ." in text
