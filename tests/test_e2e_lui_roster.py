"""Lowest Unique Integer by mail, end to end on SQLite and PostgreSQL: the
GM's REPLACE and EJECT during a running game (through Method.roster_changed),
LIST showing the board, the ToL-gift deadline running out (with the daemon
up, and while it was down: fired with its own time), and the final record
stored in `resolutions`, which `judge verify` re-runs (and refuses once
tampered with)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from judge import record as sealed_record
from judge.games import find_game
from judge.store.models import Resolution
from tests.harness import Harness
from tests.test_e2e_lui import GM, addr, at, lui_events, restart, say, setup, state

pytest.importorskip("PIL.Image")

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
PRIZES = "\n".join(f"SET PRIZE {seat} 1 1" for seat in "RSTUVWXYZ")


def totals(s) -> tuple[int, int]:
    """Chips (held, or paid for seats) and garnets in the game."""
    return (sum(p.chips for p in s.players) + sum(w.amount for w in s.won), sum(p.garnets for p in s.players))


def stored_record(h: Harness, name: str) -> dict:
    """The game's record in `resolutions`, sealed as a results mail carries it."""
    with h.judge.sessions() as s:
        g = find_game(s, name)
        (row,) = s.scalars(select(Resolution).where(Resolution.game_id == g.id)).all()
        assert row.method == "lui"
        return sealed_record.sealed(g.name, row.method, row.input, None, row.result)


def judge_verify(tmp_path: Path, record: dict, name: str) -> subprocess.CompletedProcess:
    path = tmp_path / name
    path.write_text(json.dumps(record))
    return subprocess.run([JUDGE_BIN, "verify", str(path)], capture_output=True, text=True)


