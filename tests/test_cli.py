"""The `judge` command line: the offline resolver, the moderators' views and
the MTA pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli import main
from tests.harness import Harness, make_mail

POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
JUDGE_BIN = str(Path(sys.executable).with_name("judge"))


def auction_file(tmp_path: Path, submissions: dict[str, str], **extra) -> Path:
    path = tmp_path / "auction.json"
    path.write_text(json.dumps({"method": "blind-auction", "powers": POWERS,
                                "params": {"T": 140, "M": 70, "D": 1}, "submissions": submissions, **extra}))
    return path


SUBMISSIONS = {
    "alice": "Austria: 40\nEngland: 30\nFrance: 20\nGermany: 15\nItaly: 10\nRussia: 5\nTurkey: 1",
    "bob": "A=40, E=30, F=20, G=15, I=10, R=5, T=1",
    "carol": "No Preference",
    "dave": "Austria 70\nEngland 70",
}


def resolve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([JUDGE_BIN, "resolve", *args], capture_output=True, text=True)


def test_resolve_json_is_deterministic_and_complete(tmp_path):
    f = auction_file(tmp_path, SUBMISSIONS)
    first = resolve(str(f), "--seed", "c0ffee")
    assert first.returncode == 0, first.stderr
    assert resolve(str(f), "--seed", "c0ffee").stdout == first.stdout
    out = json.loads(first.stdout)
    assert {"method", "seed", "assignment", "rejected", "draws"} <= set(out)
    assert out["method"] == "blind-auction" and out["seed"] == "c0ffee"
    assert sorted(out["assignment"]) == sorted(SUBMISSIONS)
    assert len(set(out["assignment"].values())) == 4
    assert list(out["rejected"]) == ["dave"] and "no bid on France" in out["rejected"]["dave"]
    assert {out["assignment"]["alice"], out["assignment"]["bob"]} >= {"Austria"}
    # alice and bob tie for Austria at 40: the draw between them is recorded.
    assert out["draws"][0]["what"] == "player" and out["draws"][0]["options"] == ["alice", "bob"]
    others = {json.loads(resolve(str(f), "--seed", s).stdout)["assignment"]["alice"] for s in ("01", "02", "03", "04", "05", "06")}
    assert others == {"Austria", "England"}


def test_resolve_text_and_bbcode(tmp_path):
    f = auction_file(tmp_path, SUBMISSIONS)
    text = resolve(str(f), "--seed", "00", "--format", "text")
    assert text.returncode == 0
    assert "Assignment:" in text.stdout and "Seed: 00" in text.stdout and "(No Preference)" in text.stdout
    bb = resolve(str(f), "--seed", "00", "--format", "bbcode")
    assert "[table]" in bb.stdout and "[b]Blind Auction results[/b]" in bb.stdout


def test_resolve_without_seed_draws_one_and_prints_it(tmp_path):
    f = auction_file(tmp_path, SUBMISSIONS)
    out = json.loads(resolve(str(f)).stdout)
    assert len(out["seed"]) == 64
    again = json.loads(resolve(str(f), "--seed", out["seed"]).stdout)
    assert again == out


@pytest.mark.parametrize("content, message", [
    ("{", "not JSON"),
    (json.dumps({"method": "nope", "submissions": {"a": ""}}), "unknown method"),
    (json.dumps({"params": {"T": 140, "M": 70, "D": 3}, "submissions": {"a": "No Preference"}}), "D must be 1"),
    (json.dumps({"submissions": {}}), "submissions"),
    (json.dumps({"powers": ["A", "B"], "submissions": {"a": "", "b": "", "c": ""}}), "3 players for 2 powers"),
])
def test_resolve_refuses_bad_files(tmp_path, content, message):
    f = tmp_path / "bad.json"
    f.write_text(content)
    run = resolve(str(f), "--seed", "00")
    assert run.returncode == 1 and message in run.stderr


def test_ties_are_broken_with_equal_chances(tmp_path):
    """Seven No Preference players: every power goes to every player with
    equal chances. Chi-square over 1400 fixed seeds (deterministic)."""
    from judge.resolution import run_resolution

    players = [f"p{i}" for i in range(7)]
    data = {"powers": POWERS, "params": {"T": 140, "M": 70, "D": 1},
            "submissions": dict.fromkeys(players, "No Preference")}
    counts = Counter()
    runs = 1400
    for seed in range(runs):
        out = run_resolution(data, seed.to_bytes(4, "big"))
        counts.update(out["assignment"].items())
    for player in players:
        observed = [counts[(player, p)] for p in POWERS]
        expected = runs / 7
        chi2 = sum((o - expected) ** 2 / expected for o in observed)
        assert chi2 < 22.46, (player, observed)  # df = 6, p = 0.001


def test_games_and_log_for_moderators(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.mail("gm@example.test", "CREATE ?vienna gmpw\nSET DEADLINE +24h")
    h.mail("ann@example.test", "SIGNON ?vienna annpw\nLIST")
    h.mail("eve@example.test", "SIGNON Mvienna guess")  # a failed attempt is in the game's log too
    h.close()
    runner = CliRunner()
    env = {"JUDGE_DATA_DIR": str(tmp_path / "data")}
    args = ["-c", str(_config(tmp_path))]
    games = runner.invoke(main, [*args, "games"], env=env)
    assert games.exit_code == 0, games.output
    assert "vienna" in games.output and "forming" in games.output and "1/7 players" in games.output
    assert games.output.splitlines()[0].split()[:3] == ["GAME", "METHOD", "STATE"]
    assert " 2026 " in games.output and " UTC " in games.output  # the mails' date format
    as_json = json.loads(runner.invoke(main, [*args, "games", "--format", "json"], env=env).output)
    assert as_json[0]["game"] == "vienna" and as_json[0]["master"] == "gm@example.test"
    log = runner.invoke(main, [*args, "log", "vienna"], env=env)
    assert log.exit_code == 0
    lines = log.output.splitlines()
    assert any("mail in" in l and "gm@example.test" in l for l in lines)
    assert any("line 1 of mail" in l and "CREATE ?vienna ****" in l for l in lines)
    assert any("mail out" in l and "ann@example.test" in l for l in lines)
    assert any("rejected" in l and "SIGNON Mvienna ****" in l and "wrong master password" in l for l in lines)
    assert any("mail in" in l and "eve@example.test" in l for l in lines)
    assert "annpw" not in log.output and "gmpw" not in log.output and "guess" not in log.output
    events = json.loads(runner.invoke(main, [*args, "log", "?vienna", "--format", "json"], env=env).output)
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    assert {"inbound", "command", "outbound", "state"} <= {e["kind"] for e in events}
    assert not any("{" in l or "': " in l for l in lines), [l for l in lines if "{" in l]  # sentences, not dicts
    assert any(l.split("  ", 1)[1].startswith("state: deadline 2026") for l in lines)
    missing = runner.invoke(main, [*args, "log", "nosuch"], env=env)
    assert missing.exit_code == 1 and "no game" in missing.output


def _config(tmp_path: Path, **judge: float) -> Path:
    """A config file of a judge on SQLite in tmp_path ([judge] options added)."""
    path = tmp_path / "judge.toml"
    extra = "".join(f"{k} = {v}\n" for k, v in judge.items())
    path.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                    f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n{extra}')
    return path


def test_deliver_reads_one_mail_from_stdin(tmp_path):
    config = _config(tmp_path)
    raw = make_mail("ann@example.test", "CREATE ?piped pw\nLIST", message_id="<pipe-1@x>")
    env = {**os.environ, "JUDGE_CONFIG": str(config)}
    first = subprocess.run([JUDGE_BIN, "deliver"], input=raw, capture_output=True, env=env)
    assert first.returncode == 0, first.stderr
    assert b"stored" in first.stdout
    again = subprocess.run([JUDGE_BIN, "deliver"], input=raw, capture_output=True, env=env)
    assert again.returncode == 0 and b"duplicate" in again.stdout
    from judge.transports.maildir import read_all

    replies = read_all(tmp_path / "data" / "outbox")
    assert len(replies) == 1 and b"?piped: preference" in replies[0].replace(b"\r\n", b"\n")


def test_deliver_asks_the_mta_to_retry_when_the_store_is_down(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[judge]\ndatabase = "postgresql://nobody@127.0.0.1:1/none"\n'
                      f'data_dir = "{tmp_path / "data"}"\n')
    run = subprocess.run([JUDGE_BIN, "-c", str(config), "deliver"], input=make_mail("a@x.test", "LIST"),
                         capture_output=True)
    assert run.returncode == 75 and b"temporary failure" in run.stderr


def test_outbox_lists_failed_mail_and_retries_it(tmp_path):
    import socket

    from sqlalchemy import select

    from judge.store.models import OutboxMessage
    from judge.transports.smtp import SmtpSettings, SmtpTransport

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.judge.transport = SmtpTransport(SmtpSettings(host="127.0.0.1", port=closed, timeout=2))
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "max_attempts": 1})
    h.mail("ann@example.test", "HELP")
    h.mail("bob@example.test", "LIST")
    with h.judge.sessions() as s:
        ids = [r.id for r in s.scalars(select(OutboxMessage).order_by(OutboxMessage.id))]
    h.close()
    runner = CliRunner()
    args = ["-c", str(_config(tmp_path))]
    listed = runner.invoke(main, [*args, "outbox"])
    assert listed.exit_code == 0
    assert listed.output.count("failed") == 2 and "last error" in listed.output and "ann@example.test" in listed.output
    rows = json.loads(runner.invoke(main, [*args, "outbox", "--format", "json"]).output)
    assert [r["status"] for r in rows] == ["failed", "failed"]
    retried = runner.invoke(main, [*args, "outbox", "retry", str(ids[0]), "9999"])
    assert retried.exit_code == 1 and f"#{ids[0]}: queued again" in retried.output and "#9999: no such mail" in retried.output
    rows = json.loads(runner.invoke(main, [*args, "outbox", "--format", "json"]).output)
    assert [r["status"] for r in rows] == ["queued", "failed"] and rows[0]["attempts"] == 0


def test_serve_refuses_a_default_method_the_judge_has_not(tmp_path):
    """[judge] default_method names a method: checked when the daemon starts
    (exit 2, which systemd does not restart on), not by every deliver."""
    env = {**os.environ, "JUDGE_CONFIG": str(_config(tmp_path, default_method='"chess"'))}
    result = CliRunner().invoke(main, ["serve", "--once"], env=env)
    assert result.exit_code == 2
    assert "[judge] default_method: unknown method 'chess'" in result.output