def test_replace_and_eject_during_the_game_then_the_record_verifies(tmp_path, migrated_database_url):
    data_dir = tmp_path / "data"
    h = Harness(data_dir, migrated_database_url)
    setup(h, "rs", "F8", ["a1", "a2", "a3", "a4"], PRIZES + "\nSET PLAYERS 4\nSET GARNETS a2 4")
    _, opens, _, _ = state(h, "rs")
    assert "pregame bid of 3 on Z is stored" in say(h, "a3", "rs", "BID Z 3")
    at(h, opens, 1)
    h.run()
    assert "Done: your bid of" in say(h, "a1", "rs", "BID S 2")
    assert "Done: bought" in say(h, "a2", "rs", "BUY 1\nBID T 5\nSET BOARD MAIL OFF")
    before, *_ = state(h, "rs")
    a2 = before.player("a2")
    assert (a2.chips, a2.garnets) == (17, 2)

    # REPLACE: zed takes over a2's seat, whole, under the name zed.
    at(h, opens, 2)
    h.mail(GM, "SIGNON Mrs gmpw\nREPLACE a2 Zed <zed@example.test>")
    reply = h.body(h.last_to(GM))
    assert "replaced by zed@example.test (Zed)" in reply
    assert "in the game, zed takes over a2's seat: standing bids, chips, garnets, priority" in reply
    s, *_ = state(h, "rs")
    zed = s.player("zed")
    assert (zed.chips, zed.garnets, zed.priority, zed.bought, zed.board_mail) == (17, 2, a2.priority, 1, True)
    assert s.standing_on("T").player == "zed" and not s.has_player("a2")
    assert totals(s) == totals(before)
    news = [h.body(m) for m in h.sent_to(addr("a1")) if "zed replaces a2" in h.body(m)]
    assert len(news) == 1 and "with everything a2 held" in news[0]
    (asked,) = [m for m in h.sent_to("zed@example.test") if "as a replacement" in str(m["Subject"])]
    token = re.search(r"^    ([A-Z0-9]{10})$", h.body(asked), re.M).group(1)
    assert any("the board has changed" in str(m["Subject"]) for m in h.sent_to("zed@example.test"))
    assert "Rejected: you are no longer in ?rs (replaced)" in say(h, "a2", "rs", "BID U 6")
    h.mail("zed@example.test", f"SIGNON ?rs {token}\nSET PASSWORD zedpw\nBID U 6")
    reply = h.body(h.last_to("zed@example.test"))
    assert "Done: your bid of 6 on U stands" in reply and "Chips left for bidding: 6" in reply
    h.mail("zed@example.test", "SIGNON ?rs zedpw\nBOARD")
    board = h.body(h.sent_to("zed@example.test")[-2])
    assert "zed" in board and "a2 " not in board

    # EJECT: a3's standing bid (the pregame's 3 on Z) is cancelled; what a3
    # holds stays a3's.
    before, *_ = state(h, "rs")
    h.mail(GM, "SIGNON Mrs gmpw\nEJECT a3")
    reply = h.body(h.last_to(GM))
    assert "a3 <a3@example.test> ejected from ?rs; in the game, a3's standing bids (3 on Z) are cancelled" in reply
    s, *_ = state(h, "rs")
    assert s.standing_on("Z") is None and s.player("a3").out and s.player("a3").chips == 16
    assert totals(s) == totals(before)
    assert any("The GM ejected a3" in h.body(m) and "3 on Z" in h.body(m) for m in h.sent_to(addr("a4")))
    assert "Rejected: you are no longer in ?rs (ejected)" in say(h, "a3", "rs", "BID Y 9")
    assert "Done: your bid of 1 on Z stands" in say(h, "a4", "rs", "BID Z 1")  # lower than the cancelled 3

    # The daemon stops; every timer runs out while it is down.
    h = restart(h, data_dir, migrated_database_url)
    at(h, opens, 60)
    h.run()
    s, _, _, game_state = state(h, "rs")
    assert s.phase == "gifts" and s.winner == "a4" and s.winning_seat == "Z"
    # F8: Z's neighbours are W, X, T, Y; T is zed's; the others are unclaimed.
    assert dict(s.tol_awarded) == {"a4": 4, "zed": 1}
    assert s.ec == "zed" and s.ec_by == "rule"  # 17 - 5 - 6 = 6 chips, the fewest of those still in
    assert "Done: you gave a ToL to a1" in say(h, "a4", "rs", "GIVE TOL a1")
    s, _, _, game_state = state(h, "rs")
    assert game_state == "resolved" and s.phase == "finished"
    assert len(h.sent_to_kind("zed@example.test", "result")) == 1
    assert not h.sent_to_kind(addr("a3"), "result") and not h.sent_to_kind(addr("a2"), "result")

    # The record: the replay of its input is the game.
    rec = stored_record(h, "rs")
    data, result = rec["input"], rec["result"]
    assert data["players"] == ["a1", "a2", "a3", "a4"]
    assert {"at": pytest.approx(2, abs=0.01), "player": None, "text": "REPLACE a2 zed"} in data["events"]
    assert any(e["text"] == "EJECT a3" and e["player"] is None for e in data["events"])
    assert result["winner"] == "a4" and result["ec"] == "zed" and result["ejected"] == ["a3"]
    assert result["chips"] == {p.name: p.chips for p in s.players}
    assert result["garnets"] == {p.name: p.garnets for p in s.players}
    assert result["priority"] == {p.name: p.priority for p in s.players}
    assert result["seats"]["T"]["winner"] == "zed" and result["seats"]["S"]["winner"] == "a1"
    run = judge_verify(tmp_path, rec, "record.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK: the resolution checks out" in run.stdout
    rec["result"]["chips"]["a1"] += 1
    run = judge_verify(tmp_path, rec, "tampered.json")
    assert run.returncode == 1 and "DIFFERS: result.chips.a1: the record says 15, the re-run gives 14" in run.stdout
    h.close()


def test_list_shows_the_board_of_a_running_game(harness):
    h = harness
    setup(h, "ls", "F8", ["b1", "b2", "b3"], PRIZES + "\nSET PLAYERS 3")
    _, opens, _, _ = state(h, "ls")
    at(h, opens, 1)
    h.run()
    say(h, "b1", "ls", "BID Z 4")
    text = say(h, "b2", "ls", "LIST ?ls")
    h.mail(addr("b2"), "SIGNON ?ls pw\nBOARD")
    board = h.body(h.sent_to(addr("b2"))[-2])
    table = board[board.index("+---"):board.index("Chips left for bidding")].rstrip()
    listed = "\n".join(line[4:] for line in text.split("  The board:\n")[1].splitlines())
    assert table in listed  # the same table as the BOARD mail
    assert "| b1             bid 4 |" in listed and "b1       12   (standing: 4 on Z)" in listed
    assert "Powers (" not in text and "no list" not in text


def gift_game(h: Harness, name: str) -> tuple:
    """F8 with 4 players, EC deadline 6 h and gift deadline 12 h set by the
    GM; c1 wins S with 1 and the auction ends at 25 h for lack of bids."""
    setup(h, name, "F8", ["c1", "c2", "c3", "c4"],
          PRIZES + "\nSET PLAYERS 4\nSET EC DEADLINE 6\nSET GIFT DEADLINE 12")
    reply = h.body(h.last_to(GM))
    assert "Done: the winner's time to choose the EC 6 h." in reply
    assert "Done: the time for the ToL gifts 12 h (then the GM is told who still owes them)." in reply
    assert "the EC's choice 6 h, the ToL gifts 12 h" in reply
    _, opens, _, _ = state(h, name)
    at(h, opens, 1)
    h.run()
    say(h, "c1", name, "BID S 1")
    return opens


def test_the_deadlines_run_out_with_the_daemon_up_the_gm_decides(tmp_path, migrated_database_url):
    h = Harness(tmp_path / "data", migrated_database_url)
    opens = gift_game(h, "gd")
    at(h, opens, 25.5)
    h.run()
    s, _, next_tick, _ = state(h, "gd")
    assert s.phase == "ec" and s.ec_deadline == 31 and next_tick == opens + timedelta(hours=31)
    at(h, opens, 31.25)  # the daemon runs a quarter of an hour late
    h.run()
    assert [e.data["fired_at"] for e in lui_events(h, "gd", "EcOverdue")] == [(opens + timedelta(hours=31)).isoformat()]
    h.mail(GM, "SIGNON Mgd gmpw\nEC c2")
    assert "Done: c2 is the EC" in h.body(h.last_to(GM))
    s, _, next_tick, _ = state(h, "gd")
    # c1: 1 ToL, and one for each of S's four neighbours, all unclaimed: 5, owes 4.
    assert s.phase == "gifts" and s.gift_deadline == pytest.approx(31.25 + 12, abs=0.01)
    at(h, opens, 44)
    h.run()
    (overdue,) = lui_events(h, "gd", "GiftsOverdue")
    assert overdue.data["owed"] == [["c1", 4]]
    gm_news = next(b for b in map(h.body, h.sent_to(GM)) if "the ToL gifts are overdue" in b)
    assert "c1 still owes 4. The GM may send GIVE TOL for them after FOR player." in gm_news
    assert state(h, "gd")[3] == "bidding"  # the judge chooses no recipient
    h.mail(GM, "SIGNON Mgd gmpw\nFOR c1\nGIVE TOL c3\nGIVE TOL c4")
    assert h.body(h.last_to(GM)).count("Done: you gave a ToL to") == 2
    s, _, next_tick, game_state = state(h, "gd")
    assert game_state == "resolved" and s.phase == "finished" and next_tick is None
    assert {p.name: p.tol for p in s.players} == {"c1": 3, "c2": 0, "c3": 1, "c4": 1}
    body = h.body(h.sent_to_kind(addr("c3"), "result")[0])
    assert "EC: c2 (gm)" in body and "c1 -> c3" in body
    rec = stored_record(h, "gd")
    assert rec["result"]["gifts"] == [{"at": rec["result"]["gifts"][0]["at"], "from": "c1", "to": "c3"},
                                      {"at": rec["result"]["gifts"][1]["at"], "from": "c1", "to": "c4"}]
    assert judge_verify(tmp_path, rec, "gd.json").returncode == 0
    h.close()


def test_the_gift_deadline_runs_out_while_the_daemon_is_down(tmp_path, migrated_database_url):
    data_dir = tmp_path / "data"
    h = Harness(data_dir, migrated_database_url)
    opens = gift_game(h, "gw")
    at(h, opens, 26)
    h.run()
    assert "Done: c3 is the EC" in say(h, "c1", "gw", "EC c3")
    assert "Done: you gave a ToL to c2" in say(h, "c1", "gw", "GIVE TOL c2")
    s, _, next_tick, _ = state(h, "gw")
    assert s.gift_deadline == pytest.approx(38, abs=0.01) and next_tick == opens + timedelta(hours=s.gift_deadline)
    h = restart(h, data_dir, migrated_database_url)
    at(h, opens, 70)
    h.run()
    (overdue,) = lui_events(h, "gw", "GiftsOverdue")
    assert overdue.data["fired_at"] == (opens + timedelta(hours=s.gift_deadline)).isoformat()
    assert overdue.at == h.clock.now() and overdue.data["owed"] == [["c1", 3]]
    s, _, next_tick, game_state = state(h, "gw")
    assert s.gifts_overdue and next_tick is None and game_state == "bidding"
    # The player gives the last one late, still their own choice: the judge finishes.
    assert "Done: you gave a ToL to c4" in say(h, "c1", "gw", "GIVE TOL c4")
    s, _, _, game_state = state(h, "gw")
    assert game_state == "resolved" and s.finished_at == pytest.approx(70, abs=0.01)
    assert {p.name: p.tol for p in s.players} == {"c1": 3, "c2": 1, "c3": 0, "c4": 1}
    assert judge_verify(tmp_path, stored_record(h, "gw"), "gw.json").returncode == 0
    h.close()


def test_judge_lui_log_is_the_file_judge_resolve_replays(harness, tmp_path):
    """Issue 26, point 15: `judge lui log GAME`, as `judge pt3 log`: the
    running game's log from the store, which `judge resolve` replays to the
    game as it stands."""
    from click.testing import CliRunner

    from judge.cli import main

    h = harness
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{h.config.database_url}"\n')
    args = ["--config", str(config), "--data-dir", str(h.config.data_dir)]
    runner = CliRunner()
    h.mail(GM, "CREATE ?nolui gmpw pt3")
    run = runner.invoke(main, [*args, "lui", "log", "nolui"])
    assert run.exit_code != 0 and "?nolui is a pt3 game, not Lowest Unique Integer" in run.output
    setup(h, "lg", "F8", ["d1", "d2", "d3"], PRIZES + "\nSET PLAYERS 3")
    _, opens, _, _ = state(h, "lg")
    say(h, "d1", "lg", "BID Z 4")  # a pregame bid
    at(h, opens, 1)
    h.run()
    say(h, "d2", "lg", "BID Z 5\nBID Y 5")  # the second is refused (rule 4)
    run = runner.invoke(main, [*args, "lui", "log", "?lg"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert data["events"] == [{"at": -24.0, "player": "d1", "text": "BID Z 4"},
                              {"at": 1.0, "player": "d2", "text": "BID Z 5"},
                              {"at": 1.0, "player": "d2", "text": "BID Y 5"}]
    assert data["until"] == 1.0 and data["players"] == ["d1", "d2", "d3"]
    path = tmp_path / "lg.json"
    path.write_text(run.output)
    replayed = json.loads(runner.invoke(main, ["resolve", str(path), "--format", "json"]).output)
    live, *_ = state(h, "lg")
    assert replayed["standing"] == {"Z": {"player": "d2", "bid": 5, "placed_at": 1.0, "ends_at": 25.0}}
    assert [r["ok"] for r in replayed["results"]] == [True, True, False] and replayed["results"][2]["rule"] == "4"
    assert replayed["phase"] == live.phase == "auction"
    assert [h_["player"] for h_ in replayed["history"]] == [r.player for r in live.history]
    run = runner.invoke(main, [*args, "lui", "log", "nosuch"])
    assert run.exit_code != 0 and "no game 'nosuch'" in run.output
